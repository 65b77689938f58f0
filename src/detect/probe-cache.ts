// The answers of binaries to detection's questions — anything asked of kata-install's own, the
// version of any other — kept beside the journal and keyed by the file's identity (device, inode,
// size, mtime, ctime). A node's no-op install (the DaemonSet pod restarting) then starts no process; a
// binary that changed in any way (a package upgrade writes a new file) is asked again. Only
// kata-install writes the cache, and only in an install that changed the node (a no-op install
// writes nothing).

import * as z from "zod/mini";
import { itemAt } from "../at.js";
import type { CommandResult } from "../host/command.js";
import type { Host } from "../host/host.js";
import { ownPath, readNoFollow } from "../host/own-place.js";
import { JOURNAL_DIR } from "../state/places.js";

export const PROBE_CACHE_FILE = "probes.json";

/** A cache of a few dozen answers is kilobytes; a larger file is not one kata-install wrote. */
const MAX_CACHE_BYTES = 4 << 20;

// The file's format: an entry that does not fit it is dropped (asked again), never fed to detection.
const EntrySchema = z.object({
  identity: z.string(),
  result: z.object({
    ok: z.boolean(),
    exitCode: z.nullable(z.number()),
    stdout: z.string(),
    stderr: z.string(),
    timedOut: z.boolean(),
    reason: z.string(),
  }),
});
type Entry = z.infer<typeof EntrySchema>;

export class ProbeCache {
  /** Something was asked that the cache did not know. */
  dirty = false;
  private readonly used = new Set<string>();

  constructor(
    readonly host: Host,
    /** Host path of the install prefix: commands under it are the ones cached. */
    readonly prefix: string,
    private readonly entries: Record<string, Entry> = {},
  ) {}

  /** Host path of the cache file. */
  get file(): string {
    return `${this.prefix}/${JOURNAL_DIR}/${PROBE_CACHE_FILE}`;
  }

  /** The cache as saved; empty when there is none or it cannot be read (it is only a cache). */
  static async load(host: Host, prefix: string): Promise<ProbeCache> {
    const empty = new ProbeCache(host, prefix);
    let json: unknown;
    try {
      // A place of kata-install's own: never read through a link (install refuses one, by name).
      const bytes = readNoFollow(
        await ownPath(host, prefix, empty.file, "file"),
        empty.file,
        MAX_CACHE_BYTES,
      );
      if (bytes === null) return empty;
      json = JSON.parse(bytes.toString("utf8"));
    } catch {
      return empty;
    }
    if (json === null || typeof json !== "object" || Array.isArray(json)) return empty;
    const entries: Record<string, Entry> = {};
    for (const [key, value] of Object.entries(json)) {
      const entry = EntrySchema.safeParse(value);
      if (entry.success) entries[key] = entry.data;
    }
    return new ProbeCache(host, prefix, entries);
  }

  /**
   * Kata's own binaries, whatever is asked; any other binary only for its version or its usage
   * (mkfs.erofs's options), which are the binary's alone (what qemu lists as devices also depends
   * on the modules installed beside it).
   */
  covers(command: string, args: readonly string[]): boolean {
    if (command.startsWith(`${this.prefix}/`)) return true;
    return args.length === 1 && ["--version", "version", "--help"].includes(itemAt(args, 0, "the argument"));
  }

  /** What makes this file this file; null when it is not there. */
  async identity(command: string): Promise<string | null> {
    const st = await this.host.stat(command);
    // ctime too: a binary rewritten in place with its mtime set back still has a new ctime.
    return st === null ? null : `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
  }

  get(key: string, identity: string): CommandResult | null {
    const entry = this.entries[key];
    if (entry?.identity !== identity) return null;
    this.used.add(key);
    return entry.result;
  }

  /** Not a timeout or a process that did not start: those may pass (a busy node). */
  set(key: string, identity: string, result: CommandResult): void {
    if (result.timedOut || result.exitCode === null) return;
    this.entries[key] = { identity, result };
    this.used.add(key);
    this.dirty = true;
  }

  /** The same answers, none of them used yet: what a new pass over the node keeps. */
  renewed(): ProbeCache {
    return new ProbeCache(this.host, this.prefix, { ...this.entries });
  }

  /** The answers used or learnt since loading: those of binaries that are gone are dropped. */
  serialize(): string {
    const kept = Object.fromEntries([...this.used].sort().map((key) => [key, this.entries[key]]));
    return `${JSON.stringify(kept, null, 2)}\n`;
  }
}
