// Artifact files: staged into a version directory of their own, then switched in with one rename
// of the `current` link, so a running Kata VM keeps the binaries it has open (no "text file busy")
// and a cut-short copy never becomes current. Kata's usual paths (bin/, libexec/, share/…) are links
// through `current`, so configurations name the same files whatever the version.
//
//   <prefix>/versions/<id>/…   one complete set of files   (<id>: the digest of its content)
//   <prefix>/current -> versions/<id>
//   <prefix>/bin -> current/bin, <prefix>/share/kata-containers -> ../current/share/kata-containers, …
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { ArtifactError } from "../artifacts/artifact-error.js";
import type { ListedEntry } from "../artifacts/listing.js";
import type { ArtifactSource } from "../artifacts/source.js";
import { StagingDir } from "../artifacts/staging.js";
import { hostError } from "../errors.js";
import { fileTree } from "../file-tree.js";
import { crashPoint } from "../host/crash-point.js";
import { fault } from "../host/fault.js";
import { ensureParents, firstFreePath } from "../host/fs-ops.js";
import type { Host } from "../host/host.js";
import { mkdirOwn, ownPath, removeOwnTree } from "../host/own-place.js";
import { LINKS } from "../release/links.js";
import { identitiesOf } from "./reuse.js";
import {
  foreignEntries,
  identityOf,
  removeVersionKeeping,
  VERSION_FILES,
  versionFiles,
  versionIdentities,
  writeVersionFiles,
} from "./version-files.js";

export interface Staged {
  id: string;
  /** Host path of the version directory. */
  dir: string;
  files: number;
  bytes: number;
  /** False when that version was already there: nothing copied. */
  copied: boolean;
  /** Artifacts taken from the installed version (the same digest), not the source. */
  reused?: string[];
}

/** Whether a version directory holds `entry` as listed (a file of that size, or that link). */
export function holds(
  version: string,
  entry: ListedEntry,
  /** The version's files as kata-install wrote them (versionIdentities); null: none recorded. */
  identities: ReadonlyMap<string, string> | null = versionIdentities(version),
): boolean {
  const st = fs.lstatSync(path.join(version, entry.path), { throwIfNoEntry: false });
  if (!st) return false;
  if (entry.type === "link")
    return st.isSymbolicLink() && fs.readlinkSync(path.join(version, entry.path)) === entry.target;
  if (!st.isFile() || st.size !== entry.size) return false;
  // The very file written then: a rewrite of the same size (or one put there by someone else) is not.
  return identities === null || identities.get(entry.path) === identityOf(st);
}

/**
 * An artifact of the installed version (`from`, its real path) put into the staging directory as
 * the source lists it, when the version still holds every entry so; false (nothing taken) if not.
 */
async function reuseArtifact(
  source: ArtifactSource,
  artifact: string,
  from: string,
  into: StagingDir,
): Promise<boolean> {
  const listing = await source.list(artifact);
  // Only files the version holds under its own directories: none reached through a link that
  // replaced one of them (a version of ours is never read through a link).
  // Real path to real path: the prefix may itself be reached through a link (/opt -> /var/opt).
  const realFrom = fs.realpathSync.native(from);
  const direct = (entry: ListedEntry) =>
    fs.realpathSync.native(path.dirname(path.join(from, entry.path))) ===
    path.dirname(path.join(realFrom, entry.path));
  const identities = versionIdentities(realFrom);
  if (!listing.every((entry) => holds(from, entry, identities) && direct(entry))) return false;
  for (const entry of listing)
    if (entry.type === "link") into.link(entry.path, entry.target);
    else into.reuse(entry.path, path.join(from, entry.path), entry.mode);
  return true;
}

/** The version id of a set of artifacts: a digest of what identifies each in the source. */
export async function versionId(source: ArtifactSource, artifacts: string[]): Promise<string> {
  return versionIdOf(await identitiesOf(source, artifacts));
}

/** The version id of artifacts by their identities (identitiesOf): the same id versionId gives. */
export function versionIdOf(identities: Record<string, string>): string {
  const digest = createHash("sha256");
  for (const [artifact, id] of Object.entries(identities)) digest.update(`${artifact}\0${id}\n`);
  return digest.digest("hex").slice(0, 16);
}

/** Where a version is staged before its rename into versions/<id>. */
export function stagingPath(prefix: string, id: string): string {
  return `${prefix}/versions/${id}.partial`;
}

