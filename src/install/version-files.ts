// What a version directory (versions/<id>) holds of kata-install's: the entries its artifacts put
// there, listed in it (.kata-install-files) before it is renamed into place, so that the list and
// the version come and go together. Anything else in it is someone else's — an admin's tool put in
// /opt/kata/bin, a guest image in /opt/kata/share/kata-containers, both links into the current
// version — and removing the version (an upgrade's switch, uninstall) keeps it.
import fs from "node:fs";
import path from "node:path";
import { readNoFollow } from "../host/own-place.js";

/** The list's name, at the version directory's top, beside bin/, share/, … (never reached through a link of the prefix). */
export const VERSION_FILES = ".kata-install-files";

/**
 * Where `entry`, a host path in a version directory under `prefix`, was reached while that version
 * was current: through the prefix's links (bin/, share/kata-containers/, …), as `prefix/<rest>`.
 */
export function reachedAs(entry: string, prefix: string): string {
  const versions = `${prefix}/versions/`;
  if (!entry.startsWith(versions)) return entry;
  const rest = entry.slice(versions.length);
  const slash = rest.indexOf("/");
  return slash < 0 ? entry : `${prefix}/${rest.slice(slash + 1)}`;
}

/** Far more than any release's list: a larger file is not one of ours. */
const MAX_LIST_BYTES = 16 * 1024 * 1024;

/**
 * What makes a file the one kata-install wrote: its inode, size, mtime and ctime (a rewrite in
 * place changes them, even with its mtime set back: ctime cannot be). Compared, not the size alone,
 * before a file of a version is reused or called unchanged. An upgrade's own hard links and their
 * removal move ctime too: settleIdentities() records it again right after.
 */
