// `oci-layout:DIR`: artifact images in an OCI image layout on disk (air-gapped nodes), tagged by
// artifact name, pinned by the release manifest `artifacts split` writes beside it.
import fs from "node:fs";
import path from "node:path";
import { notRegular } from "../host/host.js";
import { readInput, readInputText } from "../input-file.js";
import { ArtifactError, ImageAbsent } from "./artifact-error.js";
import { fileStream, hashFileOnWorker, WORKER_THRESHOLD } from "./blob-file.js";
import type { ArtifactCatalogue } from "./catalogue.js";
import { type Descriptor, type ImageStore, imageSource, MAX_MANIFEST_BYTES } from "./image-source.js";
import type { ArtifactSource } from "./source.js";

const REF_NAME = "org.opencontainers.image.ref.name";

const RELEASE_FILE = "kata-release.json";

/**
 * The digests the release file beside the layout pins, by image; none without the file. One that
 * is there but cannot be read is an error: taking it for none would turn the pinning off unsaid.
 */
function releasePins(dir: string, where: string): Record<string, string> {
  const file = path.join(dir, RELEASE_FILE);
  const read = readInputText(file, MAX_MANIFEST_BYTES);
  if (!read.ok) {
    if (read.missing) return {};
    throw new ArtifactError(`${where}: ${RELEASE_FILE} ${read.reason}: its digest pins cannot be read`);
  }
  let release: unknown;
  try {
    release = JSON.parse(read.text);
  } catch (error) {
    throw new ArtifactError(
      `${where}: ${RELEASE_FILE} is not JSON (${(error as Error).message}): its digest pins cannot be read`,
    );
  }
  const artifacts = (release as { artifacts?: unknown } | null)?.artifacts ?? {};
  if (typeof artifacts !== "object" || artifacts === null || Array.isArray(artifacts))
    throw new ArtifactError(`${where}: ${RELEASE_FILE}: "artifacts" is not an object of images`);
  const pins: Record<string, string> = {};
  for (const [name, a] of Object.entries(artifacts)) {
    const digest = (a as { digest?: unknown } | null)?.digest;
    if (typeof digest !== "string" || !/^sha256:[0-9a-f]{64}$/.test(digest))
      throw new ArtifactError(`${where}: ${RELEASE_FILE}: artifacts.${name}.digest is not a sha256 digest`);
    pins[name] = digest;
  }
  return pins;
}

export function ociLayoutSource(
  dir: string,
  catalogue: ArtifactCatalogue,
  arch: string | null,
): ArtifactSource {
  const where = `oci-layout:${dir}`;
  /** The blob's file, and why it cannot be read as the descriptor says (null: it can). */
  const blobFile = (d: Descriptor, what: string): { file: string; problem: string | null } => {
    const hex = d.digest.split(":")[1] ?? "";
    if (!/^[0-9a-f]{64}$/.test(hex))
      throw new ArtifactError(`${where}: ${what}: unsupported digest ${d.digest}`);
    const file = path.join(dir, "blobs", "sha256", hex);
    const st = fs.statSync(file, { throwIfNoEntry: false });
    if (st === undefined) return { file, problem: "is missing" };
    if (!st.isFile()) return { file, problem: notRegular(st) ?? "is a directory" };
    if (typeof d.size === "number" && st.size !== d.size)
      return {
        file,
        problem: `is ${st.size} bytes, not the ${d.size} its descriptor says: cut short, or another blob`,
      };
    return { file, problem: null };
  };
  const blobPath = (d: Descriptor, what: string): string => {
    const { file, problem } = blobFile(d, what);
    if (problem !== null) throw new ArtifactError(`${where}: ${what}: blob ${d.digest} ${problem}`);
    return file;
  };
  /** A manifest or index: kilobytes, read whole, bounded. */
  const read = (d: Descriptor, what: string): Buffer => {
    const got = readInput(blobPath(d, what), MAX_MANIFEST_BYTES);
    if (!got.ok) throw new ArtifactError(`${where}: ${what}: blob ${d.digest} ${got.reason}`);
    return got.bytes;
  };
  // Read once a source: a plan asks for every image of the release.
  let index: { manifests?: Descriptor[] } | undefined;
  let pins: Record<string, string> | undefined;
  const store: ImageStore = {
    where,
    async tagged(artifact) {
      if (index === undefined) {
        const text = readInputText(path.join(dir, "index.json"), MAX_MANIFEST_BYTES);
        if (!text.ok) throw new ArtifactError(`${where}: index.json ${text.reason}: not an OCI image layout`);
        try {
          index = JSON.parse(text.text) as { manifests?: Descriptor[] };
        } catch {
          throw new ArtifactError(`${where}: index.json is not JSON: not an OCI image layout`);
        }
      }
      const tagged = (index.manifests ?? []).filter((m) => m.annotations?.[REF_NAME] === artifact);
      if (tagged.length > 1)
        throw new ArtifactError(
          `${where}: index.json tags ${tagged.length} images "${artifact}" (${tagged.map((m) => m.digest.slice(0, 19)).join(", ")}): ambiguous`,
        );
      const descriptor = tagged[0];
      if (!descriptor) throw new ImageAbsent(`${where}: no image tagged "${artifact}"`);
      // A release manifest beside the layout (written by `artifacts split`) pins each image.
      pins ??= releasePins(dir, where);
      const pinned = pins[artifact];
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
    blobProblem(d, what) {
      return blobFile(d, what).problem;
    },
    async open(_artifact, d, what) {
      const file = blobPath(d, what);
      const large = (fs.statSync(file).size ?? 0) >= WORKER_THRESHOLD;
      return { stream: fileStream(file), ...(large ? { digest: hashFileOnWorker(file) } : {}) };
    },
  };
  return imageSource(store, catalogue, arch);
}
