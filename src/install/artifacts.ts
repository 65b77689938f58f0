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
import { UserError } from "../errors.js";
import type { Host } from "../host/host.js";
import type { ArtifactSpec } from "./catalogue.js";
import { ensureParents } from "./fs-ops.js";

/**
 * One file of an artifact, at its path relative to the prefix (Kata's release layout): a regular
 * file's bytes, or a symbolic link that stays inside the prefix (Kata's release links its kernels
 * and images: vmlinux.container -> vmlinux-6.12.8-146).
 */
export interface ArtifactFile {
  path: string;
  mode: number;
  bytes: Buffer;
  link?: string;
}

/** Null when a link target (relative to the link's directory) stays inside the prefix; else why not. */
export function linkInside(file: string, target: string): string | null {
  if (target.startsWith("/")) return `an absolute link (to ${target}) would point out of the prefix`;
  const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(file), target));
  if (resolved === ".." || resolved.startsWith("../"))
    return `its link (to ${target}) points out of the prefix`;
  return null;
}

/** Where artifacts come from: a directory today; an OCI layout or a registry are the same shape. */
export interface ArtifactSource {
  readonly description: string;
  files(artifact: string): Promise<ArtifactFile[]>;
  /** Bytes each artifact of the release weighs in this source (absent: not in the source). */
  sizes(artifacts: string[]): Promise<Map<string, number>>;
}

/** Links from Kata's usual paths into `current`; created when the prefix has nothing there. */
export const LINKS = [
  "bin",
  "libexec",
  "runtime-rs",
  "share/kata-containers",
  "share/kata-qemu",
  "share/ovmf",
];

export class ArtifactError extends UserError {}

/**
 * `dir:DIR`: DIR/<artifact>/opt/kata/… as the artifact's image holds it. Entries that would land
 * outside the prefix (links pointing out, "..") and files the catalogue does not give to that
 * artifact are refused, naming the entry.
 */
export function directorySource(dir: string, catalogue: Map<string, ArtifactSpec>): ArtifactSource {
  return {
    description: `dir:${dir}`,
    async sizes(artifacts) {
      const out = new Map<string, number>();
      for (const artifact of artifacts) {
        const root = path.join(dir, artifact);
        if (!fs.existsSync(root)) continue;
        let total = 0;
        for (const rel of fs.readdirSync(root, { recursive: true }).map(String)) {
          const st = fs.lstatSync(path.join(root, rel));
          if (st.isFile()) total += st.size;
        }
        out.set(artifact, total);
      }
      return out;
    },
    async files(artifact) {
      const spec = catalogue.get(artifact);
      if (!spec) throw new ArtifactError(`unknown artifact "${artifact}"`);
      const root = path.join(dir, artifact, "opt", "kata");
      if (!fs.existsSync(root))
        throw new ArtifactError(`dir:${dir}: artifact "${artifact}" is missing (no ${root})`);
      const out: ArtifactFile[] = [];
      for (const rel of fs.readdirSync(root, { recursive: true }).map(String).sort()) {
        const full = path.join(root, rel);
        const st = fs.lstatSync(full);
        if (st.isDirectory()) continue;
        const file = rel.split(path.sep).join("/");
        const entry = `dir:${dir}: ${artifact}/opt/kata/${file}`;
        if (!spec.matches(file))
          throw new ArtifactError(
            `${entry} is not part of artifact "${artifact}" (artifacts/catalogue.toml)`,
          );
        if (st.isSymbolicLink()) {
          const target = fs.readlinkSync(full);
          const outside = linkInside(file, target);
          if (outside !== null) throw new ArtifactError(`${entry}: ${outside}`);
          out.push({ path: file, mode: 0o777, bytes: Buffer.alloc(0), link: target });
          continue;
        }
        if (!st.isFile())
          throw new ArtifactError(`${entry} is not a regular file or link (devices and pipes are refused)`);
        out.push({ path: file, mode: st.mode & 0o7777, bytes: fs.readFileSync(full) });
      }
      return out;
    },
  };
}

