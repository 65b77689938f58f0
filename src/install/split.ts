// `artifacts split`: one Kata release — all its tarballs at once (3.x: one kata-static with both
// runtimes; since 4.1.0: kata-static with the Rust runtime, kata-go-static with the Go runtime,
// kata-tools-static; each .tar.zst/.xz/.gz, all under opt/kata/) — republished as one OCI image
// per artifact, in an OCI image layout, with a release manifest (kata-release.json) recording each
// image's digest, files and bytes. Each file and link has one owner: an artifact of the catalogue,
// an ignore rule, or — for a file the catalogue does not know — the image the shim that needs it
// pulls (split-assign.ts). An entry claimed twice, a link whose target is not in its artifact (or
// one it depends on), a link that dangles where a shim needs it, or one path with different
// content in two tarballs fails the split, each named, and no layout is written.
import { createHash, type Hash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { PassThrough, Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip, createGzip } from "node:zlib";
import { Decompress } from "fzstd";
import { create as createTar, Parser, type ReadEntry } from "tar";
// A CommonJS module whose named exports Node cannot see from ESM: take them from the default.
import xzDecompress from "xz-decompress";
import { ArtifactError } from "../artifacts/artifact-error.js";
import type { ArtifactCatalogue } from "../artifacts/catalogue.js";
import { UNCLAIMED } from "../artifacts/catalogue.js";
import { GO_ARCH } from "../artifacts/image-source.js";
import {
  FILES_ANNOTATION,
  IMAGES_ANNOTATION,
  type ListedEntry,
  ReleaseTree,
  VERSION_ANNOTATION,
} from "../artifacts/listing.js";
import { linkInside } from "../artifacts/source.js";
import { must } from "../at.js";
import { tempName } from "../host/exclusive.js";
import { versionFromTarballName } from "../release/release.js";
import { type Assigned, assignUnknown, stagedPath, UNASSIGNED } from "./split-assign.js";

export const RELEASE_MANIFEST = "kata-release.json";

export interface SplitImage {
  artifact: string;
  digest: string;
  files: number;
  /** Uncompressed bytes of its regular files: what it takes on a node's disk. */
  bytes: number;
  layerBytes: number;
}

export interface IgnoredEntry {
  path: string;
  reason: string;
  /** A link whose target is in none of the tarballs given. */
  dangling?: true;
  /** The artifact a dangling link was in, left out of it for dangling (its reason says so). */
  from?: string;
}

export interface SplitReport {
  /** The release's version: its VERSION file, else its tarballs' names. */
  version: string;
  images: SplitImage[];
  ignored: IgnoredEntry[];
  /** What each shim's configuration in the release needs, and what it names that is not there. */
  shims: Assigned["shims"];
  /** Images made for files the catalogue does not know that a configuration needs. */
  extra: Assigned["extra"];
  /** Files the catalogue does not know and nothing needs: in the image "unclaimed", pulled by no shim. */
  unclaimed: string[];
  /** Files and links read, each path once. */
  entries: number;
  /** Regular-file bytes of the whole release, owned or ignored. */
  releaseBytes: number;
}

/** A split refused: every entry that has no owner, two owners, or a link with nowhere to go. */
export class SplitError extends ArtifactError {
  constructor(readonly problems: string[]) {
    super(
      `the release cannot be split: ${problems.length} problem(s):\n${problems.map((p) => `  ${p}`).join("\n")}\nNothing was written. Fix artifacts/catalogue.toml (or the release).`,
    );
  }
}

/**
 * Compressed bytes fed to zstd a small piece at a time: one piece of a highly compressed stream
 * (a zero-filled image: 4 bytes a 128 KiB block) can inflate to 16 MiB at most, and no piece goes
 * in while the reader has more than its fill waiting. Fed whole chunks, a 151 KB tarball came out
 * as 1.5 GiB held in memory at once, faster than the files it holds could be written.
 */
const ZSTD_PIECE = 512;

function zstdStream(raw: fs.ReadStream, said: (error: Error) => Error): Readable {
  const pending: Buffer[] = [];
  let full = false;
  let blocked = false;
  let rawEnded = false;
  let finished = false;
  const out = new Readable({
    read() {
      if (!blocked) return;
      blocked = false;
      pump();
    },
  });
  const zstd = new Decompress((chunk, final) => {
    if (chunk.length > 0 && !out.push(Buffer.from(chunk))) full = true;
    if (final && !finished) {
      finished = true;
      out.push(null);
    }
  });
  const fail = (error: unknown) => {
    raw.destroy();
    out.destroy(said(error as Error));
  };
  function pump(): void {
    try {
      for (let head = pending[0]; head !== undefined; head = pending[0]) {
        const piece = head.subarray(0, ZSTD_PIECE);
        if (piece.length === head.length) pending.shift();
        else pending[0] = head.subarray(ZSTD_PIECE);
        zstd.push(new Uint8Array(piece.buffer, piece.byteOffset, piece.length));
        if (full) {
          full = false;
          blocked = true;
          return;
        }
      }
      if (!rawEnded) raw.resume();
      else if (!finished) zstd.push(new Uint8Array(0), true);
    } catch (error) {
      fail(error);
    }
  }
  raw.on("data", (c) => {
    raw.pause();
    pending.push(c as Buffer);
    pump();
  });
  raw.on("end", () => {
    rawEnded = true;
    if (!blocked) pump();
  });
  raw.on("error", (error) => out.destroy(error));
  return out;
}

/** The tarball's bytes, decompressed by its name's suffix. */
function decompressed(file: string): Readable {
  const raw = fs.createReadStream(file);
  // A decompressor's own words ("incorrect header check", "get_next_output failed with error code
  // 5") name neither the file's format nor what is wrong with it.
  const said = (format: string) => (error: Error) =>
    new Error(`its ${format} data is corrupt or cut short (${error.message})`);
  if (/\.(zst|tzst)$/.test(file)) return zstdStream(raw, said("zstd"));
  const wrapped = (stream: Readable, format: string) => {
    const out = new PassThrough();
    raw.on("error", (error) => out.destroy(error));
    stream.on("error", (error) => out.destroy(said(format)(error)));
    return stream.pipe(out);
  };
  if (/\.(xz|txz)$/.test(file))
    return wrapped(
      Readable.fromWeb(
        new xzDecompress.XzReadableStream(Readable.toWeb(raw) as ReadableStream<Uint8Array>) as never,
      ),
      "xz",
    );
  if (/\.(gz|tgz)$/.test(file)) return wrapped(raw.pipe(createGunzip()), "gzip");
  return raw;
}

/**
 * gzip: what registries serve, smaller to move. tar: uncompressed, for a layout on a node's own
 * disk, where gunzip would cost more than the bytes it saves (see bench/artifacts.bench.ts).
 */
export type LayerFormat = "gzip" | "tar";

/** One path of the release, as first read (later tarballs must agree with it). */
interface ReleaseEntry {
  file: string;
  tarball: string;
  type: "file" | "link";
  mode: number;
  size: number;
  /** A symbolic link's target; for a hard link, the file it repeats. */
  target?: string;
  hardlink?: boolean;
  /** sha256 of a file's bytes. */
  hash?: string;
  owner: string | null;
}

export async function splitRelease(
  tarballs: string | string[],
  layout: string,
  catalogue: ArtifactCatalogue,
  arch: string,
  layers: LayerFormat = "gzip",
): Promise<SplitReport> {
  const list = Array.isArray(tarballs) ? tarballs : [tarballs];
  const split = await splitReleases([{ arch, tarballs: list }], layout, catalogue, layers);
  return must(split.arches[0], "the one architecture's split").report;
}

/** One architecture's release, as given to splitReleases. */
export interface ArchTarballs {
  arch: string;
  tarballs: string[];
}

export interface MultiSplitReport {
  version: string;
  /** Each architecture's split, in the order given. */
  arches: Array<{ arch: string; report: SplitReport }>;
  /** With several architectures: each artifact's image index, and the platforms it lists. */
  indexes: Array<{ artifact: string; digest: string; arches: string[] }>;
}

const INDEX_TYPE = "application/vnd.oci.image.index.v1+json";
const REF_NAME = "org.opencontainers.image.ref.name";

/**
 * Releases of one version for one or more architectures, into one layout. One architecture: each
 * artifact's image tagged by its name. Several: each artifact's images (one per architecture that
 * has it) in an image index under its name, which a node reads its platform's manifest from. Every
 * release is read and checked before anything is written: a problem in any leaves no layout.
 */
export async function splitReleases(
  groups: ArchTarballs[],
  layout: string,
  catalogue: ArtifactCatalogue,
  layers: LayerFormat = "gzip",
): Promise<MultiSplitReport> {
  const prepared: Prepared[] = [];
  try {
    const problems: string[] = [];
    for (const group of groups) {
      const one = await prepare(group, catalogue);
      prepared.push(one);
      problems.push(...one.problems.map((p) => (groups.length > 1 ? `${group.arch}: ${p}` : p)));
    }
    if (problems.length > 0) throw new SplitError(problems);
    const versions = new Set(prepared.map((p) => p.assigned.release.version));
    if (versions.size > 1)
      throw new SplitError([
        `the releases are of different versions (${prepared.map((p) => `${p.arch}: ${p.assigned.release.version}`).join(", ")}): one layout holds one release`,
      ]);
    fs.mkdirSync(path.join(layout, "blobs", "sha256"), { recursive: true });
    fs.writeFileSync(path.join(layout, "oci-layout"), '{"imageLayoutVersion":"1.0.0"}\n');
    const written: Array<{ arch: string; report: SplitReport; manifests: Map<string, Descriptor> }> = [];
    for (const p of prepared) written.push({ arch: p.arch, ...(await writeArch(p, layout, layers)) });
    const indexFile = path.join(layout, "index.json");
    const index: { schemaVersion: number; manifests: Array<Record<string, unknown>> } = fs.existsSync(
      indexFile,
    )
      ? JSON.parse(fs.readFileSync(indexFile, "utf8"))
      : { schemaVersion: 2, manifests: [] };
    const tag = (artifact: string, descriptor: Descriptor) => {
      index.manifests = index.manifests.filter(
        (m) => (m.annotations as Record<string, string> | undefined)?.[REF_NAME] !== artifact,
      );
      index.manifests.push({ ...descriptor, annotations: { [REF_NAME]: artifact } });
    };
    const version = must(prepared[0], "a release").assigned.release.version;
    const indexes: MultiSplitReport["indexes"] = [];
    let release: Record<string, unknown>;
    const only = written.length === 1 ? written[0] : undefined;
    if (only !== undefined) {
      for (const [artifact, descriptor] of only.manifests) tag(artifact, descriptor);
      release = {
        arch: only.arch,
        ...(version !== "unknown" ? { version } : {}),
        artifacts: Object.fromEntries(
          only.report.images.map((i) => [i.artifact, { digest: i.digest, files: i.files, bytes: i.bytes }]),
        ),
      };
    } else {
      const artifacts: Record<string, unknown> = {};
      const names = [...new Set(written.flatMap((w) => [...w.manifests.keys()]))].sort();
      for (const artifact of names) {
        const having = written
          .filter((w) => w.manifests.has(artifact))
          .sort((a, b) => (a.arch < b.arch ? -1 : 1));
        const manifests = having.map((w) => ({
          ...must(w.manifests.get(artifact), artifact),
          platform: { architecture: GO_ARCH[w.arch] ?? w.arch, os: "linux" },
        }));
        const descriptor = writeBlob(
          layout,
          Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: INDEX_TYPE, manifests })),
          INDEX_TYPE,
        );
        tag(artifact, descriptor);
        indexes.push({ artifact, digest: descriptor.digest, arches: having.map((w) => w.arch) });
        artifacts[artifact] = {
          digest: descriptor.digest,
          platforms: Object.fromEntries(
            having.map((w) => {
              const image = must(
                w.report.images.find((i) => i.artifact === artifact),
                artifact,
              );
              return [w.arch, { digest: image.digest, files: image.files, bytes: image.bytes }];
            }),
          ),
        };
      }
      release = {
        arches: written.map((w) => w.arch).sort(),
        ...(version !== "unknown" ? { version } : {}),
        artifacts,
      };
    }
    fs.writeFileSync(indexFile, `${JSON.stringify(index, null, 2)}\n`);
    fs.writeFileSync(path.join(layout, RELEASE_MANIFEST), `${JSON.stringify(release, null, 2)}\n`);
    return { version, arches: written.map(({ arch, report }) => ({ arch, report })), indexes };
  } finally {
    for (const p of prepared) fs.rmSync(p.staging, { recursive: true, force: true });
  }
}

interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
}

/** One architecture's tarballs read into a staging tree, every entry owned, and what stops it. */
interface Prepared {
  arch: string;
  tarballs: string[];
  staging: string;
  entries: Map<string, ReleaseEntry>;
  assigned: ReturnType<typeof assignUnknown>;
  ignored: IgnoredEntry[];
  problems: string[];
}

async function prepare(group: ArchTarballs, catalogue: ArtifactCatalogue): Promise<Prepared> {
  // The tarballs are there (runSplit, the command, says which is not, before their names are read).
  const staging = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-split-"));
  try {
    const entries = new Map<string, ReleaseEntry>();
    const problems: string[] = [];
    for (const tarball of group.tarballs)
      await unpackByArtifact(tarball, staging, catalogue, entries, problems);
    const named = group.tarballs.map((t) => versionFromTarballName(path.basename(t))).find(Boolean);
    const assigned = assignUnknown(entries, staging, treeOf(entries), named);
    problems.push(...assigned.problems);
    const ignored = checkOwnership(entries, catalogue, problems, staging);
    return { ...group, staging, entries, assigned, ignored, problems };
  } catch (error) {
    fs.rmSync(staging, { recursive: true, force: true });
    throw error;
  }
}

/** One architecture's images written as blobs; each artifact's manifest, to be tagged. */
async function writeArch(
  p: Prepared,
  layout: string,
  layers: LayerFormat,
): Promise<{ report: SplitReport; manifests: Map<string, Descriptor> }> {
  const { entries, assigned, staging } = p;
  const images: SplitImage[] = [];
  const manifests = new Map<string, Descriptor>();
  // meta last: it names every other image of the release (a registry cannot be asked).
  const names = fs.readdirSync(staging).sort();
  for (const artifact of [...names.filter((n) => n !== "meta"), ...names.filter((n) => n === "meta")]) {
    const listing = [...entries.values()]
      .filter((e) => e.owner === artifact)
      .sort((a, b) => (a.file < b.file ? -1 : 1))
      .map(listed);
    const version = assigned.release.version;
    const annotations: Record<string, string> =
      artifact === "meta"
        ? {
            [IMAGES_ANNOTATION]: JSON.stringify(names.filter((n) => n !== "meta")),
            ...(version !== "unknown" ? { [VERSION_ANNOTATION]: version } : {}),
          }
        : {};
    const { image, manifest } = await writeImage(
      path.join(staging, artifact),
      layout,
      artifact,
      p.arch,
      layers,
      listing,
      annotations,
    );
    images.push(image);
    manifests.set(artifact, manifest);
  }
  images.sort((a, b) => (a.artifact < b.artifact ? -1 : 1));
  let releaseBytes = 0;
  for (const e of entries.values()) if (e.type === "file") releaseBytes += e.size;
  return {
    report: {
      version: assigned.release.version,
      images,
      ignored: p.ignored,
      shims: assigned.shims,
      extra: assigned.extra,
      unclaimed: assigned.unclaimed,
      entries: entries.size,
      releaseBytes,
    },
    manifests,
  };
}

