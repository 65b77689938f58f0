// kata-install's own places — the journal directory and what is in it, versions/, `current`, the
// staging directories, the lock — are looked at without following links. Their base (the install
// prefix, the lock's directory) is resolved through the host like any host path: a link there is
// the admin's choice. Below it, every component is lstat()ed: a directory on the way, and at the end
// nothing or the kind kata-install makes there. A link, a FIFO, a device or a file where a directory
// should be is refused by name before anything is read, written or deleted through it: with
// `.install -> ../..`, an uninstall deleting "its" journal directory would delete the host.
import fs from "node:fs";
import path from "node:path";
import { HostError, hostError } from "../errors.js";
import { readBounded } from "../read-bounded.js";
import { type Host, normaliseHostPath } from "./host.js";

export type OwnKind = "dir" | "file" | "link";

/** A place of kata-install's own holds something it did not make there. */
export class OwnPlaceError extends HostError {
  constructor(
    /** What is where, in a few words ("/opt/kata/.install is a symbolic link (to ../..), …"). */
    readonly found: string,
  ) {
    super(
      `${found}: it reads, writes and deletes nothing through it; move it away (it is not kata-install's), then run kata-install again`,
    );
  }
}

const KIND_NAME: Record<OwnKind, string> = {
  dir: "a directory",
  file: "a regular file",
  link: "a symbolic link",
};

/** What `st` is, as a message says it ("a symbolic link (to ../..)"). */
export function describeEntry(st: fs.Stats, real: string): string {
  if (st.isSymbolicLink()) {
    let target = "?";
    try {
      target = fs.readlinkSync(real);
    } catch {
      // gone meanwhile: the link is still what was found
    }
    return `a symbolic link (to ${target})`;
  }
  if (st.isDirectory()) return "a directory";
  if (st.isFile()) return "a regular file";
  if (st.isFIFO()) return "a FIFO";
  if (st.isSocket()) return "a socket";
  if (st.isCharacterDevice() || st.isBlockDevice()) return "a device";
  return "not a regular file";
}

function isKind(st: fs.Stats, kind: OwnKind): boolean {
  return kind === "dir" ? st.isDirectory() : kind === "file" ? st.isFile() : st.isSymbolicLink();
}

export function ownPlaceError(shown: string, st: fs.Stats, real: string, kind: OwnKind): OwnPlaceError {
  return new OwnPlaceError(
    `${shown} is ${describeEntry(st, real)}, where kata-install keeps ${KIND_NAME[kind]} of its own`,
  );
}

/**
 * Where `hostPath`, a place of kata-install's own below `base`, lives on this machine; refused
 * (OwnPlaceError) when a component below `base` is not a directory, or the last one is there and
 * not `kind`. A path whose first missing component is reached is returned as it will be made.
 */
export async function ownPath(host: Host, base: string, hostPath: string, kind: OwnKind): Promise<string> {
  const clean = normaliseHostPath(hostPath);
  const root = normaliseHostPath(base);
  const rel = path.posix.relative(root, clean);
  if (rel.startsWith("..") || path.posix.isAbsolute(rel))
    throw new Error(`${clean} is not below ${root}: not a place of kata-install's own`);
  let real = await host.resolve(root);
  let shown = root;
  const parts = rel === "" ? [] : rel.split("/");
  for (const [i, part] of parts.entries()) {
    real = path.join(real, part);
    shown = path.posix.join(shown, part);
    const st = fs.lstatSync(real, { throwIfNoEntry: false });
    if (st === undefined) return path.join(real, ...parts.slice(i + 1));
    const want = i === parts.length - 1 ? kind : "dir";
    if (!isKind(st, want)) throw ownPlaceError(shown, st, real, want);
  }
  return real;
}

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;

/**
 * A regular file's bytes, read without following a link at `real` and without blocking on a FIFO
 * (refused, as a device is, by what the opened file is); null when there is none. At most
 * `maxBytes`: a larger file is refused, not read.
 */
export function readNoFollow(real: string, shown: string, maxBytes: number): Buffer | null {
  let fd: number;
  try {
    fd = fs.openSync(real, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return null;
    const st = fs.lstatSync(real, { throwIfNoEntry: false });
    if (code === "ELOOP" && st) throw ownPlaceError(shown, st, real, "file");
    throw hostError(`cannot read ${shown}`, error);
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw ownPlaceError(shown, st, real, "file");
    if (st.size > maxBytes)
      throw new HostError(
        `${shown} is ${st.size} bytes, more than kata-install ever writes there (${maxBytes}): it is not kata-install's; move it away, then run kata-install again`,
      );
    const bytes = readBounded(fd, maxBytes);
    if (bytes === null) throw new HostError(`${shown} is larger than ${maxBytes} bytes: refused`);
    return bytes;
  } finally {
    fs.closeSync(fd);
  }
}

export { createExclusive, tempName } from "./exclusive.js";

/** The names in the directory `real`; none when it cannot be listed (absent, or not a directory). */
export function namesIn(real: string): string[] {
  try {
    return fs.readdirSync(real);
  } catch {
    return [];
  }
}

/** Make the directory `real` (one level); one already there must be a directory, not a link. */
export function mkdirOwn(real: string, shown: string): boolean {
  try {
    fs.mkdirSync(real, { mode: 0o755 });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw hostError(`cannot create ${shown}`, error);
    const st = fs.lstatSync(real);
    if (!st.isDirectory()) throw ownPlaceError(shown, st, real, "dir");
    return false;
  }
}

/**
 * Remove a directory tree of kata-install's own: `real` must be a directory (checked here, not
 * followed); inside it, links are removed as links (never what they point at).
 */
export function removeOwnTree(real: string, shown: string): void {
  const st = fs.lstatSync(real, { throwIfNoEntry: false });
  if (st === undefined) return;
  if (!st.isDirectory()) throw ownPlaceError(shown, st, real, "dir");
  try {
    fs.rmSync(real, { recursive: true, force: true });
  } catch (error) {
    throw hostError(`cannot remove ${shown}`, error);
  }
}
