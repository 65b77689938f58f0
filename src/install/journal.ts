// The journal: what kata-install changed on this node and what was there before, so that an
// uninstall restores every file byte for byte, and a transaction cut short (kill -9) is rolled
// back by the next run. It lives under the install prefix, in .install/.
//
//   journal.json   this record, replaced atomically at every step
//   original/N     the node's own bytes of a file, from before kata-install first touched it
//   txn/N          a file's bytes from before the running transaction, for rolling it back
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import * as z from "zod/mini";
import { CarriedSettings } from "../detect/kata.js";
import { PROBE_CACHE_FILE } from "../detect/probe-cache.js";
import { hostError, UserError } from "../errors.js";
import { type FileMeta, MAX_FILE_BYTES, tempOf, writeAtomically } from "../host/fs-ops.js";
import type { Host } from "../host/host.js";
import { mkdirOwn, namesIn, type OwnKind, ownPath, readNoFollow } from "../host/own-place.js";
import { fromJson, toJson } from "../json-text.js";
import { PLAN_ACTION_KINDS } from "../plan-schema.js";
import { keyPath } from "../schema.js";
import { type ArtifactsRecord, ArtifactsRecordSchema } from "../state/artifacts-record.js";
import { type Installed, NOTHING_INSTALLED } from "../state/installed.js";
import { JOURNAL_DIR } from "../state/places.js";

export const JOURNAL_VERSION = 1;

// The journal's format, as a schema: loaded documents are checked against it, and the types below
// are derived from it, so the file and the code cannot drift apart. Fields added after version 1
// are optional: a journal an earlier kata-install wrote still loads.

const PlanActionSchema = z.object({
  kind: z.enum(PLAN_ACTION_KINDS),
  target: z.string(),
  reason: z.string(),
});

const FileMetaSchema = { mode: z.number(), uid: z.number(), gid: z.number() };

/**
 * A path's earlier state: absent, saved bytes (by their name in original/ or txn/) and metadata,
 * or a symbolic link's target.
 */
const SavedSchema = z.union([
  z.literal("absent"),
  z.object({ backup: z.string(), ...FileMetaSchema }),
  z.object({ link: z.string() }),
]);
export type Saved = z.infer<typeof SavedSchema>;

/** The saved bytes' name in original/ or txn/, if the state is a file's. */
export function backupOf(saved: Saved): string | null {
  return saved !== "absent" && "backup" in saved ? saved.backup : null;
}

const FileRecordSchema = z.object({
  /** Before kata-install ever touched it. */
  original: SavedSchema,
  /** sha256 of what kata-install last wrote: a file that no longer hashes so was edited by someone. */
  afterHash: z.string(),
  /** The admin's own file with a block of ours in it (containerd 1.x config.toml). */
  editedInPlace: z.boolean(),
  /** That block's suffix (MULTI_INSTALL_SUFFIX); absent in journals written before it: "". */
  block: z.optional(z.string()),
  role: z.enum(["kata", "runtime"]),
  /** A symbolic link kata-install manages (afterHash: of its target); absent in older journals. */
  link: z.optional(z.boolean()),
});
export type FileRecord = z.infer<typeof FileRecordSchema>;

const StepSchema = z.object({ path: z.string(), pre: SavedSchema, createdDirs: z.array(z.string()) });
export type Step = z.infer<typeof StepSchema>;

const TransactionSchema = z.object({
  id: z.string(),
  /** The runtime was being restarted on the new files: rolling them back means restarting it again. */
  restarting: z.optional(z.boolean()),
  /**
   * systemd units of kata-install's (nydus's) restarted or stopped on this transaction's files:
   * rolling them back means doing it again on the files put back. Absent: none.
   */
  services: z.optional(z.array(z.string())),
  /** The journal's files and directories as they were when the transaction began. */
  before: z.object({ files: z.record(z.string(), FileRecordSchema), dirs: z.array(z.string()) }),
  steps: z.array(StepSchema),
});
export type Transaction = z.infer<typeof TransactionSchema>;

/** The artifact files in place: which version is current, of which artifacts, and our links. */

/** A switch of `current` under way: what to put back if it is cut short. */
const PendingSwitchSchema = z.object({
  previous: z.nullable(z.string()),
  previousNames: z.array(z.string()),
  next: z.string(),
  createdLinks: z.array(z.string()),
  createdDirs: z.array(z.string()),
  /**
   * A takeover: another installer's entries of the prefix, moved in one piece into
   * versions/<id> (put back if the switch is rolled back, removed when it is committed).
   */
  movedAside: z.optional(z.object({ id: z.string(), names: z.array(z.string()) })),
  /**
   * The previous version's record of where it came from (its meta image and artifacts' digests),
   * put back with it: left as the next version's, a later plan would take the next release for
   * installed and reuse or skip what it never got. `previousOrigin` absent (a journal of an
   * earlier kata-install): none is put back, and everything is pulled again.
   */
  previousOrigin: z.optional(
    z.object({
      meta: z.optional(z.object({ version: z.string(), digest: z.string() })),
      identities: z.optional(z.record(z.string(), z.string())),
    }),
  ),
});
export type PendingSwitch = z.infer<typeof PendingSwitchSchema>;

