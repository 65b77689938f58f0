// `oci-layout:DIR`: artifact images in an OCI image layout on disk (air-gapped nodes), tagged by
// artifact name, pinned by the release manifest `artifacts split` writes beside it.
import fs from "node:fs";
import path from "node:path";
import type { ArtifactCatalogue } from "../artifacts/catalogue.js";
import { notRegular } from "../host/host.js";
import { readInput, readInputText } from "../input-file.js";
import { ArtifactError } from "./artifact-error.js";
import type { ArtifactSource } from "./artifacts.js";
import { fileStream, hashFileOnWorker, WORKER_THRESHOLD } from "./blob-file.js";
import { type Descriptor, type ImageStore, imageSource, MAX_MANIFEST_BYTES } from "./image-source.js";

const REF_NAME = "org.opencontainers.image.ref.name";

const RELEASE_FILE = "kata-release.json";

function releasePins(dir: string): Record<string, string> {
  try {
    const read = readInputText(path.join(dir, RELEASE_FILE), MAX_MANIFEST_BYTES);
    if (!read.ok) return {};
    const release = JSON.parse(read.text) as {
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
  catalogue: ArtifactCatalogue,
  arch: string | null,
): ArtifactSource {
  const where = `oci-layout:${dir}`;
  const blobPath = (d: Descriptor, what: string): string => {
    const hex = d.digest.split(":")[1] ?? "";
    if (!/^[0-9a-f]{64}$/.test(hex))
      throw new ArtifactError(`${where}: ${what}: unsupported digest ${d.digest}`);
    const file = path.join(dir, "blobs", "sha256", hex);
    const st = fs.statSync(file, { throwIfNoEntry: false });
    if (st === undefined) throw new ArtifactError(`${where}: ${what}: blob ${d.digest} is missing`);
    if (!st.isFile())
      throw new ArtifactError(`${where}: ${what}: blob ${d.digest} ${notRegular(st) ?? "is a directory"}`);
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
      if (!descriptor) throw new ArtifactError(`${where}: no image tagged "${artifact}"`);
      // A release manifest beside the layout (written by `artifacts split`) pins each image.
      pins ??= releasePins(dir);
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
    async open(_artifact, d, what) {
      const file = blobPath(d, what);
      const large = (fs.statSync(file).size ?? 0) >= WORKER_THRESHOLD;
      return { stream: fileStream(file), ...(large ? { digest: hashFileOnWorker(file) } : {}) };
    },
  };
  return imageSource(store, catalogue, arch);
}
