import * as z from "zod/mini";
import { FsVerity } from "./fs-verity.js";
import { MkfsErofs } from "./mkfs-erofs.js";

export const RuntimeKind = z.enum(["containerd", "crio", "k3s", "rke2", "k0s", "microk8s"]);
export type RuntimeKind = z.infer<typeof RuntimeKind>;

/** The runtime a kind is, or embeds: what its handlers are written for (containerd's CRI plugin, CRI-O's). */
export const RuntimeFamily = z.enum(["containerd", "crio"]);
export type RuntimeFamily = z.infer<typeof RuntimeFamily>;

/** Where a runtime's handlers are written (layouts.ts HandlerPlacement's kinds). */
export const PlacementKind = z.enum(["containerd", "imported-dir", "drop-in-dir", "template", "crio"]);
export type PlacementKind = z.infer<typeof PlacementKind>;

export const RuntimeHandler = z.object({
  name: z.string(),
  runtimeType: z.nullable(z.string()),
  runtimePath: z.nullable(z.string()),
  /** The Kata (or other) configuration file the handler points at. */
  configPath: z.nullable(z.string()),
  /** The file that declares it. */
  file: z.string(),
  /** containerd: the snapshotter its table names (1.7 on); absent when none, or in facts saved before. */
  snapshotter: z.optional(z.string()),
});
export type RuntimeHandler = z.infer<typeof RuntimeHandler>;

export const Snapshotter = z.object({
  name: z.string(),
  kind: z.enum(["builtin", "proxy"]),
  /** devmapper: its pool; proxy plugins: their socket. */
  detail: z.nullable(z.string()),
});
export type Snapshotter = z.infer<typeof Snapshotter>;

export const RuntimeFacts = z.object({
  kind: z.nullable(RuntimeKind),
  /**
   * Its layout's family and handler placement (layouts.ts), so that rules match what a kind is
   * rather than its name: "containerd" placement is containerd's own config.toml, edited in place
   * or importing a drop-in, whatever the kind. Optional: documents saved before them get them from
   * their kind on load (upgrade.ts).
   */
  family: z.optional(z.nullable(RuntimeFamily)),
  placement: z.optional(z.nullable(PlacementKind)),
  version: z.nullable(z.string()),
  socket: z.nullable(z.object({ path: z.string(), present: z.boolean() })),
  configPath: z.nullable(z.string()),
  configExists: z.boolean(),
  /**
   * Why the runtime's main configuration, though there, cannot be read ("is a directory", "is a
   * FIFO, not a regular file", "invalid TOML at line 2 …"); null when it reads. Optional: facts
   * saved before it was recorded still load.
   */
  configProblem: z.optional(z.nullable(z.string())),
  /** containerd's root `version` key (1, 2, 3 or 4); null when absent or not containerd. */
  configVersion: z.nullable(z.int()),
  imports: z.array(z.string()),
  /** A directory of drop-ins that the runtime already reads (containerd `imports` glob, CRI-O's crio.conf.d). */
  dropInDir: z.nullable(z.string()),
  /**
   * containerd's files in its usual drop-in directory that its configuration does not import
   * (none imported by a glob): an import of the whole directory would make them live. Optional:
   * facts saved before it was recorded still load.
   */
  unimported: z.optional(z.array(z.string())),
  /** k3s/rke2/microk8s generate their containerd config from this template. */
  templatePath: z.nullable(z.string()),
  handlers: z.array(RuntimeHandler),
  snapshotters: z.array(Snapshotter),
  defaultSnapshotter: z.nullable(z.string()),
  /**
   * containerd: the host's mkfs.erofs (erofs-utils), looked for only when EXPERIMENTAL_SETUP_SNAPSHOTTER
   * names erofs (absent: not looked for); null when there is none.
   */
  mkfsErofs: z.optional(z.nullable(MkfsErofs)),
  /**
   * containerd: whether fs-verity works where its erofs snapshotter keeps layers, looked at only
   * when EXPERIMENTAL_SETUP_SNAPSHOTTER names erofs (absent: not looked at).
   */
  fsVerity: z.optional(FsVerity),
  /**
   * containerd: the entries of its disabled_plugins that turn the CRI plugin off (Docker's
   * containerd.io package ships `disabled_plugins = ["cri"]`): the kubelet cannot use it. Absent:
   * none, or facts saved before it was recorded.
   */
  criDisabled: z.optional(z.array(z.string())),
  /**
   * The systemd units the runtime may run as (its layout's) whose unit file is on the node, in the
   * layout's order ("k3s-agent.service"): what a unit of kata-install's that must start before the
   * runtime binds to. Looked for only when EXPERIMENTAL_SETUP_SNAPSHOTTER names nydus (absent: not
   * looked for).
   */
  units: z.optional(z.array(z.string())),
  /** Every runtime that left evidence on the node, and the evidence: why `kind` is what it is. */
  candidates: z.array(z.object({ kind: RuntimeKind, evidence: z.array(z.string()) })),
});
export type RuntimeFacts = z.infer<typeof RuntimeFacts>;