/**
 * How many artifacts are staged at once. Two: one layer's inflating (zlib, on libuv's pool) and
 * hashing (a worker) run while another's files are written — a qemu node's six images staged from
 * gzip layers in 8 % less time, the whole install 19 % (bench/qemu-node.bench.ts); more only queue
 * for the same cores and the same disk.
 */
const STAGING_AT_ONCE = 2;

/**
 * `work` for each item, `limit` at a time, in order of start; the first failure is thrown once the
 * work in flight has ended (none is cut off half-written), and nothing further starts after it.
 */
async function eachAtOnce<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  let failure: { error: unknown } | null = null;
  const lane = async () => {
    for (let item = queue.shift(); item !== undefined && failure === null; item = queue.shift()) {
      try {
        await work(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  if (failure !== null) throw (failure as { error: unknown }).error;
}

/**
 * Stream the artifacts into versions/<id>.partial, renamed to versions/<id> when complete. On a
 * refusal the partial directory goes and the error stands; the caller removes directories it made.
 */
export async function stageVersion(
  host: Host,
  prefix: string,
  id: string,
  source: ArtifactSource,
  artifacts: string[],
  options: {
    rename?: boolean;
    /** Artifacts to take from the installed version (its real path) rather than the source. */
    reuse?: { dir: string; artifacts: ReadonlySet<string> };
  } = {},
): Promise<Staged> {
  const dir = `${prefix}/versions/${id}`;
  const staging = stagingPath(prefix, id);
  const partial = await ownPath(host, prefix, staging, "dir");
  removeOwnTree(partial, staging);
  mkdirOwn(await ownPath(host, prefix, `${prefix}/versions`, "dir"), `${prefix}/versions`);
  mkdirOwn(partial, staging);
  const into = new StagingDir(partial);
  const reused: string[] = [];
  const one = async (artifact: string) => {
    const { reuse } = options;
    if (reuse?.artifacts.has(artifact) && (await reuseArtifact(source, artifact, reuse.dir, into))) {
      reused.push(artifact);
      return;
    }
    await source.extract(artifact, into);
  };
  try {
    await eachAtOnce([...artifacts].sort(), STAGING_AT_ONCE, one);
  } catch (error) {
    fs.rmSync(partial, { recursive: true, force: true });
    throw error;
  }
  reused.sort();
  // Without the rename (a repair takes files from it), `dir` is the staging directory's real path.
  if (options.rename === false)
    return { id, dir: partial, files: into.files, bytes: into.bytes, copied: true, reused };
  try {
    // The list of what is ours in it, renamed in with it (src/install/version-files.ts).
    writeVersionFiles(partial, into.entries());
    const target = await ownPath(host, prefix, dir, "dir");
    fault("rename", dir);
    fs.renameSync(partial, target);
  } catch (error) {
    fs.rmSync(partial, { recursive: true, force: true });
    throw hostError(`cannot rename the staged version into ${dir}`, error);
  }
  return { id, dir, files: into.files, bytes: into.bytes, copied: true, reused };
}

/** A version already on the node (a cut-short run made it): its files counted, nothing copied. */
export async function existingVersion(host: Host, prefix: string, id: string): Promise<Staged | null> {
  const dir = `${prefix}/versions/${id}`;
  const full = await ownPath(host, prefix, dir, "dir");
  if (!fs.existsSync(full)) return null;
  let files = 0;
  let bytes = 0;
  for (const { full: file, dirent, path: rel } of fileTree(full)) {
    if (dirent.isDirectory() || rel === VERSION_FILES) continue;
    files++;
    if (dirent.isFile()) bytes += fs.lstatSync(file).size;
  }
  return { id, dir, files, bytes, copied: false };
}

/** Point `current` at a version with one rename; null removes it. Returns the version it pointed at. */
export async function switchCurrent(host: Host, prefix: string, id: string | null): Promise<string | null> {
  // `current` is a link of ours: anything else there is refused, never replaced or removed.
  const current = await ownPath(host, prefix, `${prefix}/current`, "link");
  let previous: string | null = null;
  try {
    previous = path.basename(fs.readlinkSync(current));
  } catch {
    previous = null;
  }
  // A `current.next` a kill left between its creation and its rename goes whichever way we switch.
  const next = await ownPath(host, prefix, `${prefix}/current.next`, "link");
  fs.rmSync(next, { force: true });
  if (id === null) fs.rmSync(current, { force: true });
  else {
    fs.symlinkSync(`versions/${id}`, next);
    crashPoint("switch:next-made");
    fault("rename", `${prefix}/current`);
    fs.renameSync(next, current);
  }
  return previous;
}

/** Links from Kata's usual paths that are not there yet, and the directories they need. */
export async function missingLinks(
  host: Host,
  prefix: string,
  version: string,
): Promise<{ links: string[]; dirs: string[] }> {
  const links: string[] = [];
  const dirs = new Set<string>();
  for (const link of LINKS) {
    const hostPath = `${prefix}/${link}`;
    // Only into what the version has: a link to nothing (share/ovmf on a node without a TEE
    // shim) would only puzzle whoever looks; a later version that has it gets its link then.
    if (!(await host.exists(`${prefix}/versions/${version}/${link}`))) continue;
    const at = await host.resolveLink(hostPath);
    const existing = fs.lstatSync(at, { throwIfNoEntry: false });
    if (existing?.isSymbolicLink() && fs.readlinkSync(at) === linkTarget(link)) continue;
    if (existing)
      throw new ArtifactError(
        `${hostPath} exists and is not kata-install's link: an install not made by kata-install is there (uninstall it first)`,
      );
    // Nothing planted on the way either (share/ a link to elsewhere): refused before it is made.
    await ownPath(host, prefix, hostPath, "link");
    links.push(hostPath);
    for (
      let dir = path.posix.dirname(hostPath);
      dir !== prefix && dir !== "/" && !(await host.exists(dir));
      dir = path.posix.dirname(dir)
    )
      dirs.add(dir);
  }
  return { links, dirs: [...dirs].sort((a, b) => a.length - b.length) };
}

/** Create links listed by missingLinks(). */
export async function createLinks(host: Host, prefix: string, links: string[]): Promise<void> {
  for (const hostPath of links) {
    // Never through a link planted on the way (share/ -> elsewhere).
    await ownPath(host, prefix, path.posix.dirname(hostPath), "dir");
    await ensureParents(host, hostPath);
    fs.symlinkSync(
      linkTarget(hostPath.slice(prefix.length + 1)),
      await ownPath(host, prefix, hostPath, "link"),
    );
  }
}

/** What a link at Kata's usual path `link` (relative to the prefix) points at: into `current`. */
export function linkTarget(link: string): string {
  return `${"../".repeat(link.split("/").length - 1)}current/${link}`;
}

/**
 * Remove the version directories named (kata-install's own, as the journal records them) — never
 * anything else under versions/: what kata-install did not make there is not its to delete. What
 * is someone else's in one stays, in the version's directory renamed to versions/<id>.kept
 * (keptDir): out of the way of a version of that id installed again, and never taken for one.
 * Returns the host paths kept.
 */
export async function removeVersions(host: Host, prefix: string, ids: Iterable<string>): Promise<string[]> {
  const kept: string[] = [];
  for (const id of ids) {
    if (id === "" || id.includes("/") || id === "." || id === "..") continue;
    const dir = `${prefix}/versions/${id}`;
    const real = await ownPath(host, prefix, dir, "dir");
    const st = fs.lstatSync(real, { throwIfNoEntry: false });
    if (st === undefined) continue;
    if (!st.isDirectory()) removeOwnTree(real, dir); // refused, naming what is there
    const to = await keptDir(host, prefix, id);
    const toReal = await ownPath(host, prefix, to, "dir");
    try {
      for (const entry of removeVersionKeeping(real, toReal)) kept.push(`${to}/${entry}`);
    } catch (error) {
      throw hostError(`cannot remove ${dir}`, error);
    }
  }
  return kept;
}

/** A directory of versions/ that holds what was kept of a version (keptDir's names). */
export const KEPT_NAME = /^[0-9a-z-]+\.kept(\.[0-9]+)?$/;

/** Where what is someone else's in version `id` is kept: versions/<id>.kept, or .kept.<n> if taken. */
export function keptDir(host: Host, prefix: string, id: string): Promise<string> {
  return firstFreePath(host, `${prefix}/versions/${id}.kept`);
}

/**
 * What is someone else's in the installed version `id` (host paths, in the directory it would be
 * kept in once the version goes); [] when it has no list.
 */
export async function foreignInVersion(host: Host, prefix: string, id: string): Promise<string[]> {
  const dir = `${prefix}/versions/${id}`;
  const real = await ownPath(host, prefix, dir, "dir");
  const listed = versionFiles(real);
  if (listed === null) return [];
  const foreign = foreignEntries(real, listed);
  if (foreign.length === 0) return [];
  const kept = await keptDir(host, prefix, id);
  return foreign.map((entry) => `${kept}/${entry}`);
}
