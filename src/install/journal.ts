// The journal: what kata-install changed on this node and what was there before, so that an
// uninstall restores every file byte for byte, and a transaction cut short (kill -9) is rolled
// back by the next run. It lives under the install prefix, in .install/.
//
//   journal.json   this record, replaced atomically at every step
//   original/N     the node's own bytes of a file, from before kata-install first touched it
//   txn/N          a file's bytes from before the running transaction, for rolling it back
import { randomUUID } from "node:crypto";
import * as z from "zod/mini";
import { JOURNAL_DIR } from "../detect/kata.js";
import { UserError } from "../errors.js";
import type { Host } from "../host/host.js";
import { type Installed, NOTHING_INSTALLED } from "../render/render.js";
import { keyPath } from "../schema.js";
import { atomicWrite, ensureParents, type FileMeta, readFile } from "./fs-ops.js";

export const JOURNAL_VERSION = 1;

// The journal's format, as a schema: loaded documents are checked against it, and the types below
// are derived from it, so the file and the code cannot drift apart. Fields added after version 1
// are optional: a journal an earlier kata-install wrote still loads.

const PlanActionSchema = z.object({
  kind: z.enum(["pull-artifact", "restart-runtime", "reload-runtime", "take-over"]),
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
  /** The journal's files and directories as they were when the transaction began. */
  before: z.object({ files: z.record(z.string(), FileRecordSchema), dirs: z.array(z.string()) }),
  steps: z.array(StepSchema),
});
export type Transaction = z.infer<typeof TransactionSchema>;

/** The artifact files in place: which version is current, of which artifacts, and our links. */
const ArtifactsRecordSchema = z.object({
  version: z.nullable(z.string()),
  names: z.array(z.string()),
  links: z.array(z.string()),
  /** Versions of ours switched away from, to remove (absent in journals written before it). */
  retired: z.optional(z.array(z.string())),
  /**
   * The release's meta image that version was installed from (its digest in the source): a plan
   * against that same image reads the release's configuration from the node, not the image.
   */
  meta: z.optional(z.object({ version: z.string(), digest: z.string() })),
});
export type ArtifactsRecord = z.infer<typeof ArtifactsRecordSchema>;

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

const JournalSchema = z.object({
  version: z.literal(JOURNAL_VERSION),
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
    json = JSON.parse(text);
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

export class JournalStore {
  constructor(
    readonly host: Host,
    /** Host path of the .install directory. */
    readonly dir: string,
  ) {}

  get file(): string {
    return `${this.dir}/journal.json`;
  }

  async load(): Promise<Journal | null> {
    const found = await readFile(this.host, this.file);
    if (found === null) return null;
    return parseJournal(this.file, found.bytes.toString("utf8"));
  }

  async save(journal: Journal): Promise<void> {
    await this.saveAt(this.dir, journal);
  }

  /** Write the journal into `dir` (a host path): its own directory, or the one it is born in. */
  async saveAt(dir: string, journal: Journal): Promise<void> {
    await atomicWrite(this.host, `${dir}/journal.json`, `${JSON.stringify(journal, null, 2)}\n`, ROOT_ONLY);
  }

  /** Save a file's bytes under original/ or txn/; returns the name to record. */
  async keep(kind: "original" | "txn", bytes: Buffer): Promise<string> {
    const name = `${kind}/${randomUUID()}`;
    await ensureParents(this.host, `${this.dir}/${name}`);
    await atomicWrite(this.host, `${this.dir}/${name}`, bytes, ROOT_ONLY);
    return name;
  }

  async bytesOf(name: string): Promise<Buffer> {
    const found = await readFile(this.host, `${this.dir}/${name}`);
    if (found === null) throw new Error(`${this.dir}/${name}: a saved copy is missing from the journal`);
    return found.bytes;
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
  };
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

/** Backups hold the node's files, some of them private: only root reads them. */
const ROOT_ONLY: FileMeta = { mode: 0o600, uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