/** A version being staged: where, and the directories made for it, to remove if cut short. */
const StagingSchema = z.object({
  /** The .partial directory the files stream into. */
  dir: z.string(),
  /** The version directory it becomes when complete. */
  version: z.string(),
  createdDirs: z.array(z.string()),
});
export type Staging = z.infer<typeof StagingSchema>;

/** A takeover: what it carried of kata-deploy's (detect/kata.ts). */
const CarriedSchema = CarriedSettings;

const JournalSchema = z.object({
  version: z.literal(JOURNAL_VERSION),
  /** What a takeover carried over from kata-deploy (absent: none, or a journal written before it). */
  carried: z.optional(CarriedSchema),
  /**
   * The shims the last install that changed the node was given by --shims (a flag is gone with
   * its run, where SHIMS and the overrides file stay): a later plan without a pin says so. Absent:
   * that install had no --shims.
   */
  flagShims: z.optional(z.array(z.string())),
  /** How to restart the runtime whose files were changed (uninstall restarts it the same way). */
  runtime: z.nullable(z.object({ action: PlanActionSchema, socket: z.nullable(z.string()) })),
  /**
   * The runtime has not loaded its configuration as it is on disk (a restart failed, or a run was
   * cut short around one): the plan shows it and the next install restarts it. Absent: none.
   */
  pendingRestart: z.optional(z.nullable(PlanActionSchema)),
  artifacts: ArtifactsRecordSchema,
  pendingSwitch: z.nullable(PendingSwitchSchema),
  /** Absent in journals written before staging was journalled: read as null. */
  staging: z.optional(z.nullable(StagingSchema)),
  files: z.record(z.string(), FileRecordSchema),
  /** Directories kata-install created, to remove again when empty. */
  dirs: z.array(z.string()),
  transaction: z.nullable(TransactionSchema),
});
export type Journal = z.infer<typeof JournalSchema>;

/** A journal file this kata-install cannot read: it says which key, and changes nothing. */
export class JournalError extends UserError {}

/** Parse a journal's text: the document, checked, or an error naming the file and each bad key. */
export function parseJournal(file: string, text: string): Journal {
  let json: unknown;
  try {
    json = fromJson(text);
  } catch (error) {
    throw new JournalError(`${file}: not a journal (invalid JSON: ${(error as Error).message})`);
  }
  const version = (json as { version?: unknown } | null)?.version;
  if (version !== JOURNAL_VERSION)
    throw new JournalError(
      `${file}: journal version ${String(version)} is not one this kata-install reads (${JOURNAL_VERSION})`,
    );
  const result = JournalSchema.safeParse(json);
  if (result.success) return result.data;
  throw new JournalError(
    `${file}: not a journal this kata-install reads: ${result.error.issues.map((i) => `${keyPath(i.path)}: ${i.message}`).join("; ")}`,
  );
}

/** How a saved copy is named in original/ or txn/ (keep()): anything else is no copy of ours. */
const COPY_NAME = /^(original|txn)\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The largest journal kata-install reads: thousands of records are well under it. */
const MAX_JOURNAL_BYTES = 16 << 20;

/**
 * The journal directory, <prefix>/.install: its files are kata-install's own places, every one
 * reached without following a link (own-place.ts), and only the names kata-install gives are ever
 * removed from it.
 */
export class JournalStore {
  constructor(
    readonly host: Host,
    /** Host path of the .install directory. */
    readonly dir: string,
  ) {}

  get file(): string {
    return `${this.dir}/journal.json`;
  }

  /** The install prefix the journal directory is in: links above it are the admin's. */
  get prefix(): string {
    return path.posix.dirname(this.dir);
  }

  /** The real path of a place of ours under the prefix, refused if a link or odd file is on the way. */
  own(hostPath: string, kind: OwnKind): Promise<string> {
    return ownPath(this.host, this.prefix, hostPath, kind);
  }

  async load(): Promise<Journal | null> {
    const bytes = readNoFollow(await this.own(this.file, "file"), this.file, MAX_JOURNAL_BYTES);
    if (bytes === null) return null;
    return parseJournal(this.file, bytes.toString("utf8"));
  }

  async save(journal: Journal): Promise<void> {
    await this.saveAt(this.dir, journal);
  }

  /** Write the journal into `dir` (a host path): its own directory, or the one it is born in. */
  async saveAt(dir: string, journal: Journal): Promise<void> {
    const file = `${dir}/journal.json`;
    // The directory it is born in is a fresh one createDirsWith() just made.
    const real = dir === this.dir ? await this.own(file, "file") : await this.host.resolve(file);
    await writeAtomically(real, file, `${toJson(journal, 2)}\n`, rootOnly());
  }

