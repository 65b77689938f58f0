// The only writes to the host. Every path is a host path, resolved through the Host (so a link
// inside the host is followed inside it); files are replaced atomically: a temp file in the same
// directory, fsync, rename, then fsync of the directory, with the mode and owner asked for.
import fs from "node:fs";
import path from "node:path";
import { HostError, hostError } from "../errors.js";
import { type Host, notRegular } from "../host/host.js";
import { crashPoint } from "./crash-point.js";
import { fault } from "./fault.js";

export interface FileMeta {
  mode: number;
  uid: number;
  gid: number;
}

/** A regular file's bytes and metadata, or null when it does not exist. */
export async function readFile(
  host: Host,
  hostPath: string,
): Promise<{ bytes: Buffer; meta: FileMeta } | null> {
  const file = await host.resolve(hostPath);
  try {
    const stats = fs.statSync(file);
    if (!stats.isFile())
      throw new HostError(
        `${hostPath} ${stats.isDirectory() ? "is a directory" : (notRegular(stats) ?? "is not a regular file")}`,
      );
    return {
      bytes: fs.readFileSync(file),
      meta: { mode: stats.mode & 0o7777, uid: stats.uid, gid: stats.gid },
    };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
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
  const temp = path.join(dir, `${TEMP_PREFIX(path.basename(at))}${process.pid}`);
  try {
    fs.rmSync(temp, { force: true });
    fault("write", hostPath);
    fs.symlinkSync(target, temp);
    fault("rename", hostPath);
    fs.renameSync(temp, at);
    syncDir(dir);
  } catch (error) {
    fs.rmSync(temp, { force: true });
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
  const dir = path.dirname(file);
  const temp = path.join(dir, `${TEMP_PREFIX(path.basename(file))}${process.pid}`);
  try {
    const fd = fs.openSync(temp, "w", meta.mode);
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
    fs.rmSync(temp, { force: true });
    throw hostError(`cannot write ${hostPath}`, error);
  }
}

const TEMP_PREFIX = (name: string) => `.${name}.kata-install-`;

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
  if (!fs.existsSync(path.dirname(file))) return; // nothing there to remove
  fs.rmSync(file, { force: true });
  syncDir(path.dirname(file));
}

/** Remove directories this install created, innermost first, when they are empty. */
export async function removeEmptyDirs(host: Host, dirs: string[]): Promise<string[]> {
  const left: string[] = [];
  for (const dir of [...dirs].sort((a, b) => b.length - a.length)) {
    const real = await host.resolve(dir);
    try {
      fs.rmdirSync(real);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOTEMPTY" || code === "EEXIST") left.push(dir);
      else if (code !== "ENOENT") throw error;
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
  const top = dirs[0] as string;
  const inner = (dirs[dirs.length - 1] as string).slice(top.length);
  const temp = `${path.posix.dirname(top)}/${NEW_DIRS_PREFIX}${process.pid}`;
  fs.rmSync(await host.resolve(temp), { recursive: true, force: true });
  for (const d of dirs) fs.mkdirSync(await host.resolve(temp + d.slice(top.length)), { mode: 0o755 });
  await fill(temp + inner);
  crashPoint("dirs:unborn");
  fs.renameSync(await host.resolve(temp), await host.resolve(top));
  syncDir(path.dirname(await host.resolve(top)));
}

/** Remove what a createDirsWith() cut short before its rename left beside `dir`'s nearest existing ancestor. */
export async function removeUnbornDirs(host: Host, dir: string): Promise<void> {
  let parent = dir;
  while (parent !== "/" && !(await host.exists(parent))) parent = path.posix.dirname(parent);
  const real = await host.resolve(parent);
  let names: string[];
  try {
    names = fs.readdirSync(real);
  } catch {
    return;
  }
  for (const name of names)
    if (name.startsWith(NEW_DIRS_PREFIX)) fs.rmSync(path.join(real, name), { recursive: true, force: true });
}
