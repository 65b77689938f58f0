// `oci-layout:DIR`: artifact images in an OCI image layout on disk (air-gapped nodes), tagged by
// artifact name. Every blob is checked against its digest (and size) before it is used; layers are
// read with the tar library, and any entry that would land outside the prefix — "..", an absolute
// path, a link or hard link pointing out, a device — stops the install, naming the entry.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { Parser, type ReadEntry } from "tar";
import { ArtifactError, type ArtifactFile, type ArtifactSource, linkInside } from "./artifacts.js";
import type { ArtifactSpec } from "./catalogue.js";

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
  platform?: { architecture: string; os: string };
}

const REF_NAME = "org.opencontainers.image.ref.name";
const INDEX_TYPES = new Set([
  "application/vnd.oci.image.index.v1+json",
  "application/vnd.docker.distribution.manifest.list.v2+json",
]);
/** OCI platform names for the kernel's architecture names. */
const GO_ARCH: Record<string, string> = {
  x86_64: "amd64",
  aarch64: "arm64",
  s390x: "s390x",
  ppc64le: "ppc64le",
};

/** Where manifests and blobs come from: a layout on disk, or a registry. */
export interface ImageStore {
  /** Human name of the store, for messages ("oci-layout:/srv/kata"). */
  readonly where: string;
  /** The manifest (or index) tagged for `artifact`, and its descriptor. */
  tagged(artifact: string): Promise<{ descriptor: Descriptor; bytes: Buffer }>;
  /** A blob (or manifest) of `artifact`'s image; the caller checks it against the descriptor. */
  fetch(artifact: string, descriptor: Descriptor, what: string): Promise<Buffer>;
}

/** Bytes that do not hash to their descriptor's digest (or size) stop everything. */
export function verified(store: ImageStore, d: Descriptor, what: string, bytes: Buffer): Buffer {
  const [algorithm, hex] = d.digest.split(":");
  if (algorithm !== "sha256" || !/^[0-9a-f]{64}$/.test(hex ?? ""))
    throw new ArtifactError(`${store.where}: ${what}: unsupported digest ${d.digest}`);
  const actual = createHash("sha256").update(bytes).digest("hex");
  if (actual !== hex)
    throw new ArtifactError(
      `${store.where}: ${what}: blob ${d.digest} does not match its digest (its content hashes to sha256:${actual})`,
    );
  if (typeof d.size === "number" && bytes.length !== d.size)
    throw new ArtifactError(
      `${store.where}: ${what}: blob ${d.digest} is ${bytes.length} bytes, not ${d.size}`,
    );
  return bytes;
}

/** An artifact source reading images from a store: manifests, platform, layers, checked entries. */
export function imageSource(
  store: ImageStore,
  catalogue: Map<string, ArtifactSpec>,
  arch: string | null,
): ArtifactSource {
  const json = <T>(bytes: Buffer, what: string): T => {
    try {
      return JSON.parse(bytes.toString("utf8")) as T;
    } catch (error) {
      throw new ArtifactError(`${store.where}: ${what}: invalid JSON (${(error as Error).message})`);
    }
  };
  const blob = async (artifact: string, d: Descriptor, what: string) =>
    verified(store, d, what, await store.fetch(artifact, d, what));
  return {
    description: store.where,
    /** Compressed layer bytes per image: what a pull of it moves. */
    async sizes(artifacts) {
      const out = new Map<string, number>();
      for (const artifact of artifacts) {
        let tagged: { descriptor: Descriptor; bytes: Buffer };
        try {
          tagged = await store.tagged(artifact);
        } catch {
          continue; // not in this release
        }
        let manifest = json<{ mediaType?: string; manifests?: Descriptor[]; layers?: Descriptor[] }>(
          tagged.bytes,
          artifact,
        );
        if (INDEX_TYPES.has(manifest.mediaType ?? tagged.descriptor.mediaType)) {
          const wanted = GO_ARCH[arch ?? ""] ?? arch;
          const d = (manifest.manifests ?? []).find(
            (m) => m.platform?.os === "linux" && m.platform.architecture === wanted,
          );
          if (!d) continue;
          manifest = json(await blob(artifact, d, artifact), artifact);
        }
        out.set(
          artifact,
          (manifest.layers ?? []).reduce((n, l) => n + (l.size ?? 0), 0),
        );
      }
      return out;
    },
    async files(artifact) {
      const spec = catalogue.get(artifact);
      if (!spec) throw new ArtifactError(`unknown artifact "${artifact}"`);
      const tagged = await store.tagged(artifact);
      let descriptor: Descriptor | undefined = tagged.descriptor;
      let manifest = json<{ mediaType?: string; manifests?: Descriptor[]; layers?: Descriptor[] }>(
        verified(store, descriptor, artifact, tagged.bytes),
        artifact,
      );
      if (INDEX_TYPES.has(manifest.mediaType ?? descriptor.mediaType)) {
        const wanted = GO_ARCH[arch ?? ""] ?? arch;
        descriptor = (manifest.manifests ?? []).find(
          (m) => m.platform?.os === "linux" && m.platform.architecture === wanted,
        );
        if (!descriptor)
          throw new ArtifactError(`${store.where}: image "${artifact}" has no linux/${wanted} manifest`);
        manifest = json(await blob(artifact, descriptor, artifact), artifact);
      }
      const files = new Map<string, ArtifactFile>();
      for (const layer of manifest.layers ?? []) {
        const bytes = await blob(artifact, layer, `${artifact} layer ${layer.digest}`);
        for (const file of await readLayer(
          bytes,
          `${store.where}: ${artifact} layer ${layer.digest.slice(0, 19)}`,
          spec,
          files,
        )) {
          files.set(file.path, file);
        }
      }
      return [...files.values()];
    },
  };
}

