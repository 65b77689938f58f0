// The only writes to the host. Every path is a host path, resolved through the Host (so a link
// inside the host is followed inside it); files are replaced atomically: a temp file in the same
// directory, fsync, rename, then fsync of the directory, with the mode and owner asked for.
import fs from "node:fs";
import path from "node:path";
import { itemAt } from "../at.js";
import { HostError, hostError } from "../errors.js";
import { readBounded } from "../read-bounded.js";
import { crashPoint } from "./crash-point.js";
import { fault } from "./fault.js";
import { type Host, notRegular } from "./host.js";
import { createExclusive, mkdirOwn, namesIn, tempName } from "./own-place.js";

export interface FileMeta {
  mode: number;
  uid: number;
  gid: number;
}

/** The largest file kata-install reads back or saves a copy of (a runtime's configuration, ours). */
export const MAX_FILE_BYTES = 64 << 20;

/** A regular file's bytes and metadata, or null when it does not exist. */
export async function readFile(
  host: Host,
  hostPath: string,
): Promise<{ bytes: Buffer; meta: FileMeta } | null> {
  let fd: number;
  try {
    const file = await host.resolve(hostPath);
    // By type before it is opened: a FIFO would block, a device read without end.
    const stats = fs.statSync(file);
    if (!stats.isFile())
      throw new HostError(
        `${hostPath} ${stats.isDirectory() ? "is a directory" : (notRegular(stats) ?? "is not a regular file")}`,
      );
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw hostError(`cannot read ${hostPath}`, error);
  }
  try {
    const stats = fs.fstatSync(fd);
    if (!stats.isFile()) throw new HostError(`${hostPath} ${notRegular(stats) ?? "is not a regular file"}`);
    if (stats.size > MAX_FILE_BYTES)
      throw new HostError(
        `${hostPath} is ${stats.size} bytes, more than kata-install reads (${MAX_FILE_BYTES}): not a configuration file it can change`,
      );
    const bytes = readBounded(fd, MAX_FILE_BYTES);
    if (bytes === null) throw new HostError(`${hostPath} is larger than ${MAX_FILE_BYTES} bytes: refused`);
    return { bytes, meta: { mode: stats.mode & 0o7777, uid: stats.uid, gid: stats.gid } };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * What a journalled path holds, as the journal hashes it: a file's bytes, or for a link of ours its
 * target (as bytes; a link has no metadata of its own). Null when nothing is there. Where a link
 * was and a file is now, the file's bytes: they match no target, so the path reads as changed.
 */
export async function readEntry(
  host: Host,
  hostPath: string,
  link: boolean,
): Promise<{ bytes: Buffer; meta: FileMeta } | null> {
  if (!link) return readFile(host, hostPath);
  const at = await host.resolveLink(hostPath);
  const stats = fs.lstatSync(at, { throwIfNoEntry: false });
  if (stats === undefined) return null;
  if (!stats.isSymbolicLink()) return readFile(host, hostPath);
  return { bytes: Buffer.from(fs.readlinkSync(at)), meta: { mode: 0o777, uid: 0, gid: 0 } };
}

/** Point a link at `target`, atomically: a link beside it, renamed over it. */
export async function atomicLink(host: Host, hostPath: string, target: string): Promise<void> {
  const at = await host.resolveLink(hostPath);
  const dir = path.dirname(at);
  // symlink() never follows, and fails on a name already there: a planted one included.
  const temp = path.join(dir, tempName(TEMP_PREFIX(path.basename(at))));
  let made = false;
  try {
    fault("write", hostPath);
    fs.symlinkSync(target, temp);
    made = true;
    fault("rename", hostPath);
    fs.renameSync(temp, at);
    syncDir(dir);
  } catch (error) {
    if (made) fs.rmSync(temp, { force: true });
    throw hostError(`cannot link ${hostPath}`, error);
  }
}

/** The directories, outermost first, that creating `dir` would make. */
export async function missingDirs(host: Host, dir: string): Promise<string[]> {
  const missing: string[] = [];
  for (let d = dir; d !== "/" && !(await host.exists(d)); d = path.posix.dirname(d)) missing.unshift(d);
  return missing;
}

export async function ensureParents(host: Host, hostPath: string): Promise<string[]> {
  const created: string[] = [];
  for (const d of await missingDirs(host, path.posix.dirname(hostPath))) {
    try {
      fs.mkdirSync(await host.resolve(d), { mode: 0o755 });
    } catch (error) {
      // Made by someone else meanwhile (a second installer racing for the lock): not ours.
      if ((error as NodeJS.ErrnoException).code === "EEXIST") continue;
      throw error;
    }
    created.push(d);
  }
  return created;
}

export async function atomicWrite(
  host: Host,
  hostPath: string,
  bytes: Buffer | string,
  meta: FileMeta,
): Promise<void> {
  const file = await host.resolve(hostPath);
  await writeAtomically(file, hostPath, bytes, meta);
}

/**
 * The write behind atomicWrite, at a real path: a temp file beside it made with O_EXCL and never
 * through a link (a link planted at a temp name cannot carry the bytes elsewhere), then a rename,
 * which replaces the name itself, a link there included, never what it points at.
 */
export async function writeAtomically(
  file: string,
  hostPath: string,
  bytes: Buffer | string,
  meta: FileMeta,
): Promise<void> {
  const dir = path.dirname(file);
  const temp = path.join(dir, tempName(TEMP_PREFIX(path.basename(file))));
  let made = false;
  try {
    const fd = createExclusive(temp, meta.mode);
    made = true;
    try {
      fault("write", hostPath);
      fs.writeFileSync(fd, bytes);
      fs.fchmodSync(fd, meta.mode);
      fs.fchownSync(fd, meta.uid, meta.gid);
      fault("fsync", hostPath);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fault("rename", hostPath);
    fs.renameSync(temp, file);
    syncDir(dir);
  } catch (error) {
    // A write that failed (a full disk) leaves no temp file behind, and says where it failed.
    if (made) fs.rmSync(temp, { force: true });
    throw hostError(`cannot write ${hostPath}`, error);
  }
}

const TEMP_PREFIX = (name: string) => `.${name}.kata-install-`;

/** The file name whose temp `name` is (writeAtomically's ".<file>.kata-install-…"); null for any other name. */
export function tempOf(name: string): string | null {
  const at = name.indexOf(".kata-install-", 1);
  return name.startsWith(".") && at > 1 ? name.slice(1, at) : null;
}

/** Temp files a killed writer left beside `hostPath` (recovery removes them). */
export async function removeLeftoverTemps(host: Host, hostPath: string): Promise<void> {
  const file = await host.resolve(hostPath);
  const dir = path.dirname(file);
  if (!fs.existsSync(dir)) return;
  const prefix = TEMP_PREFIX(path.basename(file));
  for (const name of fs.readdirSync(dir))
    if (name.startsWith(prefix)) fs.rmSync(path.join(dir, name), { force: true });
}

export async function removeFile(host: Host, hostPath: string): Promise<void> {
  // The entry itself: a link goes, never the file it points at.
  const file = await host.resolveLink(hostPath);
  const st = fs.lstatSync(file, { throwIfNoEntry: false });
  if (st === undefined) return; // nothing there to remove
  if (st.isDirectory())
    throw new HostError(
      `${hostPath} is a directory now, where kata-install wrote a file: it is not kata-install's to remove; move it away, then run kata-install again`,
    );
  try {
    fs.unlinkSync(file);
    syncDir(path.dirname(file));
  } catch (error) {
    throw hostError(`cannot remove ${hostPath}`, error);
  }
}

/**
 * Remove directories this install created, innermost first, when they are empty. Each is looked
 * at itself, not followed: one that became a link (or anything but a directory) is left, as is one
 * that holds something.
 */
export async function removeEmptyDirs(host: Host, dirs: string[]): Promise<string[]> {
  const left: string[] = [];
  for (const dir of [...dirs].sort((a, b) => b.length - a.length)) {
    let real: string;
    try {
      real = await host.resolveLink(dir);
    } catch {
      continue; // its parent cannot be reached: nothing of it to remove
    }
    const st = fs.lstatSync(real, { throwIfNoEntry: false });
    if (st === undefined) continue;
    if (!st.isDirectory()) {
      left.push(dir);
      continue;
    }
    try {
      fs.rmdirSync(real);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOTEMPTY" || code === "EEXIST") left.push(dir);
      else if (code !== "ENOENT") throw hostError(`cannot remove ${dir}`, error);
    }
  }
  return left;
}

export function syncDir(dir: string): void {
  // A rename is durable only once the directory that holds it is flushed.
  const fd = fs.openSync(dir, "r");
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** The name a directory chain has while it is being made (see createDirsWith). */
const NEW_DIRS_PREFIX = ".kata-install-new-";

/**
 * Make the missing directories `dirs` (outermost first, as missingDirs() gives them) with `fill`
 * writing into the innermost one, all by one rename: until it, they exist only under a temporary
 * name beside the outermost, so a kill leaves either all of them with their content or none
 * (bar that temporary, which removeUnbornDirs() takes away).
 */
export async function createDirsWith(
  host: Host,
  dirs: string[],
  fill: (innermost: string) => Promise<void>,
): Promise<void> {
  const top = itemAt(dirs, 0, "the outermost directory");
  const inner = itemAt(dirs, -1, "the innermost directory").slice(top.length);
  const parent = path.posix.dirname(top);
  const realParent = await host.resolve(parent);
  // A fresh name, made here: nothing planted at it can be written through or deleted.
  const name = tempName(NEW_DIRS_PREFIX);
  const realTemp = path.join(realParent, name);
  try {
    fs.mkdirSync(realTemp, { mode: 0o755 });
  } catch (error) {
    throw hostError(`cannot create ${top}`, error);
  }
  try {
    for (const d of dirs.slice(1)) mkdirOwn(path.join(realTemp, d.slice(top.length)), d);
    await fill(`${parent === "/" ? "" : parent}/${name}${inner}`);
    crashPoint("dirs:unborn");
    fs.renameSync(realTemp, path.join(realParent, path.posix.basename(top)));
    syncDir(realParent);
  } catch (error) {
    fs.rmSync(realTemp, { recursive: true, force: true });
    throw hostError(`cannot create ${top}`, error);
  }
}

/** Remove what a createDirsWith() cut short before its rename left beside `dir`'s nearest existing ancestor. */
export async function removeUnbornDirs(host: Host, dir: string): Promise<void> {
  let parent = dir;
  while (parent !== "/" && !(await host.exists(parent))) parent = path.posix.dirname(parent);
  const real = await host.resolve(parent);
  for (const name of namesIn(real))
    if (name.startsWith(NEW_DIRS_PREFIX)) fs.rmSync(path.join(real, name), { recursive: true, force: true });
}

/**
 * The first of `base`, `base.1`, `base.2`, … that nothing stands at on the host (no file, directory
 * or link, a dangling one included): where something is put aside without covering anything.
 */
export async function firstFreePath(host: Host, base: string): Promise<string> {
  let at = base;
  for (let n = 1; (await host.lookStat(at)).ok || (await host.readlink(at)) !== null; n++)
    at = `${base}.${n}`;
  return at;
}
