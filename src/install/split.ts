// `artifacts split`: Kata's release tarball (kata-static-<version>-<arch>.tar.zst/.xz/.gz, all under
// opt/kata/) republished as one OCI image per artifact of the catalogue, in an OCI image layout,
// with a release manifest (kata-release.json) recording each image's digest for installs to pin.
// Whatever the tarball holds that no artifact claims is reported, not dropped silently.
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { createGunzip, gzipSync } from "node:zlib";
import { Decompress } from "fzstd";
import { create as createTar, Parser, type ReadEntry } from "tar";
// A CommonJS module whose named exports Node cannot see from ESM: take them from the default.
import xzDecompress from "xz-decompress";
import { ArtifactError, linkInside } from "./artifacts.js";
import { type ArtifactSpec, owner } from "./catalogue.js";

export const RELEASE_MANIFEST = "kata-release.json";
const GO_ARCH: Record<string, string> = {
  x86_64: "amd64",
  aarch64: "arm64",
  s390x: "s390x",
  ppc64le: "ppc64le",
};

export interface SplitImage {
  artifact: string;
  digest: string;
  files: number;
  layerBytes: number;
}

export interface SplitReport {
  images: SplitImage[];
  unclaimed: string[];
}

/** The tarball's bytes, decompressed by its name's suffix. */
function decompressed(file: string): Readable {
  const raw = fs.createReadStream(file);
  if (/\.(zst|tzst)$/.test(file)) {
    const out = new Readable({ read() {} });
    const zstd = new Decompress((chunk, final) => {
      out.push(Buffer.from(chunk));
      if (final) out.push(null);
    });
    raw.on("data", (c) => {
      try {
        zstd.push(new Uint8Array(c as Buffer));
      } catch (error) {
        out.destroy(error as Error);
      }
    });
    raw.on("end", () => zstd.push(new Uint8Array(0), true));
    raw.on("error", (error) => out.destroy(error));
    return out;
  }
  if (/\.(xz|txz)$/.test(file))
    return Readable.fromWeb(
      new xzDecompress.XzReadableStream(Readable.toWeb(raw) as ReadableStream<Uint8Array>) as never,
    );
  if (/\.(gz|tgz)$/.test(file)) return raw.pipe(createGunzip());
  return raw;
}

/**
 * gzip: what registries serve, smaller to move. tar: uncompressed, for a layout on a node's own
 * disk, where gunzip would cost more than the bytes it saves (see bench/artifacts.bench.ts).
 */
export type LayerFormat = "gzip" | "tar";

