// Where the release comes from: the artifact source being installed from (its meta image holds
// the version and every shim's configuration; each image lists its files), or, without one, the
// release installed on the node (kata-install's current version under the install directory).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { UserError } from "../errors.js";
import type { Host } from "../host/host.js";
import type { ArtifactSource } from "../install/artifacts.js";
import type { ListedEntry } from "../install/listing.js";
import { StagingDir } from "../install/staging.js";
import { GO_CONFIG_DIR, isShimConfig, type Release, RUST_CONFIG_DIR, releaseFromFiles } from "./release.js";

/** The image that carries the release's version and configuration files. */
export const META = "meta";

/** The release an artifact source holds. */
export async function releaseFromSource(source: ArtifactSource): Promise<Release> {
  const names = await source.images();
  if (!names.includes(META))
    throw new ReleaseSourceError(
      `${source.description} has no "${META}" image: it holds no Kata release kata-install can read (split one with kata-install artifacts split)`,
    );
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-release-"));
  try {
    await source.extract(META, new StagingDir(scratch));
    const files = new Map<string, string>();
    for (const rel of fs.readdirSync(scratch, { recursive: true }).map(String)) {
      const file = rel.split(path.sep).join("/");
      if (file !== "VERSION" && !isShimConfig(file)) continue;
      const full = path.join(scratch, rel);
      if (fs.lstatSync(full).isFile()) files.set(file, fs.readFileSync(full, "utf8"));
    }
    const images = new Map<string, ListedEntry[]>();
    for (const name of names) images.set(name, await source.list(name));
    const release = releaseFromFiles(files, source.description, images);
    if (release.shims.size === 0)
      throw new ReleaseSourceError(
        `${source.description}: its meta image holds no shim configuration (made by an earlier kata-install, which left them out?): split the release again with this kata-install`,
      );
    return release;
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
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
  const version = await host.readText(`${current}/VERSION`);
  if (version.ok) files.set("VERSION", version.text);
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
  return { ...releaseFromFiles(files, `the release installed in ${dir}`, null), installed: [...installed] };
}
