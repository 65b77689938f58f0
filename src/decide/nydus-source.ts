// Where EXPERIMENTAL_SETUP_SNAPSHOTTER=nydus takes nydus-snapshotter from: kata-deploy's image
// carries it in /opt/kata-artifacts/nydus-snapshotter/ — the two binaries (built from its
// kata-deploy-static-nydus-snapshotter-for-coco-guest-pull tarball; Kata's release tarballs have
// only libexec/nydusd) and kata-deploy's own configuration and systemd unit for them, with
// @PLACEHOLDERS@ kata-deploy fills in — and kata-install runs as that image's entrypoint. The
// directory is read in kata-install's own file system (where the image's files are), not under the
// host root, before any stage runs (src/inputs/nydus-source.ts); each binary is hashed there, and
// the plan records the hash that install checks again before it writes a byte. The two texts are
// the image's, filled in as kata-deploy fills them, never re-typed: a placeholder kata-install does
// not know is refused here.

import { parse } from "smol-toml";
import { tomlErrorText } from "../toml-error.js";

/** The variable that says where the binaries are, when not where kata-deploy's image has them. */
export const NYDUS_SOURCE_VARIABLE = "KATA_INSTALL_NYDUS_SNAPSHOTTER_DIR";
/** Where kata-deploy's image has them. */
export const DEFAULT_NYDUS_SOURCE = "/opt/kata-artifacts/nydus-snapshotter";
/** The two programs kata-deploy copies onto the node: the snapshotter, and the mount helper its config names. */
export const NYDUS_BINARIES = ["containerd-nydus-grpc", "nydus-overlayfs"] as const;
export type NydusBinary = (typeof NYDUS_BINARIES)[number];

/** kata-deploy's two texts beside them: nydus's configuration for guest pull, and its systemd unit. */
export const NYDUS_TEXTS = {
  config: "config-guest-pulling.toml",
  unit: "nydus-snapshotter.service",
} as const;
export type NydusText = keyof typeof NYDUS_TEXTS;

/**
 * What kata-deploy's install_nydus_snapshotter fills each text's placeholders with, by file; the
 * ones marked required must be there (the socket the proxy plugin dials, the binary and
 * configuration the unit runs), or what kata-install writes would not be what it copies.
 */
export const NYDUS_PLACEHOLDERS = {
  config: { SNAPSHOTTER_ROOT_DIR: false, SNAPSHOTTER_GRPC_SOCKET_ADDRESS: true, NYDUS_OVERLAYFS_PATH: false },
  unit: { CONTAINERD_NYDUS_GRPC_BINARY: true, CONFIG_GUEST_PULLING: true, CRI_SERVICE: false },
} as const satisfies Record<NydusText, Record<string, boolean>>;
export type NydusValues<T extends NydusText> = Record<keyof (typeof NYDUS_PLACEHOLDERS)[T], string>;

/** `text` with its @NAME@ placeholders filled from `values` (each name known: the source checked it). */
export function fillNydusText(text: string, values: Readonly<Record<string, string>>): string {
  return text.replace(/@([A-Z0-9_]+)@/g, (whole, name: string) => values[name] ?? whole);
}

export interface NydusTextFile {
  /** Where it is read, in kata-install's own file system. */
  from: string;
  text: string;
}

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
      texts: Record<NydusText, NydusTextFile>;
    }
  | { ok: false; dir: string; variable: string | null; problem: string };

/**
 * Why a text of the source cannot be filled in as kata-deploy fills it: a placeholder it does not
 * know, one it must fill missing, or (the configuration) TOML nydus could not read once filled.
 */
export function nydusTextProblem(key: NydusText, text: string): string | null {
  const known: Readonly<Record<string, boolean>> = NYDUS_PLACEHOLDERS[key];
  const used = new Set([...text.matchAll(/@([A-Z0-9_]+)@/g)].map((m) => m[1] ?? ""));
  const unknown = [...used].filter((name) => !(name in known));
  if (unknown.length > 0)
    return `${unknown.map((n) => `@${n}@`).join(", ")} ${unknown.length === 1 ? "is not a placeholder" : "are not placeholders"} kata-deploy fills in (it fills ${Object.keys(
      known,
    )
      .map((n) => `@${n}@`)
      .join(", ")})`;
  const missing = Object.keys(known).filter((name) => known[name] && !used.has(name));
  if (missing.length > 0)
    return `has no ${missing.map((n) => `@${n}@`).join(", ")}: kata-install would not run what it copies, where containerd looks for it`;
  if (key === "config")
    try {
      parse(fillNydusText(text, Object.fromEntries(Object.keys(known).map((n) => [n, "/x"]))));
    } catch (error) {
      return `is not TOML once filled in: ${tomlErrorText(error)}`;
    }
  return null;
}