export async function splitRelease(
  tarball: string,
  layout: string,
  catalogue: Map<string, ArtifactSpec>,
  arch: string,
  layers: LayerFormat = "gzip",
): Promise<SplitReport> {
  if (!fs.existsSync(tarball)) throw new ArtifactError(`${tarball}: no such file`);
  const staging = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-split-"));
  try {
    const unclaimed = await unpackByArtifact(tarball, staging, catalogue);
    fs.mkdirSync(path.join(layout, "blobs", "sha256"), { recursive: true });
    fs.writeFileSync(path.join(layout, "oci-layout"), '{"imageLayoutVersion":"1.0.0"}\n');
    const indexFile = path.join(layout, "index.json");
    const index = fs.existsSync(indexFile)
      ? JSON.parse(fs.readFileSync(indexFile, "utf8"))
      : { schemaVersion: 2, manifests: [] };
    const images: SplitImage[] = [];
    for (const artifact of fs.readdirSync(staging).sort()) {
      images.push(await writeImage(path.join(staging, artifact), layout, artifact, arch, index, layers));
    }
    fs.writeFileSync(indexFile, `${JSON.stringify(index, null, 2)}\n`);
    const release = {
      arch,
      artifacts: Object.fromEntries(images.map((i) => [i.artifact, { digest: i.digest }])),
    };
    fs.writeFileSync(path.join(layout, RELEASE_MANIFEST), `${JSON.stringify(release, null, 2)}\n`);
    return { images, unclaimed };
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

/** Every entry into staging/<artifact>/opt/kata/…; returns what no artifact claims. */
async function unpackByArtifact(
  tarball: string,
  staging: string,
  catalogue: Map<string, ArtifactSpec>,
): Promise<string[]> {
  const unclaimed: string[] = [];
  const where = new Map<string, string>(); // release path → artifact, for hard links
  const parser = new Parser({ strict: true });
  const pending: Promise<void>[] = [];
  const input = decompressed(tarball);
  let failure: Error | null = null;
  parser.on("entry", (entry: ReadEntry) => {
    const clean = path.posix.normalize(entry.path.replace(/^\.\//, "")).replace(/\/$/, "");
    const bail = (message: string) => {
      failure ??= new ArtifactError(`${tarball}: entry "${entry.path}": ${message}`);
      entry.resume();
    };
    if (failure) return entry.resume();
    if (entry.path.startsWith("/") || clean.split("/").includes(".."))
      return bail("escapes the release root");
    if (entry.type === "Directory" || clean === "opt" || clean === "opt/kata") return entry.resume();
    const file = clean.startsWith("opt/kata/") ? clean.slice("opt/kata/".length) : null;
    const artifact = file === null ? undefined : owner(catalogue, file);
    if (file === null || artifact === undefined) {
      unclaimed.push(clean);
      return entry.resume();
    }
    const target = path.join(staging, artifact, "opt", "kata", file);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    where.set(file, artifact);
    if (entry.type === "SymbolicLink") {
      const outside = linkInside(file, entry.linkpath ?? "");
      if (outside !== null) return bail(outside);
      fs.symlinkSync(entry.linkpath as string, target);
      return entry.resume();
    }
    if (entry.type === "Link") {
      const linked = path.posix
        .normalize((entry.linkpath ?? "").replace(/^\.\//, ""))
        .replace(/^opt\/kata\//, "");
      const from = where.get(linked);
      if (!from) return bail(`a hard link to ${entry.linkpath}, which is not a file of the release`);
      fs.copyFileSync(path.join(staging, from, "opt", "kata", linked), target);
      return entry.resume();
    }
    if (entry.type !== "File" && entry.type !== "OldFile" && entry.type !== "ContiguousFile")
      return bail(`a ${entry.type} entry is refused`);
    const mode = (entry.mode ?? 0o644) & 0o7777;
    const out = fs.createWriteStream(target, { mode });
    pending.push(
      new Promise<void>((resolve, reject) => {
        out.on("finish", () => resolve());
        out.on("error", reject);
        entry.pipe(out);
      }).then(() => fs.chmodSync(target, mode)),
    );
  });
  await new Promise<void>((resolve, reject) => {
    input.on("error", (error) => reject(new ArtifactError(`${tarball}: cannot read: ${error.message}`)));
    parser.on("error", (error: Error) =>
      reject(new ArtifactError(`${tarball}: not a readable tar: ${error.message}`)),
    );
    parser.on("end", () => resolve());
    input.pipe(parser as unknown as NodeJS.WritableStream);
  });
  await Promise.all(pending);
  if (failure) throw failure;
  return unclaimed.sort();
}

async function writeImage(
  root: string,
  layout: string,
  artifact: string,
  arch: string,
  index: { manifests: Array<Record<string, unknown>> },
  layers: LayerFormat,
): Promise<SplitImage> {
  const blob = (bytes: Buffer, mediaType: string) => {
    const hex = createHash("sha256").update(bytes).digest("hex");
    fs.writeFileSync(path.join(layout, "blobs", "sha256", hex), bytes);
    return { mediaType, digest: `sha256:${hex}`, size: bytes.length };
  };
  // Reproducible layers: sorted entries, no owners or times of the machine that split.
  const chunks: Buffer[] = [];
  const files = fs
    .readdirSync(root, { recursive: true })
    .map(String)
    .filter((p) => !fs.lstatSync(path.join(root, p)).isDirectory());
  for await (const chunk of createTar({ cwd: root, portable: true, mtime: new Date(0) }, ["opt"]))
    chunks.push(chunk as Buffer);
  const tarBytes = Buffer.concat(chunks);
  const layer =
    layers === "gzip"
      ? blob(gzipSync(tarBytes, { level: 6 }), "application/vnd.oci.image.layer.v1.tar+gzip")
      : blob(tarBytes, "application/vnd.oci.image.layer.v1.tar");
  const config = blob(
    Buffer.from(
      JSON.stringify({
        architecture: GO_ARCH[arch] ?? arch,
        os: "linux",
        rootfs: {
          type: "layers",
          diff_ids: [`sha256:${createHash("sha256").update(tarBytes).digest("hex")}`],
        },
      }),
    ),
    "application/vnd.oci.image.config.v1+json",
  );
  const manifest = blob(
    Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: "application/vnd.oci.image.manifest.v1+json",
        config,
        layers: [layer],
      }),
    ),
    "application/vnd.oci.image.manifest.v1+json",
  );
  index.manifests = index.manifests.filter(
    (m) =>
      (m.annotations as Record<string, string> | undefined)?.["org.opencontainers.image.ref.name"] !==
      artifact,
  );
  index.manifests.push({ ...manifest, annotations: { "org.opencontainers.image.ref.name": artifact } });
  return { artifact, digest: manifest.digest, files: files.length, layerBytes: layer.size };
}
