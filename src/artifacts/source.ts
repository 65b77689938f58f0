// Where artifacts come from: the interface every source (a directory, an OCI layout, a registry)
// gives, and `dir:DIR`, the plainest of them. Read-only: a source writes only into the sink it is
// handed (a staging directory, or memory).
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileTree } from "../file-tree.js";
import { readInputText } from "../input-file.js";
import { VERSION_FILES, versionIn } from "../release-version.js";
import { ArtifactError } from "./artifact-error.js";
import { type ArtifactCatalogue, admits } from "./catalogue.js";
import type { ListedEntry } from "./listing.js";
import type { StagingDir } from "./staging.js";

/** Null when a link target (relative to the link's directory) stays inside the prefix; else why not. */
export function linkInside(file: string, target: string): string | null {
  if (target.startsWith("/")) return `an absolute link (to ${target}) would point out of the prefix`;
  const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(file), target));
  if (resolved === ".." || resolved.startsWith("../"))
    return `its link (to ${target}) points out of the prefix`;
  return null;
}

/**
 * Where artifacts come from. A source names an artifact's content cheaply first (an image's
 * digest), so that a node that has it already writes nothing; then streams its files into a
 * staging directory, checking every entry (and every blob against its digest) on the way.
 */
export interface ArtifactSource {
  readonly description: string;
  /** What identifies the artifact's content here: an image manifest's digest, a hash of files. */
  identify(artifact: string): Promise<string>;
  /** Write the artifact's files (paths relative to the prefix) into `into`. */
  extract(artifact: string, into: FileSink): Promise<void>;
  /** Bytes each artifact of the release weighs in this source (absent: not in the source). */
  sizes(artifacts: string[]): Promise<Map<string, number>>;
  /** The artifact's files and links, without their bytes: what a plan checks paths against. */
  list(artifact: string): Promise<ListedEntry[]>;
  /** Every image of the release this source holds, by name. */
  images(): Promise<string[]>;
  /**
   * The release's version as the source records it beside the files (the meta image's version
   * annotation, or a directory's data-collection script), for a release without VERSION.
   */
  version?(): Promise<string | undefined>;
  /**
   * What of these artifacts the source holds the manifests of but could not give (a layer blob
   * missing, or cut short), each said; told without reading the bytes. Absent: a source that cannot
   * tell without pulling (a registry) or holds the files themselves (a directory).
   */
  unavailable?(artifacts: string[]): Promise<string[]>;
}

/** Where a source writes an artifact's files: a staging directory, or memory (a release's meta, read by a plan). */
export type FileSink = Pick<StagingDir, "open" | "link" | "copy">;

/**
 * `dir:DIR`: DIR/<artifact>/opt/kata/… as the artifact's image holds it. Entries that would land
 * outside the prefix (links pointing out, "..") and files the catalogue gives to another artifact
 * are refused, naming the entry.
 */
