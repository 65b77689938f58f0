// Where EXPERIMENTAL_SETUP_SNAPSHOTTER=nydus takes nydus-snapshotter's binaries from: kata-deploy's
// image carries them in /opt/kata-artifacts/nydus-snapshotter/ (built from its
// kata-deploy-static-nydus-snapshotter-for-coco-guest-pull tarball; Kata's release tarballs have
// only libexec/nydusd), and kata-install runs as that image's entrypoint. The directory is read in
// kata-install's own file system (where the image's files are), not under the host root, before
// any stage runs; each binary is hashed here, and the plan records the hash that install checks
// again before it writes a byte.
import { hash } from "../hash.js";
import { readInput } from "../input-file.js";
import { MAX_FILE_BYTES } from "../install/fs-ops.js";
import { SETUP_VARIABLE } from "./setup-env.js";

/** The variable that says where the binaries are, when not where kata-deploy's image has them. */
export const NYDUS_SOURCE_VARIABLE = "KATA_INSTALL_NYDUS_SNAPSHOTTER_DIR";
/** Where kata-deploy's image has them. */
export const DEFAULT_NYDUS_SOURCE = "/opt/kata-artifacts/nydus-snapshotter";
/** The two programs kata-deploy copies onto the node: the snapshotter, and the mount helper its config names. */
export const NYDUS_BINARIES = ["containerd-nydus-grpc", "nydus-overlayfs"] as const;
export type NydusBinary = (typeof NYDUS_BINARIES)[number];

export interface NydusBlob {
  /** Where it is read, in kata-install's own file system. */
  from: string;
  sha256: string;
  size: number;
}

export type NydusSource =
  | {
      ok: true;
      dir: string;
      /** The variable that named the directory; null: kata-deploy's image's place. */
      variable: string | null;
      files: Record<NydusBinary, NydusBlob>;
    }
  | { ok: false; dir: string; variable: string | null; problem: string };

/**
 * The binaries, read and hashed; null when EXPERIMENTAL_SETUP_SNAPSHOTTER does not name nydus (no
 * directory is looked at). A directory or binary that is missing is said (not thrown): on CRI-O
 * the variable is ignored, and decide says what stops an install on containerd.
 */
export function loadNydusSource(env: Readonly<Record<string, string | undefined>>): NydusSource | null {
  const named = (env[SETUP_VARIABLE] ?? "").split(",").some((s) => s.trim() === "nydus");
  if (!named) return null;
  const given = env[NYDUS_SOURCE_VARIABLE]?.trim();
  const dir = (given || DEFAULT_NYDUS_SOURCE).replace(/\/+$/, "") || "/";
  const variable = given ? NYDUS_SOURCE_VARIABLE : null;
  const files: Partial<Record<NydusBinary, NydusBlob>> = {};
  const problems: string[] = [];
  for (const name of NYDUS_BINARIES) {
    const from = `${dir}/${name}`;
    const read = readInput(from, MAX_FILE_BYTES);
    if (!read.ok)
      problems.push(`${from} ${read.missing ? "does not exist" : `cannot be used: ${read.reason}`}`);
    else files[name] = { from, sha256: hash(read.bytes), size: read.bytes.length };
  }
  if (problems.length > 0) return { ok: false, dir, variable, problem: problems.join("; ") };
  return { ok: true, dir, variable, files: files as Record<NydusBinary, NydusBlob> };
}