/** A blob of the layout, by its digest. */
function writeBlob(layout: string, bytes: Buffer, mediaType: string): Descriptor {
  const hex = createHash("sha256").update(bytes).digest("hex");
  fs.writeFileSync(path.join(layout, "blobs", "sha256", hex), bytes);
  return { mediaType, digest: `sha256:${hex}`, size: bytes.length };
}

function listed(e: ReleaseEntry): ListedEntry {
  return e.type === "link"
    ? { path: e.file, type: "link", target: must(e.target, `${e.file}: its link target`) }
    : { path: e.file, type: "file", mode: e.mode, size: e.size };
}

/**
 * Links, once every tarball is read: a link of an artifact must reach a file of that artifact or
 * of one it depends on, within the release. Returns the ignored entries, dangling links marked.
 */
function checkOwnership(
  entries: Map<string, ReleaseEntry>,
  catalogue: ArtifactCatalogue,
  problems: string[],
  staging: string,
): IgnoredEntry[] {
  const ignored: IgnoredEntry[] = [];
  const tree = treeOf(entries);
  for (const e of [...entries.values()].sort((a, b) => (a.file < b.file ? -1 : 1))) {
    // The unclaimed image is installed by no shim: where its links go does not matter.
    const target = e.type === "link" && e.owner !== UNCLAIMED ? tree.reach(e.file) : null;
    if (e.owner === null) {
      const own = catalogue.ownerOf(e.file);
      const reason = own.kind === "ignored" ? own.reason : "";
      ignored.push({ path: e.file, reason, ...(target?.kind === "missing" ? { dangling: true } : {}) });
      continue;
    }
    if (target === null) continue;
    const where = `${e.file} (artifact ${e.owner}, in ${path.basename(e.tarball)})`;
    if (target.kind === "missing") {
      // No shim's configuration goes through it (that is refused where the shims are read): a
      // link to nothing would only puzzle whoever finds it on a node, so it is left out, said.
      fs.rmSync(stagedPath(staging, e), { force: true });
      ignored.push({
        path: e.file,
        reason: `a link to ${e.target}, which is in none of the tarballs given, and no shim needs: not installed`,
        dangling: true,
        from: e.owner,
      });
      e.owner = null;
      continue;
    }
    if (target.kind === "loop") {
      problems.push(`${where}: a link that never reaches a file (a loop)`);
      continue;
    }
    const reached = entries.get(target.path) as ReleaseEntry;
    const allowed = catalogue.dependencies(e.owner);
    if (reached.owner === null)
      problems.push(`${where}: links to ${reached.file}, which no artifact holds: the link would dangle`);
    else if (!allowed.has(reached.owner))
      problems.push(
        `${where}: links to ${reached.file}, which is in artifact ${reached.owner}; give it to ${e.owner}, or make ${e.owner} depend on ${reached.owner}`,
      );
  }
  return ignored;
}

