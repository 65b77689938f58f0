// Each container runtime kata-install configures, in one record: how detection recognises it,
// where its handlers go, and what makes it read them. Keyed by RuntimeKind, so a kind without its
// record does not compile, and the stages switch over `handlers.kind` exhaustively.
import { versionParts } from "../../version.js";
import type { PlacementKind, RuntimeFamily, RuntimeKind } from "./schema.js";

/** Where a runtime's Kata handlers are written. */
export type HandlerPlacement =
  /** containerd: config.toml itself on 1.x (or an unknown version), else a drop-in of `dir` it imports. */
  | { kind: "containerd"; dir: string; defaultVersion: number }
  /** k3s, rke2: a drop-in in the directory their template already imports (none: refused). */
  | { kind: "imported-dir"; defaultVersion: number }
  /** k0s: a drop-in in a directory it reads by itself. */
  | { kind: "drop-in-dir"; dir: string; defaultVersion: number }
  /** microk8s: its containerd template, edited in place (it renders config.toml from it). */
  | { kind: "template" }
  /** CRI-O: a drop-in of its crio.conf.d. */
  | { kind: "crio"; dir: string };

/**
 * What makes the runtime read changed handlers, a closed set switched over exhaustively (install/
 * runtime.ts): systemd `verb` on the first active unit; a command of the host's; nothing (it picks
 * changes up by itself).
 */
export type RuntimeRestart =
  | {
      kind: "systemd";
      verb: "restart" | "reload";
      /** The name plans and journals use for it. */
      target: string;
      /** The systemd units it may run as, the first active one is used. */
      units: string[];
      reason: string;
    }
  | {
      kind: "command";
      /** The name plans and journals use for it. */
      target: string;
      /** The host command and its arguments. */
      argv: [string, ...string[]];
      reason: string;
    }
  | { kind: "none" };

export interface RuntimeLayout {
  kind: RuntimeKind;
  /** The runtime it is or embeds: what its handlers are written for. */
  family: RuntimeFamily;
  /**
   * The kind it is a more specific form of (k3s embeds containerd, whose evidence a k3s node may
   * also show): detection tries it before that one. "none": none.
   */
  moreSpecificThan: RuntimeKind | "none";
  binaries: string[];
  socket: string;
  /** The main configuration file. */
  config: string;
  /** Further files or directories that show the runtime is installed. */
  marks: string[];
  /** Templates it renders its configuration from, in order of preference. */
  templates: string[];
  /** Arguments that make the binary print its version. */
  versionArgs: string[];
  /**
   * Whose version that is: "family", the family's own runtime's (containerd's, which its version
   * checks read); "distribution", the embedding distribution's (k3s v1.30 does not say which
   * containerd it embeds, so containerd's version is not known).
   */
  versionOf: "family" | "distribution";
  handlers: HandlerPlacement;
  restart: RuntimeRestart;
  /**
   * The kubelet beside it: a systemd unit of its own ("own": plain containerd, CRI-O), or inside
   * the distribution's binary ("embedded": k3s, rke2, k0s, microk8s's kubelite) — what a reset
   * restarts besides the runtime.
   */
  kubelet: "own" | "embedded";
  /**
   * The K8S_DISTRIBUTION value (kata-deploy's k8sDistribution) that names this kind's own
   * containerd directory; "none": the default layout's (k8s, kubeadm, vanilla).
   */
  distribution: string;
}

/** Where systemd reads unit files, the admin's and packages' alike. */
export const SYSTEMD_UNIT_DIRS = [
  "/etc/systemd/system",
  "/run/systemd/system",
  "/usr/local/lib/systemd/system",
  "/usr/lib/systemd/system",
  "/lib/systemd/system",
];

const K3S_CONTAINERD = "/var/lib/rancher/k3s/agent/etc/containerd";
const RKE2_CONTAINERD = "/var/lib/rancher/rke2/agent/etc/containerd";
export const CRIO_CONFIG = "/etc/crio/crio.conf";
export const CRIO_DROP_IN_DIR = "/etc/crio/crio.conf.d";

const restartOf = (target: string, units: string[] = [target]): RuntimeRestart => ({
  kind: "systemd",
  verb: "restart",
  target,
  units,
  reason: `${target} reads its runtime handlers only at start`,
});