export interface Staged {
  id: string;
  /** Host path of the version directory. */
  dir: string;
  files: number;
  bytes: number;
  /** False when that version was already there: nothing copied. */
  copied: boolean;
}

/** Every file of the artifacts, read and checked before anything is written. */
export async function collectFiles(source: ArtifactSource, artifacts: string[]): Promise<ArtifactFile[]> {
  return (await Promise.all([...artifacts].sort().map((a) => source.files(a)))).flat();
}

/** Copy the files into versions/<id> (via a .partial directory renamed when complete). */
export async function stageVersion(host: Host, prefix: string, files: ArtifactFile[]): Promise<Staged> {
  const digest = createHash("sha256");
  for (const f of [...files].sort((a, b) => (a.path < b.path ? -1 : 1))) {
    digest
      .update(`${f.path}\0${f.mode}\0${f.link ?? ""}\0`)
      .update(createHash("sha256").update(f.bytes).digest());
  }
  const id = digest.digest("hex").slice(0, 16);
  const dir = `${prefix}/versions/${id}`;
  const bytes = files.reduce((n, f) => n + f.bytes.length, 0);
  if (await host.exists(dir)) return { id, dir, files: files.length, bytes, copied: false };
  await ensureParents(host, `${dir}/x`);
  const partial = await host.resolve(`${dir}.partial`);
  fs.rmSync(partial, { recursive: true, force: true });
  for (const f of files) {
    const target = path.join(partial, f.path);
    if (!target.startsWith(`${partial}${path.sep}`))
      throw new ArtifactError(`${f.path}: would land outside ${dir}`);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    if (f.link !== undefined) {
      fs.symlinkSync(f.link, target);
      continue;
    }
    fs.writeFileSync(target, f.bytes, { mode: f.mode });
    fs.chmodSync(target, f.mode);
  }
  fs.renameSync(partial, await host.resolve(dir));
  return { id, dir, files: files.length, bytes, copied: true };
}

/** Point `current` at a version with one rename; null removes it. Returns the version it pointed at. */
export async function switchCurrent(host: Host, prefix: string, id: string | null): Promise<string | null> {
  const current = await host.resolveLink(`${prefix}/current`);
  let previous: string | null = null;
  try {
    previous = path.basename(fs.readlinkSync(current));
  } catch {
    previous = null;
  }
  if (id === null) fs.rmSync(current, { force: true });
  else {
    const next = `${current}.next`;
    fs.rmSync(next, { force: true });
    fs.symlinkSync(`versions/${id}`, next);
    fs.renameSync(next, current);
  }
  return previous;
}

/** Links from Kata's usual paths that are not there yet, and the directories they need. */
export async function missingLinks(host: Host, prefix: string): Promise<{ links: string[]; dirs: string[] }> {
  const links: string[] = [];
  const dirs = new Set<string>();
  for (const link of LINKS) {
    const hostPath = `${prefix}/${link}`;
    const at = await host.resolveLink(hostPath);
    const existing = fs.lstatSync(at, { throwIfNoEntry: false });
    if (existing?.isSymbolicLink() && fs.readlinkSync(at) === linkTarget(link)) continue;
    if (existing)
      throw new ArtifactError(
        `${hostPath} exists and is not kata-install's link: an install not made by kata-install is there (uninstall it first)`,
      );
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
    await ensureParents(host, hostPath);
    fs.symlinkSync(linkTarget(hostPath.slice(prefix.length + 1)), await host.resolveLink(hostPath));
  }
}

function linkTarget(link: string): string {
  return `${"../".repeat(link.split("/").length - 1)}current/${link}`;
}

/** Remove versions other than `keep` (after a switch: running VMs keep their open files). */
export async function removeOtherVersions(
  host: Host,
  prefix: string,
  keep: string | null,
): Promise<string[]> {
  const dir = await host.resolve(`${prefix}/versions`);
  if (!fs.existsSync(dir)) return [];
  const removed: string[] = [];
  for (const name of fs.readdirSync(dir)) {
    if (name === keep) continue;
    fs.rmSync(path.join(dir, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}
