// The files of a release the catalogue does not know, given an image once every tarball is read:
// one a shim's configuration needs (named, or reached through the links of what it names) goes
// with the file or link that leads to it — into the image of the known file it reaches, else of
// the known link it is reached through, else an image "extra-<the named file>" of its own; one
// nothing needs goes into "unclaimed", which no shim pulls. Nothing here is refused for being new.
import fs from "node:fs";
import path from "node:path";
import { EXTRA_PREFIX, UNCLAIMED } from "../artifacts/catalogue.js";
import type { ReleaseTree } from "../artifacts/listing.js";
import { releaseChains } from "../release/needs.js";
import { isShimConfig, type Release, releaseFromFiles } from "../release/release.js";
import { isVersionFile } from "../release-version.js";

/** Where files of no known artifact wait in the staging directory until they are given one. */
export const UNASSIGNED = ".unassigned";

/** What `assignUnknown` needs of a release entry. */
export interface Assignable {
  file: string;
  type: "file" | "link";
  owner: string | null;
}

export interface ShimNeeds {
  shim: string;
  runtime: "go" | "rust";
  /** The images the release's configuration of this shim needs, by name. */
  images: string[];
  /** Paths it names that the release does not have: the shim cannot be installed from it. */
  missing: Array<{ key: string; path: string }>;
}

export interface Assigned {
  release: Release;
  shims: ShimNeeds[];
  /** Images made for files the catalogue does not know, each with its files and who needs it. */
  extra: Array<{ image: string; files: string[]; neededBy: string[] }>;
  /** Files nothing needs, in the image no shim pulls. */
  unclaimed: string[];
  problems: string[];
}

/** "share/kata-containers/vmlinux-confidential.container" → "extra-vmlinux-confidential.container". */
function extraImage(file: string): string {
  const name = path.posix.basename(file).replace(/[^A-Za-z0-9_.-]/g, "-");
  return `${EXTRA_PREFIX}${name}`.slice(0, 128);
}

export function assignUnknown(
  entries: Map<string, Assignable>,
  staging: string,
  tree: ReleaseTree,
  fallbackVersion: string | undefined,
): Assigned {
  const problems: string[] = [];
  const files = new Map<string, string>();
  for (const e of entries.values()) {
    if (e.type !== "file" || (!isVersionFile(e.file) && !isShimConfig(e.file))) continue;
    files.set(e.file, fs.readFileSync(stagedPath(staging, e), "utf8"));
  }
  const release = releaseFromFiles(files, "the tarballs", null, fallbackVersion);
  const neededBy = new Map<string, Set<string>>();
  const shims: ShimNeeds[] = [];
  for (const shim of [...release.shims.values()].sort((a, b) => (a.shim < b.shim ? -1 : 1))) {
    const images = new Set<string>(["meta"]);
    const missing: ShimNeeds["missing"] = [];
    for (const chain of releaseChains(shim, tree)) {
      const { reached } = chain;
      if (reached.kind === "loop") {
        problems.push(`${shim.file}: ${chain.key} = ${chain.path}: a loop of links`);
        continue;
      }
      if (reached.kind === "missing") {
        // Through a link: the release is broken where a shim needs it. Named directly: this
        // release does not carry that shim's file (arm64's Go TEE configurations), said, not refused.
        if (reached.through.length > 1)
          problems.push(
            `${shim.file}: ${chain.key} = ${chain.path}: the link ${reached.through.at(-2)} dangles (${reached.path} is in none of the tarballs)`,
          );
        else missing.push({ key: chain.key, path: chain.path });
        continue;
      }
      const onTheWay = reached.through.map((p) => entries.get(p)).filter((e) => e !== undefined);
      const known = onTheWay.filter((e) => e.owner !== null && e.owner !== UNASSIGNED);
      const finalOwner = entries.get(reached.path)?.owner;
      const home =
        finalOwner !== undefined && finalOwner !== null && finalOwner !== UNASSIGNED
          ? finalOwner
          : (known.at(-1)?.owner ?? extraImage(chain.rel));
      for (const e of onTheWay) {
        if (e.owner === UNASSIGNED) e.owner = home;
        if (e.owner !== null) {
          images.add(e.owner);
          if (e.owner.startsWith(EXTRA_PREFIX))
            neededBy.set(e.owner, (neededBy.get(e.owner) ?? new Set()).add(shim.shim));
        }
      }
    }
    shims.push({ shim: shim.shim, runtime: shim.runtime, images: [...images].sort(), missing });
  }
  const unclaimed: string[] = [];
  for (const e of [...entries.values()].sort((a, b) => (a.file < b.file ? -1 : 1)))
    if (e.owner === UNASSIGNED) {
      e.owner = UNCLAIMED;
      unclaimed.push(e.file);
    }
  // The files move from where they waited into the image they were given.
  for (const e of entries.values()) {
    const from = path.join(staging, UNASSIGNED, "opt", "kata", e.file);
    if (e.owner === null || (!fs.existsSync(from) && !isLink(from))) continue;
    const to = stagedPath(staging, e);
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.renameSync(from, to);
  }
  fs.rmSync(path.join(staging, UNASSIGNED), { recursive: true, force: true });
  const extra = [...neededBy]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([image, by]) => ({
      image,
      files: [...entries.values()]
        .filter((e) => e.owner === image)
        .map((e) => e.file)
        .sort(),
      neededBy: [...by].sort(),
    }));
  return { release, shims, extra, unclaimed, problems };
}

function isLink(file: string): boolean {
  return fs.lstatSync(file, { throwIfNoEntry: false })?.isSymbolicLink() === true;
}

export function stagedPath(staging: string, e: Pick<Assignable, "file" | "owner">): string {
  return path.join(staging, e.owner ?? UNASSIGNED, "opt", "kata", e.file);
}