export const RUNTIME_LAYOUTS: Record<RuntimeKind, RuntimeLayout> = {
  k0s: {
    kind: "k0s",
    family: "containerd",
    moreSpecificThan: "containerd",
    binaries: ["/usr/local/bin/k0s", "/usr/bin/k0s"],
    socket: "/run/k0s/containerd.sock",
    config: "/etc/k0s/containerd.toml",
    marks: ["/etc/k0s", "/var/lib/k0s"],
    templates: [],
    versionArgs: ["version"],
    versionOf: "distribution",
    handlers: { kind: "drop-in-dir", dir: "/etc/k0s/containerd.d", defaultVersion: 2 },
    // k0s merges a containerd.d drop-in with a CRI table (ours) into containerd's configuration
    // only when its worker component starts; on a change it only signals containerd, which keeps
    // the configuration it started with. So the worker's unit is restarted: k0sworker, or
    // k0scontroller on a controller that runs workloads.
    restart: {
      kind: "systemd",
      verb: "restart",
      target: "k0s",
      units: ["k0sworker", "k0scontroller"],
      reason:
        "k0s merges containerd.d's runtime handlers into containerd's configuration only when its worker starts",
    },
    kubelet: "embedded",
    distribution: "k0s",
  },
  k3s: {
    kind: "k3s",
    family: "containerd",
    moreSpecificThan: "containerd",
    binaries: ["/usr/local/bin/k3s", "/usr/bin/k3s"],
    socket: "/run/k3s/containerd/containerd.sock",
    config: `${K3S_CONTAINERD}/config.toml`,
    marks: ["/etc/rancher/k3s"],
    templates: [`${K3S_CONTAINERD}/config-v3.toml.tmpl`, `${K3S_CONTAINERD}/config.toml.tmpl`],
    versionArgs: ["--version"],
    versionOf: "distribution",
    handlers: { kind: "imported-dir", defaultVersion: 2 },
    restart: restartOf("k3s", ["k3s", "k3s-agent"]),
    kubelet: "embedded",
    distribution: "k3s",
  },
  rke2: {
    kind: "rke2",
    family: "containerd",
    moreSpecificThan: "containerd",
    binaries: ["/usr/local/bin/rke2", "/usr/bin/rke2", "/opt/rke2/bin/rke2"],
    socket: "/run/k3s/containerd/containerd.sock",
    config: `${RKE2_CONTAINERD}/config.toml`,
    marks: ["/etc/rancher/rke2"],
    templates: [`${RKE2_CONTAINERD}/config-v3.toml.tmpl`, `${RKE2_CONTAINERD}/config.toml.tmpl`],
    versionArgs: ["--version"],
    versionOf: "distribution",
    handlers: { kind: "imported-dir", defaultVersion: 2 },
    restart: restartOf("rke2", ["rke2-server", "rke2-agent"]),
    kubelet: "embedded",
    distribution: "rke2",
  },
  microk8s: {
    kind: "microk8s",
    family: "containerd",
    moreSpecificThan: "containerd",
    binaries: ["/snap/bin/microk8s"],
    socket: "/var/snap/microk8s/common/run/containerd.sock",
    config: "/var/snap/microk8s/current/args/containerd.toml",
    marks: ["/var/snap/microk8s/current"],
    templates: ["/var/snap/microk8s/current/args/containerd-template.toml"],
    versionArgs: ["version"],
    versionOf: "distribution",
    handlers: { kind: "template" },
    restart: restartOf("snap.microk8s.daemon-containerd"),
    kubelet: "embedded",
    distribution: "microk8s",
  },
  crio: {
    kind: "crio",
    family: "crio",
    moreSpecificThan: "none",
    binaries: ["/usr/bin/crio", "/usr/local/bin/crio"],
    socket: "/var/run/crio/crio.sock",
    config: CRIO_CONFIG,
    marks: [CRIO_DROP_IN_DIR],
    templates: [],
    versionArgs: ["--version"],
    versionOf: "family",
    handlers: { kind: "crio", dir: CRIO_DROP_IN_DIR },
    restart: {
      kind: "systemd",
      verb: "reload",
      target: "crio",
      units: ["crio"],
      reason: "CRI-O re-reads its runtime handlers on reload",
    },
    kubelet: "own",
    distribution: "none",
  },
  containerd: {
    kind: "containerd",
    family: "containerd",
    moreSpecificThan: "none",
    binaries: ["/usr/bin/containerd", "/usr/local/bin/containerd"],
    socket: "/run/containerd/containerd.sock",
    config: "/etc/containerd/config.toml",
    marks: [],
    templates: [],
    versionArgs: ["--version"],
    versionOf: "family",
    handlers: { kind: "containerd", dir: "/etc/containerd/conf.d", defaultVersion: 3 },
    restart: restartOf("containerd"),
    kubelet: "own",
    distribution: "none",
  },
};

/**
 * When the kubelet does not say which runtime it uses: a kind before the one it is a more specific
 * form of (the embedding distributions before containerd), else in the table's order.
 */
export const DETECTION_ORDER: RuntimeKind[] = detectionOrder(Object.values(RUNTIME_LAYOUTS));

function detectionOrder(layouts: RuntimeLayout[]): RuntimeKind[] {
  const out: RuntimeKind[] = [];
  const visit = (layout: RuntimeLayout) => {
    if (out.includes(layout.kind)) return;
    for (const other of layouts) if (other.moreSpecificThan === layout.kind) visit(other);
    out.push(layout.kind);
  };
  for (const layout of layouts) visit(layout);
  return out;
}

/** The name plans and journals give a restart; null for none. */
export function restartTarget(restart: RuntimeRestart): string | null {
  switch (restart.kind) {
    case "systemd":
    case "command":
      return restart.target;
    case "none":
      return null;
    default:
      return unreachable(restart);
  }
}

/** A branch a closed set has no member for: does not compile when a member is added unhandled. */
export function unreachable(value: never): never {
  throw new Error(`unhandled: ${JSON.stringify(value)}`);
}

/** The restart a plan or journal names by its target. */
export function restartFor(target: string): RuntimeRestart | null {
  return Object.values(RUNTIME_LAYOUTS).find((l) => restartTarget(l.restart) === target)?.restart ?? null;
}

/** The family and placement facts of a kind (null for no runtime). */
export function layoutFacts(kind: RuntimeKind | null): {
  family: RuntimeFamily | null;
  placement: PlacementKind | null;
} {
  if (kind === null) return { family: null, placement: null };
  const layout = RUNTIME_LAYOUTS[kind];
  return { family: layout.family, placement: layout.handlers.kind };
}

/**
 * containerd's version, in parts, as the runtime found reported it; null when that is not known:
 * not read, or not containerd's own (a distribution's version, CRI-O's). What containerd's
 * versions can do (a snapshotter per handler from 1.7, erofs from 2.2) is checked against it.
 */
export function containerdVersion(runtime: {
  kind: RuntimeKind | null;
  version: string | null;
}): number[] | null {
  if (runtime.kind === null || runtime.version === null) return null;
  const layout = RUNTIME_LAYOUTS[runtime.kind];
  return layout.family === "containerd" && layout.versionOf === "family"
    ? versionParts(runtime.version)
    : null;
}
