// Where the release comes from: the artifact source being installed from (its meta image holds
// the version and every shim's configuration; each image lists its files), or, without one, the
// release installed on the node (kata-install's current version under the install directory).

import type { ListedEntry } from "../artifacts/listing.js";
import type { ArtifactSource, FileSink } from "../artifacts/source.js";
import { UserError } from "../errors.js";
import type { Host } from "../host/host.js";
import { isVersionFile, VERSION_FILES } from "../release-version.js";
import type { ArtifactsRecord } from "../state/artifacts-record.js";
import {
  DEFAULT_CONFIGS,
  GO_CONFIG_DIR,
  isShimConfig,
  type Release,
  RUST_CONFIG_DIR,
  releaseFromFiles,
} from "./release.js";

/** The image that carries the release's version and configuration files. */
export const META = "meta";

/** The release an artifact source holds. */
export async function releaseFromSource(source: ArtifactSource): Promise<Release> {
  const names = await source.images();
  if (!names.includes(META))
    throw new ReleaseSourceError(
      `${source.description} has no "${META}" image: it holds no Kata release kata-install can read (split one with kata-install artifacts split)`,
    );
  // Read into memory, as every entry of an image is checked on the way: nothing is written.
  const sink = new MemorySink((file) => isVersionFile(file) || isShimConfig(file));
  await source.extract(META, sink);
  const release = {
    // Meta's files say the version, or the source records it (a release without VERSION).
    ...releaseFromFiles(
      sink.files,
      source.description,
      await listings(source, names),
      await source.version?.(),
    ),
    defaultConfigs: sink.defaults,
  };
  if (release.shims.size === 0)
    throw new ReleaseSourceError(
      `${source.description}: its meta image holds no shim configuration (made by an earlier kata-install, which left them out?): split the release again with this kata-install`,
    );
  return release;
}

/** An artifact's files, kept in memory as text: those `wanted` says; the others only read past. */
class MemorySink implements FileSink {
  readonly files = new Map<string, string>();
  /** The release's default configuration links, by runtime: their targets. */
  readonly defaults: Partial<Record<"go" | "rust", string>> = {};

  constructor(private readonly wanted: (file: string) => boolean) {}

  open(file: string): ReturnType<FileSink["open"]> {
    const chunks: Buffer[] = [];
    const keep = this.wanted(file);
    return {
      write: (chunk) => {
        if (keep) chunks.push(Buffer.from(chunk));
      },
      close: () => {
        if (keep) this.files.set(file, Buffer.concat(chunks).toString("utf8"));
      },
      abort: () => {
        chunks.length = 0;
      },
    };
  }

  link(file: string, target: string): void {
    for (const [runtime, at] of Object.entries(DEFAULT_CONFIGS) as Array<["go" | "rust", string]>)
      if (file === at) this.defaults[runtime] = target;
  }

  copy(file: string, from: string): void {
    const text = this.files.get(from);
    if (text !== undefined && this.wanted(file)) this.files.set(file, text);
  }
}

export class ReleaseSourceError extends UserError {}

/**
 * The release installed under `dir` by kata-install (its `current` version), or null when there is
 * none. Its images are not known on the node: `installed` names those the journal records.
 */
export async function releaseOnNode(
  host: Host,
  dir: string,
  installed: readonly string[],
): Promise<Release | null> {
  const current = `${dir}/current`;
  if ((await host.readlink(current)) === null) return null;
  const files = new Map<string, string>();
  for (const file of VERSION_FILES) {
    const text = await host.readText(`${current}/${file}`);
    if (text.ok) files.set(file, text.text);
  }
  for (const sub of [GO_CONFIG_DIR, RUST_CONFIG_DIR]) {
    const listing = await host.readDir(`${current}/${sub}`);
    if (!listing.ok) continue;
    for (const name of listing.entries) {
      const file = `${sub}/${name}`;
      if (!isShimConfig(file)) continue;
      const text = await host.readText(`${current}/${file}`);
      if (text.ok) files.set(file, text.text);
    }
  }
  if (![...files.keys()].some(isShimConfig)) return null; // a version of an earlier kata-install
  const defaultConfigs: Partial<Record<"go" | "rust", string>> = {};
  for (const [runtime, at] of Object.entries(DEFAULT_CONFIGS) as Array<["go" | "rust", string]>) {
    const target = await host.readlink(`${current}/${at}`);
    if (target !== null) defaultConfigs[runtime] = target;
  }
  return {
    ...releaseFromFiles(files, `the release installed in ${dir}`, null),
    installed: [...installed],
    defaultConfigs,
  };
}

async function listings(source: ArtifactSource, names: string[]): Promise<Map<string, ListedEntry[]>> {
  const images = new Map<string, ListedEntry[]>();
  for (const name of names) images.set(name, await source.list(name));
  return images;
}

/**
 * The source's release when the node's current version was installed from the very meta image the
 * source holds now (the journal records its digest): read from the node, its images from the
 * source. Null otherwise (another release, a version rolled back, nothing installed).
 */
export async function sameReleaseOnNode(
  host: Host,
  dir: string,
  installed: ArtifactsRecord | null,
  source: ArtifactSource,
): Promise<Release | null> {
  const meta = installed?.meta;
  if (meta === undefined || installed === null || meta.version !== installed.version) return null;
  if ((await host.readlink(`${dir}/current`)) !== `versions/${meta.version}`) return null;
  const digest = await source.identify(META).catch(() => null);
  if (digest !== meta.digest) return null;
  const onNode = await releaseOnNode(host, dir, []);
  if (onNode === null) return null;
  const names = await source.images();
  const { installed: _none, ...release } = onNode;
  return { ...release, where: source.description, images: await listings(source, names) };
}