const RELEASE_FILE = "kata-release.json";

function releasePins(dir: string): Record<string, string> {
  try {
    const release = JSON.parse(fs.readFileSync(path.join(dir, RELEASE_FILE), "utf8")) as {
      artifacts?: Record<string, { digest?: string }>;
    };
    return Object.fromEntries(
      Object.entries(release.artifacts ?? {}).map(([name, a]) => [name, a.digest ?? ""]),
    );
  } catch {
    return {};
  }
}

export function ociLayoutSource(
  dir: string,
  catalogue: Map<string, ArtifactSpec>,
  arch: string | null,
): ArtifactSource {
  const where = `oci-layout:${dir}`;
  const read = (d: Descriptor, what: string): Buffer => {
    const hex = d.digest.split(":")[1] ?? "";
    if (!/^[0-9a-f]{64}$/.test(hex))
      throw new ArtifactError(`${where}: ${what}: unsupported digest ${d.digest}`);
    try {
      return fs.readFileSync(path.join(dir, "blobs", "sha256", hex));
    } catch {
      throw new ArtifactError(`${where}: ${what}: blob ${d.digest} is missing`);
    }
  };
  const store: ImageStore = {
    where,
    async tagged(artifact) {
      let index: { manifests?: Descriptor[] };
      try {
        index = JSON.parse(fs.readFileSync(path.join(dir, "index.json"), "utf8"));
      } catch {
        throw new ArtifactError(`${where}: no readable index.json: not an OCI image layout`);
      }
      const descriptor = (index.manifests ?? []).find((m) => m.annotations?.[REF_NAME] === artifact);
      if (!descriptor) throw new ArtifactError(`${where}: no image tagged "${artifact}"`);
      // A release manifest beside the layout (written by `artifacts split`) pins each image.
      const pinned = releasePins(dir)[artifact];
      if (pinned !== undefined && pinned !== descriptor.digest) {
        throw new ArtifactError(
          `${where}: the image tagged "${artifact}" is ${descriptor.digest}, but ${RELEASE_FILE} pins ${pinned}`,
        );
      }
      return { descriptor, bytes: read(descriptor, artifact) };
    },
    async fetch(_artifact, d, what) {
      return read(d, what);
    },
  };
  return imageSource(store, catalogue, arch);
}

/** The files of one layer (a tar, gzipped or not), each checked before it is accepted. */
function readLayer(
  bytes: Buffer,
  where: string,
  spec: ArtifactSpec,
  earlier: Map<string, ArtifactFile>,
): Promise<ArtifactFile[]> {
  return new Promise((resolve, reject) => {
    const out: ArtifactFile[] = [];
    const seen = new Map(earlier);
    let failed = false;
    const fail = (message: string) => {
      if (!failed) reject(new ArtifactError(`${where}: ${message}`));
      failed = true;
    };
    const parser = new Parser({ strict: true });
    parser.on("entry", (entry: ReadEntry) => {
      const chunks: Buffer[] = [];
      entry.on("data", (c: Buffer) => chunks.push(c));
      entry.on("end", () => {
        if (failed) return;
        const problem = accept(entry, Buffer.concat(chunks), spec, seen);
        if (typeof problem === "string") return fail(problem);
        if (problem) {
          out.push(problem);
          seen.set(problem.path, problem);
        }
      });
    });
    parser.on("error", (error: Error) => fail(`unreadable archive: ${error.message}`));
    parser.on("end", () => {
      if (!failed) resolve(out);
    });
    parser.end(bytes);
  });
}

/** The entry as an artifact file, null for what is skipped (directories), or why it is refused. */
function accept(
  entry: ReadEntry,
  bytes: Buffer,
  spec: ArtifactSpec,
  seen: Map<string, ArtifactFile>,
): ArtifactFile | null | string {
  const raw = entry.path;
  const name = `entry "${raw}"`;
  if (raw.startsWith("/")) return `${name}: an absolute path is refused`;
  if (raw.split("/").includes("..")) return `${name}: ".." would climb out of the image`;
  const clean = path.posix.normalize(raw.replace(/^\.\//, "")).replace(/\/$/, "");
  if (entry.type === "Directory") return null;
  if (clean === "opt" || clean === "opt/kata") return null;
  if (!clean.startsWith("opt/kata/")) return `${name}: outside opt/kata, where an artifact's files are`;
  const file = clean.slice("opt/kata/".length);
  if (path.posix.basename(file).startsWith(".wh."))
    return `${name}: layer whiteouts are not used by artifacts`;
  if (!spec.matches(file)) return `${name}: not part of artifact "${spec.name}" (artifacts/catalogue.toml)`;
  const mode = (entry.mode ?? 0o644) & 0o7777;
  switch (entry.type) {
    case "File":
    case "OldFile":
    case "ContiguousFile":
      return { path: file, mode, bytes };
    case "SymbolicLink": {
      const outside = linkInside(file, entry.linkpath ?? "");
      return outside === null
        ? { path: file, mode: 0o777, bytes: Buffer.alloc(0), link: entry.linkpath }
        : `${name}: ${outside}`;
    }
    case "Link": {
      // A hard link may only repeat a file of this artifact that came before it.
      const target = path.posix.normalize((entry.linkpath ?? "").replace(/^\.\//, ""));
      const source = target.startsWith("opt/kata/") ? seen.get(target.slice("opt/kata/".length)) : undefined;
      if (!source) return `${name}: a hard link to ${entry.linkpath}, which is not a file of this artifact`;
      return { ...source, path: file };
    }
    default:
      return `${name}: a ${entry.type} entry is refused (only files, directories and links inside the prefix)`;
  }
}