export function directorySource(dir: string, catalogue: ArtifactCatalogue): ArtifactSource {
  // Listed once a run: a plan lists each image for its release, and again for its path check.
  const listed = new Map<string, ListedEntry[]>();
  const identities = new Map<string, string>();
  /** The artifact's entries, checked, in order: files with their mode, links with their target. */
  const entries = (artifact: string) => {
    if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/.test(artifact))
      throw new ArtifactError(`dir:${dir}: "${artifact}" is no artifact name`);
    const root = path.join(dir, artifact, "opt", "kata");
    if (!fs.existsSync(root))
      throw new ArtifactError(`dir:${dir}: artifact "${artifact}" is missing (no ${root})`);
    const out: Array<{ file: string; full: string; mode: number; size: number; link?: string }> = [];
    for (const { path: file, full, dirent } of fileTree(root)) {
      if (dirent.isDirectory()) continue;
      const entry = `dir:${dir}: ${artifact}/opt/kata/${file}`;
      const refused = admits(catalogue, artifact, file);
      if (refused !== null) throw new ArtifactError(`${entry} cannot be in image "${artifact}": ${refused}`);
      if (dirent.isSymbolicLink()) {
        const link = fs.readlinkSync(full);
        const outside = linkInside(file, link);
        if (outside !== null) throw new ArtifactError(`${entry}: ${outside}`);
        out.push({ file, full, mode: 0o777, size: 0, link });
        continue;
      }
      // Stat'ed as it is now (the directory's word on the type may be a moment old).
      const st = fs.lstatSync(full);
      if (st.isFile()) out.push({ file, full, mode: st.mode & 0o7777, size: st.size });
      else throw new ArtifactError(`${entry} is not a regular file or link (devices and pipes are refused)`);
    }
    return out;
  };
  return {
    description: `dir:${dir}`,
    async images() {
      try {
        return fs
          .readdirSync(dir, { withFileTypes: true })
          .filter((e) => e.isDirectory() && fs.existsSync(path.join(dir, e.name, "opt", "kata")))
          .map((e) => e.name)
          .sort();
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        const why =
          code === "ENOENT"
            ? "no such directory"
            : code === "ENOTDIR"
              ? "not a directory"
              : code === "EACCES" || code === "EPERM"
                ? "permission denied"
                : `cannot be read (${code})`;
        throw new ArtifactError(`dir:${dir}: ${why}`);
      }
    },
    async version() {
      // The files say it, in whichever artifact has them: VERSION, or the data-collection script.
      for (const artifact of await this.images())
        for (const file of VERSION_FILES) {
          const read = readInputText(path.join(dir, artifact, "opt", "kata", file), 1 << 20);
          const version = read.ok ? versionIn(file, read.text) : undefined;
          if (version) return version;
        }
      return undefined;
    },
    async sizes(artifacts) {
      const out = new Map<string, number>();
      for (const artifact of artifacts) {
        const root = path.join(dir, artifact);
        if (!fs.existsSync(root)) continue;
        // Listed already (the plan read the release): its files' sizes, without walking again.
        const known = listed.get(artifact);
        if (known !== undefined) {
          out.set(
            artifact,
            known.reduce((n, e) => n + (e.type === "file" ? e.size : 0), 0),
          );
          continue;
        }
        let total = 0;
        for (const { full, dirent } of fileTree(root)) if (dirent.isFile()) total += fs.lstatSync(full).size;
        out.set(artifact, total);
      }
      return out;
    },
    async list(artifact) {
      let listing = listed.get(artifact);
      if (listing === undefined) {
        listing = entries(artifact).map((e) =>
          e.link !== undefined
            ? { path: e.file, type: "link" as const, target: e.link }
            : { path: e.file, type: "file" as const, mode: e.mode, size: e.size },
        );
        listed.set(artifact, listing);
      }
      return listing;
    },
    async identify(artifact) {
      // A directory has no digest of its own: its content is hashed (read, nothing written), once
      // a run (a plan asks for meta's, then for every installed artifact's).
      let id = identities.get(artifact);
      if (id === undefined) {
        const digest = createHash("sha256");
        for (const e of entries(artifact)) {
          digest.update(`${e.file}\0${e.mode}\0${e.link ?? ""}\0`);
          if (e.link === undefined) digest.update(fs.readFileSync(e.full));
          digest.update("\0");
        }
        id = `dir:${digest.digest("hex")}`;
        identities.set(artifact, id);
      }
      return id;
    },
    async extract(artifact, into) {
      const buffer = Buffer.allocUnsafe(1 << 20);
      for (const e of entries(artifact)) {
        if (e.link !== undefined) {
          into.link(e.file, e.link);
          continue;
        }
        const writer = into.open(e.file, e.mode);
        const fd = fs.openSync(e.full, "r");
        try {
          for (let n = fs.readSync(fd, buffer); n > 0; n = fs.readSync(fd, buffer))
            writer.write(buffer.subarray(0, n));
          writer.close();
        } finally {
          fs.closeSync(fd);
        }
      }
    },
  };
}