  /** Save a file's bytes under original/ or txn/; returns the name to record. */
  async keep(kind: "original" | "txn", bytes: Buffer): Promise<string> {
    const name = `${kind}/${randomUUID()}`;
    mkdirOwn(await this.own(`${this.dir}/${kind}`, "dir"), `${this.dir}/${kind}`);
    await writeAtomically(
      await this.own(`${this.dir}/${name}`, "file"),
      `${this.dir}/${name}`,
      bytes,
      rootOnly(),
    );
    return name;
  }

  async bytesOf(name: string): Promise<Buffer> {
    if (!COPY_NAME.test(name))
      throw new JournalError(`${this.file}: "${name}" is not the name of a copy kata-install saved`);
    const where = `${this.dir}/${name}`;
    const bytes = readNoFollow(await this.own(where, "file"), where, MAX_FILE_BYTES);
    if (bytes === null)
      throw new JournalError(`${where}: a saved copy is missing from the journal; it cannot be restored`);
    return bytes;
  }

  /**
   * Remove the copies in original/ or txn/ that `keep` does not name, and the temp files of copies
   * a kill cut short, then the directory once empty.
   */
  async discardCopies(kind: "original" | "txn", keep: ReadonlySet<string> = new Set()): Promise<void> {
    const where = `${this.dir}/${kind}`;
    const real = await this.own(where, "dir");
    const names = namesIn(real);
    for (const name of names) {
      const copy = `${kind}/${name}`;
      // A copy not kept, or the temp file of one a kill cut short before its rename.
      const temp = tempOf(name);
      const ours = COPY_NAME.test(copy)
        ? !keep.has(copy)
        : temp !== null && COPY_NAME.test(`${kind}/${temp}`);
      if (!ours) continue;
      const st = fs.lstatSync(path.join(real, name), { throwIfNoEntry: false });
      // Only what keep() makes: a regular file (a link is removed as a link, never followed).
      if (st?.isFile() || st?.isSymbolicLink()) fs.rmSync(path.join(real, name), { force: true });
    }
    try {
      fs.rmdirSync(real);
    } catch {
      // not empty (a copy still recorded, or something not ours): left
    }
  }

  /**
   * Everything of the journal's in its directory: the journal first (from then on nothing is
   * installed), then the copies, the probe cache and temp files of ours. The directory itself goes
   * with the directories the journal made (removeEmptyDirs), and only when nothing else is in it.
   */
  async discard(): Promise<void> {
    const real = await this.own(this.dir, "dir");
    try {
      fs.rmSync(path.join(real, "journal.json"), { force: true });
      await this.discardCopies("original");
      await this.discardCopies("txn");
      fs.rmSync(path.join(real, PROBE_CACHE_FILE), { force: true });
      for (const name of namesIn(real))
        if (["journal.json", PROBE_CACHE_FILE].includes(tempOf(name) ?? ""))
          fs.rmSync(path.join(real, name), { force: true });
    } catch (error) {
      throw hostError(`cannot remove ${this.dir}`, error);
    }
  }
}

/** The journal of the install under `prefix`. */
export function journalFor(host: Host, prefix: string): JournalStore {
  return new JournalStore(host, `${prefix}/${JOURNAL_DIR}`);
}

/**
 * What render needs to know of an earlier install under `dir` (the .install directory): the
 * artifacts in place, and a restart still owed.
 */
export async function installedState(store: JournalStore): Promise<Installed> {
  const journal = await store.load();
  if (journal === null) return NOTHING_INSTALLED;
  // A run cut short while the runtime restarted: install rolls its files back first, and the
  // runtime will owe a restart then, whatever this plan changes.
  const cutShortRestart = journal.transaction?.restarting ? (journal.runtime?.action ?? null) : null;
  return {
    artifacts: new Set(journal.artifacts.version ? journal.artifacts.names : []),
    pendingRestart: journal.pendingRestart ?? cutShortRestart,
    files: new Map(
      Object.entries(journal.files)
        .filter(([, record]) => record.original === "absent")
        .map(([path, record]) => [path, record.link === true]),
    ),
    written: new Map(
      Object.entries(journal.files)
        .filter(([, record]) => !record.editedInPlace && record.block === undefined && record.link !== true)
        .map(([path, record]) => [path, record.afterHash]),
    ),
  };
}

/** A run cut short (killed, the power lost) left work to roll back: the next install or uninstall does it first. */
export function wasCutShort(journal: Journal): boolean {
  return journal.transaction !== null || journal.pendingSwitch !== null || (journal.staging ?? null) !== null;
}

export function emptyJournal(): Journal {
  return {
    version: JOURNAL_VERSION,
    runtime: null,
    artifacts: { version: null, names: [], links: [] },
    pendingSwitch: null,
    pendingRestart: null,
    staging: null,
    files: {},
    dirs: [],
    transaction: null,
  };
}

/**
 * Backups hold the node's files, some of them private: only root reads them. Asked of the running
 * process each time.
 */
function rootOnly(): FileMeta {
  return { mode: 0o600, uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
}

export type { ArtifactsRecord };
