// What of kata-deploy's tree under the prefix is kata-deploy's, on a takeover: the release's files
// (any image of the release being installed lists them), and what kata-deploy writes itself (each
// shim's configuration and drop-ins under share/defaults, its runtime drop-in, versions.yaml, its
// nydus). Anything else there is someone else's — an admin's tool in bin/, a guest image of their
// own in share/kata-containers/ — and is kept (in versions/kata-deploy.kept, as a version's foreign
// files are), never removed with kata-deploy's tree. Also: the release's tools kata-deploy's node
// had that this install does not put back (kata-runtime, kata-monitor, …), said by name.
import fs from "node:fs";
import path from "node:path";
import type { ArtifactSource } from "../artifacts/source.js";
import type { Host } from "../host/host.js";
import { ownPath } from "../host/own-place.js";
import { KATA_DEPLOY_ENTRIES } from "./prefix.js";

/** What kata-deploy writes under its prefix beside the release's own files. */
const WRITTEN_BY_KATA_DEPLOY = [
  /^share\/defaults\/kata-containers(\/|$)/,
  /^containerd\/config\.d\/kata-deploy(-[\w.-]+)?\.toml$/,
  /^versions\.yaml$/,
  /^VERSION$/,
  /^nydus-for-kata-tee(\/|$)/,
  /^nydus-snapshotter(\/|$)/,
];

export interface DeployTree {
  /** kata-deploy's entries (files and links), relative to the prefix. */
  ours: Set<string>;
  /** Someone else's, relative to the prefix. */
  foreign: string[];
  /** Programs of the release under bin/ that the install's artifacts do not hold: gone with the tree. */
  dropped: string[];
}

/**
 * Every file and link under the prefix's kata-deploy entries, relative to the prefix, and each
 * empty directory as "<dir>/" (kata-deploy's config.d/ with no drop-in: not someone else's).
 */
function entriesUnder(real: string): string[] {
  const out: string[] = [];
  for (const top of KATA_DEPLOY_ENTRIES) {
    const at = path.join(real, top);
    const st = fs.lstatSync(at, { throwIfNoEntry: false });
    if (st === undefined) continue;
    if (!st.isDirectory()) {
      out.push(top);
      continue;
    }
    for (const rel of fs.readdirSync(at, { recursive: true }) as string[]) {
      const entry = `${top}/${rel}`;
      if (!fs.lstatSync(path.join(real, entry)).isDirectory()) out.push(entry);
      else if (fs.readdirSync(path.join(real, entry)).length === 0) out.push(`${entry}/`);
    }
  }
  return out.sort();
}

/** kata-deploy's tree under `prefix`, sorted into its entries and someone else's. */
export async function deployTree(
  host: Host,
  prefix: string,
  source: ArtifactSource,
  installing: readonly string[],
): Promise<DeployTree> {
  const real = await ownPath(host, prefix, prefix, "dir");
  const release = new Set<string>();
  const installed = new Set<string>();
  for (const image of await source.images())
    for (const entry of await source.list(image)) {
      release.add(entry.path);
      if (installing.includes(image)) installed.add(entry.path);
    }
  const ours = new Set<string>();
  const foreign: string[] = [];
  for (const entry of entriesUnder(real))
    if (release.has(entry) || WRITTEN_BY_KATA_DEPLOY.some((re) => re.test(entry))) ours.add(entry);
    else foreign.push(entry);
  const dropped = [...ours].filter((e) => e.startsWith("bin/") && release.has(e) && !installed.has(e));
  return { ours, foreign, dropped };
}
