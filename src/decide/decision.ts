// The Decision: what the decide stage hands to render, and what `preflight`, `explain` and `shims`
// print. Plain data: it serialises as it is.
import type { RuntimeKind } from "../detect/runtime/schema.js";
import type { NydusBinary, NydusBlob, NydusText, NydusTextFile } from "./nydus-source.js";
import type { Decided, Source } from "./provenance.js";
import type { Severity } from "./rules.js";
import type { ErofsMergeMode, ErofsSnapshotterMode } from "./setup-env.js";

export type CheckStatus = "pass" | "fail" | "ignored";

export interface Check {
  id: string;
  severity: Severity;
  status: CheckStatus;
  message: string;
  hint?: string;
  /** The rule(s) behind it; engine checks name the stage ("decide"). */
  rule: string;
  why?: string;
}

export interface Chosen {
  name: string;
  reason: string;
  source: Source;
}

export interface ArtifactChoice extends Chosen {
  /** Where its files come from: Kata's bundled sub-container, or the host's own package. */
  from: "bundled" | "distro";
  /** The shims that need it. */
  neededBy: string[];
}

export interface HandlerSettings {
  snapshotter?: Decided<string>;
  pullType?: Decided<string>;
}

/**
 * containerd's built-in erofs snapshotter, set up as kata-deploy's EXPERIMENTAL_SETUP_SNAPSHOTTER=erofs
 * sets it up, in kata-install's own containerd drop-in.
 */
export interface ErofsSetup {
  /** What asked for it (EXPERIMENTAL_SETUP_SNAPSHOTTER). */
  source: Source;
  /** merged: every layer in one fsmeta.erofs (max_unmerged_layers = 0), runtime-rs only; unmerged: one layer.erofs each. */
  mergeMode: Decided<ErofsMergeMode>;
  /** The writable layer: on disk (default_size "10G") or in memory (default_size "0"). */
  snapshotterMode: Decided<ErofsSnapshotterMode>;
  /** dm-verity over the erofs layers (the snapshotter's dmverity_mode, the differ's enable_dmverity). */
  dmverity: Decided<boolean>;
  /**
   * fs-verity on each layer's image (the snapshotter's enable_fsverity): kata-deploy's true only
   * where fs-verity is known to work under containerd's root, since the snapshotter fails there
   * otherwise and takes containerd's CRI plugin with it.
   */
  fsverity: Decided<boolean>;
}

/**
 * kata-deploy's nydus-for-kata-tee, set up as its EXPERIMENTAL_SETUP_SNAPSHOTTER=nydus sets it up:
 * the binaries of kata-deploy's image under <install dir>/nydus-for-kata-tee/, its configuration
 * there, a systemd unit bound to containerd's, and the proxy plugin in kata-install's drop-in.
 */
export interface NydusSetup {
  /** What asked for it (EXPERIMENTAL_SETUP_SNAPSHOTTER). */
  source: Source;
  /** The instance's name: the proxy plugin's, the unit's, its socket's and data directory's (MULTI_INSTALL_SUFFIX appended). */
  name: string;
  /** Where the binaries are read (kata-install's own file system), and what said so. */
  from: { dir: string; source: Source };
  /** Each binary as read when the plan was made: install writes these bytes or nothing. */
  binaries: Record<NydusBinary, NydusBlob>;
  /** kata-deploy's configuration and unit for it, as its image has them (placeholders unfilled). */
  texts: Record<NydusText, NydusTextFile>;
  /**
   * The systemd units containerd runs as on this node (k3s's server or agent, k0s's worker or
   * controller): the snapshotter's unit starts before them and is wanted by them.
   */
  criUnits: [string, ...string[]];
}

/** A handler of the admin's own (overrides file, kata-deploy's customRuntimes) on a shim's base. */
export interface CustomRuntime {
  handler: string;
  base: string;
  /** The base shim's decided values, with the custom runtime's own over them. */
  config: Record<string, Decided<unknown>>;
  settings: HandlerSettings;
  source: Source;
}

export interface Decision {
  arch: string | null;
  runtime: Decided<RuntimeKind | null>;
  /**
   * containerd: its config.toml edited in place (1.x replaces imported tables whole; also when the
   * version is unknown), rather than a drop-in it imports. Set by the runtime rules.
   */
  containerdInPlace: Decided<boolean>;
  checks: Check[];
  shims: Chosen[];
  dropped: Chosen[];
  defaultShim: Decided<string> | null;
  artifacts: ArtifactChoice[];
  droppedArtifacts: Chosen[];
  /** Shim → Kata configuration key → value. */
  config: Record<string, Record<string, Decided<unknown>>>;
  handlers: Record<string, HandlerSettings>;
  /** Handlers of the admin's own on an installed shim's base (those whose base is not installed are left out, with a warning). */
  customRuntimes: CustomRuntime[];
  /**
   * Where Kata goes, and kata-deploy's DEBUG: a kata-<shim>-debug handler beside each shim's, its
   * guest debug on, the normal handlers' left off (their kernel command line stays measurable).
   */
  install: { prefix: Decided<string>; suffix: Decided<string>; debug: Decided<boolean> };
  /**
   * The admin's containerd drop-in (CONTAINERD_USER_DROP_IN_SOURCE_FILE), copied beside kata-install's
   * own and loaded after it; null without one.
   */
  userDropIn: { file: string; text: string; source: Source } | null;
  /** The erofs snapshotter set up in kata-install's drop-in; null when not asked, or where it cannot go. */
  erofs: ErofsSetup | null;
  /** kata-deploy's nydus-for-kata-tee set up by this install; null when not asked, or where it cannot go. */
  nydus: NydusSetup | null;
  /** The Kata release whose configuration the shims get: its version and where it was read; null if none was. */
  release: { version: string; where: string } | null;
  vars: Record<string, unknown>;
  /** Rules whose match held, in evaluation order. */
  matched: string[];
}

/** An error-severity check that failed and was not ignored: the install would refuse the host. */
export function blocking(decision: Decision): Check[] {
  return decision.checks.filter((c) => c.status === "fail" && c.severity === "error");
}
