// What a shim needs from its release's images: every path its configuration names under the
// install directory, followed through the release's links to the file it reaches, and the images
// that hold each entry on the way. The split reads it to give a file the catalogue does not know
// to the shim that needs it; a plan reads it to pull exactly those images.

import type { Reached, ReleaseTree } from "../artifacts/listing.js";
import { LINKS } from "./links.js";
import { type NamedPath, pathsIn } from "./named-paths.js";
import type { ShimConfig } from "./release.js";

/** Where a release's files are when nothing moved them. */
export const RELEASE_DIR = "/opt/kata";

export interface Chain {
  key: string;
  /** The path as the configuration names it. */
  path: string;
  /** Relative to the release's /opt/kata. */
  rel: string;
  reached: Reached;
}

/** The shim binary its handler runs: a path of the release, as a configuration key would name it. */
export function shimBinary(runtime: "go" | "rust"): string {
  return runtime === "rust" ? "runtime-rs/bin/containerd-shim-kata-v2" : "bin/containerd-shim-kata-v2";
}

/**
 * The paths `named` (a shim's configuration's) and its shim binary reach in the release tree, for
 * those under `dir` (the install directory) that Kata's links take into the version installed.
 * Paths elsewhere (a host's qemu) are no image's.
 */
export function chainsOf(
  named: Array<Pick<NamedPath, "key" | "path">>,
  runtime: "go" | "rust",
  dir: string,
  tree: ReleaseTree,
): Chain[] {
  const out: Chain[] = [];
  const all = [...named, { key: "handler shim binary", path: `${dir}/${shimBinary(runtime)}` }];
  for (const { key, path } of all) {
    if (!path.startsWith(`${dir}/`)) continue;
    const rel = path.slice(dir.length + 1).replace(/\/+$/, "");
    if (!LINKS.some((l) => rel === l || rel.startsWith(`${l}/`))) continue;
    out.push({ key, path, rel, reached: tree.reach(rel) });
  }
  return out;
}

/** The chains of a shim's configuration as the release ships it (nothing decided over it). */
export function releaseChains(shim: ShimConfig, tree: ReleaseTree): Chain[] {
  return chainsOf(pathsIn(shim.shim, shim.config.table), shim.runtime, RELEASE_DIR, tree);
}
