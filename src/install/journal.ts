// The journal: what kata-install changed on this node and what was there before, so that an
// uninstall restores every file byte for byte, and a transaction cut short (kill -9) is rolled
// back by the next run. It lives under the install prefix, in .install/.
//
//   journal.json   this record, replaced atomically at every step
//   original/N     the node's own bytes of a file, from before kata-install first touched it
//   txn/N          a file's bytes from before the running transaction, for rolling it back
import { randomUUID } from "node:crypto";
import type { Host } from "../host/host.js";
import type { PlanAction } from "../render/changeset.js";
import { atomicWrite, ensureParents, type FileMeta, readFile } from "./fs-ops.js";

export const JOURNAL_VERSION = 1;

/**
 * A path's earlier state: absent, saved bytes (by their name in original/ or txn/) and metadata,
 * or a symbolic link's target.
 */
export type Saved = "absent" | ({ backup: string } & FileMeta) | { link: string };

/** The saved bytes' name in original/ or txn/, if the state is a file's. */
export function backupOf(saved: Saved): string | null {
  return saved !== "absent" && "backup" in saved ? saved.backup : null;
}

export interface FileRecord {
  /** Before kata-install ever touched it. */
  original: Saved;
  /** sha256 of what kata-install last wrote: a file that no longer hashes so was edited by someone. */
  afterHash: string;
  /** The admin's own file with a block of ours in it (containerd 1.x config.toml). */
  editedInPlace: boolean;
  /** That block's suffix (MULTI_INSTALL_SUFFIX); absent in journals written before it: "". */
  block?: string;
  role: "kata" | "runtime";
  /** A symbolic link kata-install manages (afterHash: of its target); absent in older journals. */
  link?: boolean;
}

export interface Step {
  path: string;
  pre: Saved;
  createdDirs: string[];
}

export interface Transaction {
  id: string;
  /** The runtime was being restarted on the new files: rolling them back means restarting it again. */
  restarting?: boolean;
  /** The journal's files and directories as they were when the transaction began. */
  before: { files: Record<string, FileRecord>; dirs: string[] };
  steps: Step[];
}

/** The artifact files in place: which version is current, of which artifacts, and our links. */
export interface ArtifactsRecord {
  version: string | null;
  names: string[];
  links: string[];
  /** Versions of ours switched away from, to remove (absent in journals written before it). */
  retired?: string[];
}

/** A switch of `current` under way: what to put back if it is cut short. */
export interface PendingSwitch {
  previous: string | null;
  previousNames: string[];
  next: string;
  createdLinks: string[];
  createdDirs: string[];
  /**
   * A takeover: another installer's entries of the prefix, moved in one piece into
   * versions/<id> (put back if the switch is rolled back, removed when it is committed).
   */
  movedAside?: { id: string; names: string[] };
}

/** A version being staged: where, and the directories made for it, to remove if cut short. */
export interface Staging {
  /** The .partial directory the files stream into. */
  dir: string;
  /** The version directory it becomes when complete. */
  version: string;
  createdDirs: string[];
}

export interface Journal {
  version: typeof JOURNAL_VERSION;
  /** How to restart the runtime whose files were changed (uninstall restarts it the same way). */
  runtime: { action: PlanAction; socket: string | null } | null;
  /**
   * The runtime has not loaded its configuration as it is on disk (a restart failed, or a run was
   * cut short around one): the plan shows it and the next install restarts it. Absent: none.
   */
  pendingRestart?: PlanAction | null;
  artifacts: ArtifactsRecord;
  pendingSwitch: PendingSwitch | null;
  /** Absent in journals written before staging was journalled: read as null. */
  staging?: Staging | null;
  files: Record<string, FileRecord>;
  /** Directories kata-install created, to remove again when empty. */
  dirs: string[];
  transaction: Transaction | null;
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
    const journal = JSON.parse(found.bytes.toString("utf8")) as Journal;
    if (journal.version !== JOURNAL_VERSION)
      throw new Error(
        `${this.file}: journal version ${journal.version} is not one this kata-install reads (${JOURNAL_VERSION})`,
      );
    return journal;
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
