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

interface Descriptor {
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

export function ociLayoutSource(
  dir: string,
  catalogue: Map<string, ArtifactSpec>,
  arch: string | null,
): ArtifactSource {
  const where = `oci-layout:${dir}`;
  const blob = (d: Descriptor, what: string): Buffer => {
    const [algorithm, hex] = d.digest.split(":");
    if (algorithm !== "sha256" || !/^[0-9a-f]{64}$/.test(hex ?? ""))
      throw new ArtifactError(`${where}: ${what}: unsupported digest ${d.digest}`);
    let bytes: Buffer;
    try {
      bytes = fs.readFileSync(path.join(dir, "blobs", "sha256", hex as string));
    } catch {
      throw new ArtifactError(`${where}: ${what}: blob ${d.digest} is missing`);
    }
    const actual = createHash("sha256").update(bytes).digest("hex");
    if (actual !== hex)
      throw new ArtifactError(
        `${where}: ${what}: blob ${d.digest} does not match its digest (its content hashes to sha256:${actual})`,
      );
    if (typeof d.size === "number" && bytes.length !== d.size)
      throw new ArtifactError(`${where}: ${what}: blob ${d.digest} is ${bytes.length} bytes, not ${d.size}`);
    return bytes;
  };
  const json = <T>(bytes: Buffer, what: string): T => {
    try {
      return JSON.parse(bytes.toString("utf8")) as T;
    } catch (error) {
      throw new ArtifactError(`${where}: ${what}: invalid JSON (${(error as Error).message})`);
    }
  };
  return {
    description: where,
    async files(artifact) {
      const spec = catalogue.get(artifact);
      if (!spec) throw new ArtifactError(`unknown artifact "${artifact}"`);
      let indexBytes: Buffer;
      try {
        indexBytes = fs.readFileSync(path.join(dir, "index.json"));
      } catch {
        throw new ArtifactError(`${where}: no index.json: not an OCI image layout`);
      }
      const index = json<{ manifests?: Descriptor[] }>(indexBytes, "index.json");
      let descriptor = (index.manifests ?? []).find((m) => m.annotations?.[REF_NAME] === artifact);
      if (!descriptor) throw new ArtifactError(`${where}: no image tagged "${artifact}"`);
      let manifest = json<{ mediaType?: string; manifests?: Descriptor[]; layers?: Descriptor[] }>(
        blob(descriptor, artifact),
        artifact,
      );
      if (INDEX_TYPES.has(manifest.mediaType ?? descriptor.mediaType)) {
        const wanted = GO_ARCH[arch ?? ""] ?? arch;
        descriptor = (manifest.manifests ?? []).find(
          (m) => m.platform?.os === "linux" && m.platform.architecture === wanted,
        );
        if (!descriptor)
          throw new ArtifactError(`${where}: image "${artifact}" has no linux/${wanted} manifest`);
        manifest = json(blob(descriptor, artifact), artifact);
      }
      const files = new Map<string, ArtifactFile>();
      for (const layer of manifest.layers ?? []) {
        for (const file of await readLayer(
          blob(layer, `${artifact} layer ${layer.digest}`),
          `${where}: ${artifact} layer ${layer.digest.slice(0, 19)}`,
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