export function identityOf(st: fs.Stats): string {
  return `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
}

export function writeVersionFiles(dir: string, entries: Iterable<string>): void {
  const sorted = [...entries].sort();
  const identities: Record<string, string> = {};
  for (const entry of sorted) {
    const st = fs.lstatSync(path.join(dir, entry), { throwIfNoEntry: false });
    if (st?.isFile()) identities[entry] = identityOf(st);
  }
  writeList(dir, sorted, identities);
}

function writeList(dir: string, entries: string[], identities: Record<string, string>): void {
  const text = `${JSON.stringify({ entries, identities }, null, 1)}\n`;
  fs.writeFileSync(path.join(dir, VERSION_FILES), text, { mode: 0o644 });
}

/** The list's identities updated for `entries` (files put back by a repair), the rest as they were. */
export function updateVersionIdentities(dir: string, entries: Iterable<string>): void {
  const doc = readList(dir);
  if (doc === null) return;
  const identities = { ...(doc.identities ?? {}) };
  for (const entry of entries) {
    const st = fs.lstatSync(path.join(dir, entry), { throwIfNoEntry: false });
    if (st?.isFile()) identities[entry] = identityOf(st);
  }
  writeList(dir, doc.entries, identities);
}

/**
 * After kata-install itself unlinked another name of files of the version at `dir` (the version
 * switched from, whose unchanged files it hard-linked in): the ctime of each file otherwise as
 * recorded (inode, size, mtime) is taken as it is now.
 */
export function settleIdentities(dir: string): void {
  const doc = readList(dir);
  if (doc?.identities === undefined) return;
  const identities = { ...doc.identities };
  const withoutCtime = (identity: string) => identity.split(":").slice(0, 3).join(":");
  let moved = false;
  for (const [entry, recorded] of Object.entries(identities)) {
    const st = fs.lstatSync(path.join(dir, entry), { throwIfNoEntry: false });
    if (!st?.isFile()) continue;
    const now = identityOf(st);
    if (now !== recorded && withoutCtime(now) === withoutCtime(recorded)) {
      identities[entry] = now;
      moved = true;
    }
  }
  if (moved) writeList(dir, doc.entries, identities);
}

/**
 * Each file's identity as kata-install wrote it, in the version at `dir`; null when the version
 * records none (written before identities were kept, or kata-deploy's tree taken over).
 */
export function versionIdentities(dir: string): Map<string, string> | null {
  const doc = readList(dir);
  return doc?.identities === undefined ? null : new Map(Object.entries(doc.identities));
}

function readList(dir: string): { entries: string[]; identities?: Record<string, string> } | null {
  let bytes: Buffer | null;
  try {
    bytes = readNoFollow(path.join(dir, VERSION_FILES), VERSION_FILES, MAX_LIST_BYTES);
  } catch {
    return null;
  }
  if (bytes === null) return null;
  try {
    const doc = JSON.parse(bytes.toString("utf8")) as { entries?: unknown; identities?: unknown };
    const { entries, identities } = doc;
    if (!Array.isArray(entries) || !entries.every((e) => typeof e === "string")) return null;
    const ids =
      identities !== null &&
      typeof identities === "object" &&
      Object.values(identities).every((v) => typeof v === "string")
        ? (identities as Record<string, string>)
        : undefined;
    return { entries, ...(ids ? { identities: ids } : {}) };
  } catch {
    return null;
  }
}

/**
 * The entries listed in the version at `dir` (its real path); null when it has none: a version
 * installed before the lists were kept, or kata-deploy's tree taken over, all of which is ours.
 */
export function versionFiles(dir: string): Set<string> | null {
  const doc = readList(dir);
  return doc === null ? null : new Set(doc.entries);
}

/**
 * What in the version at `dir` is not in `listed`, as paths relative to it, sorted: a file or link
 * of someone else's, or a directory that holds nothing listed (named once, not each entry in it).
 */
export function foreignEntries(dir: string, listed: ReadonlySet<string>): string[] {
  const ancestors = directoriesOf(listed);
  const out: string[] = [];
  const walk = (rel: string) => {
    let dirents: fs.Dirent[];
    try {
      dirents = fs.readdirSync(path.join(dir, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const dirent of dirents) {
      const entry = rel === "" ? dirent.name : `${rel}/${dirent.name}`;
      if (entry === VERSION_FILES) continue;
      if (dirent.isDirectory()) {
        if (ancestors.has(entry)) walk(entry);
        else out.push(entry);
      } else if (!listed.has(entry)) out.push(entry);
    }
  };
  walk("");
  return out.sort();
}

/**
 * Remove the version at `dir` (its real path): whole when nothing in it is someone else's (or it
 * has no list); else only what is listed, never through a link that replaced one of its
 * directories, then the directories of its own left empty (never one of someone else's, empty or
 * not), and what stayed is renamed to `keptAt` when given. The list goes last, after the rename:
 * a run killed before it finds the version as it was, list and all, and keeps the same again.
 * Returns what stayed, relative to the directory.
 */
export function removeVersionKeeping(dir: string, keptAt?: string): string[] {
  const listed = versionFiles(dir);
  const foreign = listed === null ? [] : foreignEntries(dir, listed);
  if (listed === null || foreign.length === 0) {
    fs.rmSync(dir, { recursive: true, force: true });
    return [];
  }
  // Compared real path to real path: the prefix itself may be reached through a link (/opt ->
  // /var/opt), which is the admin's choice; a link inside the version is not.
  const realDir = fs.realpathSync.native(dir);
  for (const entry of listed) {
    const at = path.join(dir, entry);
    const parent = path.dirname(at);
    try {
      if (fs.realpathSync.native(parent) !== path.dirname(path.join(realDir, entry))) continue;
      const st = fs.lstatSync(at, { throwIfNoEntry: false });
      // A directory where a file of ours was is someone else's now: it stays.
      if (st !== undefined && !st.isDirectory()) fs.rmSync(at, { force: true });
    } catch {
      // its directory is gone or unreadable: nothing of ours to remove there
    }
  }
  removeOwnEmptyDirs(dir, realDir, listed);
  if (keptAt !== undefined) fs.renameSync(dir, keptAt);
  fs.rmSync(path.join(keptAt ?? dir, VERSION_FILES), { force: true });
  return foreign;
}

/**
 * The directories on the way to the listed entries (relative paths), and those listed themselves:
 * an entry ending in "/" is a directory that was empty (kata-deploy's config.d/ with no drop-in).
 */
function directoriesOf(listed: ReadonlySet<string>): Set<string> {
  const out = new Set<string>();
  for (const entry of listed) {
    const file = entry.endsWith("/") ? `${entry.slice(0, -1)}/.` : entry;
    for (let at = path.posix.dirname(file); at !== "."; at = path.posix.dirname(at)) out.add(at);
  }
  return out;
}

/**
 * The directories that hold listed entries, deepest first, removed where empty; never one reached
 * through a link that replaced a directory of the version (`realDir`: the version's real path).
 */
function removeOwnEmptyDirs(dir: string, realDir: string, listed: ReadonlySet<string>): void {
  for (const rel of [...directoriesOf(listed)].sort((a, b) => b.length - a.length)) {
    const at = path.join(dir, rel);
    try {
      if (fs.realpathSync.native(path.dirname(at)) !== path.dirname(path.join(realDir, rel))) continue;
      if (fs.lstatSync(at).isDirectory()) fs.rmdirSync(at);
    } catch {
      // not empty (something of someone else's in it), or gone: it stays as it is
    }
  }
}
