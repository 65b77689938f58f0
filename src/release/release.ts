// The Kata release being installed, as kata-install knows it: its version, each shim's
// configuration file as the release ships it, and (when read from an artifact source) every image
// with its files. The release is the source of truth for what the release knows — which shims it
// has, their keys and defaults, the paths they name; kata-install owns only its decisions.

import type { ListedEntry } from "../artifacts/listing.js";
import { itemAt, must } from "../at.js";
import { UserError } from "../errors.js";
import { VERSION_FILES, versionIn } from "../release-version.js";
import { type ConfigFile, ConfigFileError, readConfigFile } from "./config-file.js";

/** Where the Go runtime's configurations are, relative to the release's /opt/kata. */
export const GO_CONFIG_DIR = "share/defaults/kata-containers";
/** Where the Rust runtime's are. */
export const RUST_CONFIG_DIR = "share/defaults/kata-containers/runtime-rs";

export interface ShimConfig {
  shim: string;
  runtime: "go" | "rust";
  /** The file in the release, relative to /opt/kata. */
  file: string;
  /** The file's text, as the release ships it. */
  text: string;
  /** The [hypervisor.<name>] section it configures, found without reading the whole file. */
  hypervisor: string | null;
  /** The file read: its table and keys (read on first use: a plan reads the few shims it installs). */
  readonly config: ConfigFile;
}

export interface Release {
  /** "4.1.0"; "unknown" when the release does not say. */
  version: string;
  /** Where it was read from, for messages. */
  where: string;
  shims: ReadonlyMap<string, ShimConfig>;
  /**
   * Every image of the release with its files (relative to /opt/kata), from the artifact source;
   * null when the release was read from the node, which keeps no image of its own.
   */
  images: ReadonlyMap<string, ListedEntry[]> | null;
  /** Read from the node: the images its journal records as installed (nothing new can be pulled). */
  installed?: string[];
  /** What kata-install noticed and set aside (a Rust file named like a Go shim), said in the plan. */
  notes: string[];
  /**
   * The release's default configurations (share/defaults/kata-containers/configuration.toml, and
   * runtime-rs/'s): the file each links to ("configuration-qemu.toml"), which kata-runtime and Kata's
   * other tools read when given no --config. Absent where the release has none.
   */
  defaultConfigs?: Partial<Record<"go" | "rust", string>>;
}

/** Where the release keeps its default configurations: links to one shim's file. */
export const DEFAULT_CONFIGS: Record<"go" | "rust", string> = {
  go: `${GO_CONFIG_DIR}/configuration.toml`,
  rust: `${RUST_CONFIG_DIR}/configuration.toml`,
};

/** "configuration-qemu-runtime-rs.toml" in a configuration directory → the shim it configures. */
export function shimOfFile(file: string): { shim: string; runtime: "go" | "rust" } | null {
  const go = new RegExp(`^${GO_CONFIG_DIR}/configuration-([A-Za-z0-9_.-]+)\\.toml$`).exec(file);
  if (go) return { shim: itemAt(go, 1, "the shim name"), runtime: "go" };
  const rust = new RegExp(`^${RUST_CONFIG_DIR}/configuration-([A-Za-z0-9_.-]+)\\.toml$`).exec(file);
  if (rust) return { shim: itemAt(rust, 1, "the shim name"), runtime: "rust" };
  return null;
}

/** Whether a release path is a shim's configuration file (the release's own, not the default link). */
export function isShimConfig(file: string): boolean {
  return shimOfFile(file) !== null;
}

/**
 * A release from its files: `files` maps release paths (relative to /opt/kata) to their text, for
 * the configuration files and the version files. A shim is a configuration file of the release;
 * where both runtimes ship one name (remote), the Go runtime's is that shim, as kata-deploy has it.
 */
export function releaseFromFiles(
  files: ReadonlyMap<string, string>,
  where: string,
  images: ReadonlyMap<string, ListedEntry[]> | null,
  fallbackVersion?: string,
): Release {
  const shims = new Map<string, ShimConfig>();
  const notes: string[] = [];
  const version = versionOf(files) ?? fallbackVersion ?? "unknown";
  const sorted = [...files.keys()].sort((a, b) => runtimeRank(a) - runtimeRank(b) || (a < b ? -1 : 1));
  for (const file of sorted) {
    const of = shimOfFile(file);
    if (of === null) continue;
    if (shims.has(of.shim)) {
      notes.push(
        `Kata ${version} ships ${file} as well as ${shims.get(of.shim)?.file}: the ${of.shim} shim is the Go runtime's, as kata-deploy has it`,
      );
      continue;
    }
    const text = must(files.get(file), file);
    let config: ConfigFile | undefined;
    const hypervisor = /^\s*\[\s*hypervisor\.([A-Za-z0-9_-]+)\s*\]/m.exec(text)?.[1] ?? null;
    shims.set(of.shim, {
      shim: of.shim,
      // Dragonball is built into runtime-rs only: Kata 3.0 put its file beside the Go runtime's
      // (runtime-rs had no directory of its own yet), and kata-deploy 3.0 ran it with runtime-rs's
      // shim (kata-deploy.sh @ 3.0.0: /opt/kata/runtime-rs/bin/containerd-shim-kata-v2).
      runtime: hypervisor === "dragonball" ? "rust" : of.runtime,
      file,
      text,
      hypervisor,
      get config() {
        if (config === undefined)
          try {
            config = readConfigFile(text, `${file} of Kata ${version} (${where})`);
          } catch (error) {
            if (error instanceof ConfigFileError) throw new ReleaseError(error.message);
            throw error;
          }
        return config;
      },
    });
  }
  return { version, where, shims, images, notes };
}

/** A release kata-install cannot read (a configuration file that does not parse): named. */
export class ReleaseError extends UserError {}

function runtimeRank(file: string): number {
  return file.startsWith(`${RUST_CONFIG_DIR}/`) ? 1 : 0;
}

/**
 * The release's version: its VERSION file, else its data-collection script's (release-version.ts).
 * (versions.yaml names the versions of Kata's components, not Kata's own; a release with neither
 * is named by its tarballs, see versionFromTarballName.)
 */
export function versionOf(files: ReadonlyMap<string, string>): string | undefined {
  for (const file of VERSION_FILES) {
    const text = files.get(file);
    const version = text === undefined ? undefined : versionIn(file, text);
    if (version) return version;
  }
  return undefined;
}

/** "kata-static-4.1.0-amd64.tar.zst" → "4.1.0": the release's version when its files do not say. */
export function versionFromTarballName(name: string): string | undefined {
  return /^kata-(?:[a-z]+-)*static-(\d+\.\d+\.\d+[^-]*)-/.exec(name)?.[1];
}

/** "Kata 4.1.0's configuration-qemu.toml": how messages name a shim's base file. */
export function baseName(release: Release, shim: string): string {
  const config = release.shims.get(shim);
  const file = config ? config.file.slice(config.file.lastIndexOf("/") + 1) : `configuration-${shim}.toml`;
  return `Kata ${release.version}'s ${config?.runtime === "rust" ? "runtime-rs/" : ""}${file}`;
}