/** The release's entries as one tree, to follow links through (the listings' own walk). */
function treeOf(entries: Map<string, ReleaseEntry>): ReleaseTree {
  return new ReleaseTree([[...entries.values()].map(listed)]);
}

/**
 * Every entry of one tarball into staging/<artifact>/opt/kata/…, recorded in `entries`. A path an
 * earlier tarball had must be the same entry (type, link, bytes): its bytes are hashed, not written.
 */
async function unpackByArtifact(
  tarball: string,
  staging: string,
  catalogue: ArtifactCatalogue,
  entries: Map<string, ReleaseEntry>,
  problems: string[],
): Promise<void> {
  const name = path.basename(tarball);
  const parser = new Parser({ strict: true });
  const pending: Promise<void>[] = [];
  const writing = new Map<fs.WriteStream, Promise<void>>();
  const input = decompressed(tarball);
  let failure: Error | null = null;
  parser.on("entry", (entry: ReadEntry) => {
    const clean = path.posix.normalize(entry.path.replace(/^\.\//, "")).replace(/\/$/, "");
    const at = `${name}: ${clean}`;
    if (failure) return entry.resume();
    if (entry.path.startsWith("/") || clean.split("/").includes("..")) {
      failure = new ArtifactError(`${name}: entry "${entry.path}": escapes the release root`);
      return entry.resume();
    }
    if (entry.type === "Directory" || clean === "." || clean === "opt" || clean === "opt/kata")
      return entry.resume();
    if (!clean.startsWith("opt/kata/")) {
      problems.push(`${at}: outside opt/kata, where a Kata release's files are`);
      return entry.resume();
    }
    const file = clean.slice("opt/kata/".length);
    const isLink = entry.type === "SymbolicLink";
    const isHard = entry.type === "Link";
    if (
      !isLink &&
      !isHard &&
      entry.type !== "File" &&
      entry.type !== "OldFile" &&
      entry.type !== "ContiguousFile"
    ) {
      problems.push(`${at}: a ${entry.type} entry (only files, directories and links are carried)`);
      return entry.resume();
    }
    if (isLink) {
      const outside = linkInside(file, entry.linkpath ?? "");
      if (outside !== null) {
        problems.push(`${at}: ${outside}`);
        return entry.resume();
      }
    }
    const mode = (entry.mode ?? 0o644) & 0o7777;
    const linkTarget = isHard
      ? path.posix.normalize((entry.linkpath ?? "").replace(/^\.\//, "")).replace(/^opt\/kata\//, "")
      : (entry.linkpath ?? "");
    const earlier = entries.get(file);
    if (earlier) {
      // The same path in two tarballs of one release: it must be the same entry.
      const differs = (what: string) =>
        problems.push(`${file}: ${what} in ${name} than in ${path.basename(earlier.tarball)}`);
      if (isLink) {
        if (earlier.type !== "link" || earlier.target !== linkTarget) differs("another link");
        return entry.resume();
      }
      if (earlier.type !== "file") {
        differs("another kind of entry");
        return entry.resume();
      }
      const digest = createHash("sha256");
      let size = 0;
      entry.on("data", (c: Buffer) => {
        digest.update(c);
        size += c.length;
      });
      pending.push(
        new Promise<void>((resolve) =>
          entry.on("end", () => {
            const copyOf = isHard ? entries.get(linkTarget) : undefined;
            const hash = copyOf ? copyOf.hash : digest.digest("hex");
            if (hash !== earlier.hash || (!isHard && size !== earlier.size)) differs("other bytes");
            resolve();
          }),
        ),
      );
      return;
    }
    const own = catalogue.ownerOf(file);
    const record: ReleaseEntry = {
      file,
      tarball,
      type: isLink ? "link" : "file",
      mode,
      size: 0,
      // A file the catalogue does not know waits to be given the image of the shim that needs it.
      owner: own.kind === "artifact" ? own.artifact : own.kind === "unowned" ? UNASSIGNED : null,
      ...(isLink ? { target: linkTarget } : {}),
    };
    if (own.kind === "conflict") problems.push(`${at}: claimed twice, by ${own.owners.join(" and by ")}`);
    entries.set(file, record);
    if (record.owner === null) {
      // Ignored (or refused): only its size and hash are kept, for the report and other tarballs.
      const digest = createHash("sha256");
      entry.on("data", (c: Buffer) => {
        digest.update(c);
        record.size += c.length;
      });
      entry.on("end", () => {
        record.hash = digest.digest("hex");
      });
      return;
    }
    const target = path.join(staging, record.owner, "opt", "kata", file);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    if (isLink) {
      fs.symlinkSync(linkTarget, target);
      return entry.resume();
    }
    if (isHard) {
      const from = entries.get(linkTarget);
      if (from?.type !== "file" || from.owner === null) {
        problems.push(`${at}: a hard link to ${entry.linkpath}, which is not a file carried before it`);
        return entry.resume();
      }
      fs.copyFileSync(path.join(staging, from.owner, "opt", "kata", linkTarget), target);
      fs.chmodSync(target, from.mode);
      Object.assign(record, { mode: from.mode, size: from.size, hash: from.hash });
      return entry.resume();
    }
    const digest = createHash("sha256");
    const out = fs.createWriteStream(target, { mode });
    // One listener hashes and writes: an entry flushes what it has buffered to the listeners
    // present when it starts flowing, so a pipe attached beside a data listener missed the first
    // chunks of a large file.
    entry.on("data", (c: Buffer) => {
      digest.update(c);
      record.size += c.length;
      if (!out.write(c)) {
        entry.pause();
        out.once("drain", () => entry.resume());
      }
    });
    entry.on("end", () => out.end());
    const written = new Promise<void>((resolve, reject) => {
      out.on("close", () => resolve());
      out.on("error", reject);
    }).then(() => {
      writing.delete(out);
      // Destroyed by a failure of the tarball: its staging directory is about to go.
      if (!out.writableFinished) return;
      record.hash = digest.digest("hex");
      fs.chmodSync(target, mode);
    });
    writing.set(out, written);
    pending.push(written);
  });
  // A tarball that fails half-way (corrupt, cut short) leaves entries open: their files are
  // closed, and waited for, before the error goes up and the staging directory is removed.
  const abandon = async (error: unknown): Promise<never> => {
    // Only the files being written: an entry compared with another tarball's never ends now.
    const open = [...writing];
    for (const [out] of open) out.destroy();
    await Promise.allSettled(open.map(([, written]) => written));
    throw error;
  };
  await new Promise<void>((resolve, reject) => {
    input.on("error", (error) => reject(new ArtifactError(`${tarball}: cannot read: ${error.message}`)));
    parser.on("error", (error: Error) =>
      reject(new ArtifactError(`${tarball}: not a readable tar: ${error.message}`)),
    );
    parser.on("end", () => resolve());
    input.pipe(parser as unknown as NodeJS.WritableStream);
  }).catch(abandon);
  await Promise.all(pending);
  if (failure) throw failure;
}

/**
 * The image's one layer, streamed to its blob: the tar of `root` (reproducible: sorted entries, no
 * owners or times of the machine that split), gzipped or not, hashed on the way, never held in
 * memory whole (a guest image is hundreds of MiB). `diffId`: the digest of the tar itself.
 */
async function writeLayer(
  root: string,
  layout: string,
  layers: LayerFormat,
): Promise<{ layer: { mediaType: string; digest: string; size: number }; diffId: string }> {
  const blobs = path.join(layout, "blobs", "sha256");
  const temp = path.join(blobs, tempName(".layer-"));
  const tarDigest = createHash("sha256");
  const blobDigest = createHash("sha256");
  let size = 0;
  const hashing = (digest: Hash, count: boolean) =>
    new Transform({
      transform(chunk: Buffer, _encoding, done) {
        digest.update(chunk);
        if (count) size += chunk.length;
        done(null, chunk);
      },
    });
  const tar = createTar({ cwd: root, portable: true, mtime: new Date(0) }, ["opt"]) as unknown as Readable;
  const file = fs.createWriteStream(temp, { flags: "wx" });
  try {
    if (layers === "gzip")
      await pipeline(
        tar,
        hashing(tarDigest, false),
        createGzip({ level: 6 }),
        hashing(blobDigest, true),
        file,
      );
    else await pipeline(tar, hashing(tarDigest, true), file);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw error;
  }
  const hex = (layers === "gzip" ? blobDigest : tarDigest).digest("hex");
  fs.renameSync(temp, path.join(blobs, hex));
  return {
    layer: {
      mediaType:
        layers === "gzip"
          ? "application/vnd.oci.image.layer.v1.tar+gzip"
          : "application/vnd.oci.image.layer.v1.tar",
      digest: `sha256:${hex}`,
      size,
    },
    diffId: `sha256:${layers === "gzip" ? tarDigest.digest("hex") : hex}`,
  };
}

async function writeImage(
  root: string,
  layout: string,
  artifact: string,
  arch: string,
  layers: LayerFormat,
  listing: ListedEntry[],
  annotations: Record<string, string> = {},
): Promise<{ image: SplitImage; manifest: Descriptor }> {
  const blob = (bytes: Buffer, mediaType: string) => writeBlob(layout, bytes, mediaType);
  const { layer, diffId } = await writeLayer(root, layout, layers);
  const config = blob(
    Buffer.from(
      JSON.stringify({
        architecture: GO_ARCH[arch] ?? arch,
        os: "linux",
        rootfs: {
          type: "layers",
          diff_ids: [diffId],
        },
      }),
    ),
    "application/vnd.oci.image.config.v1+json",
  );
  // The image's file list rides in its manifest, so a plan can check every path a configuration
  // names without pulling a layer (the manifest is pinned by its digest, and so is the list).
  const manifest = blob(
    Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: "application/vnd.oci.image.manifest.v1+json",
        config,
        layers: [layer],
        annotations: { [FILES_ANNOTATION]: JSON.stringify(listing), ...annotations },
      }),
    ),
    "application/vnd.oci.image.manifest.v1+json",
  );
  const bytes = listing.reduce((n, e) => n + (e.type === "file" ? e.size : 0), 0);
  return {
    image: { artifact, digest: manifest.digest, files: listing.length, bytes, layerBytes: layer.size },
    manifest,
  };
}
