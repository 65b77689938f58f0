// Each container runtime kata-install configures, in one record: how detection recognises it,
// where its handlers go, and what makes it read them. Keyed by RuntimeKind, so a kind without its
// record does not compile, and the stages switch over `handlers.kind` exhaustively.
import type { RuntimeKind } from "./schema.js";

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

/** What makes the runtime read changed handlers: systemd `verb` on the first active unit. */
export interface RuntimeRestart {
  verb: "restart" | "reload";
  /** The name plans and journals use for it. */
  target: string;
  /** The systemd units it may run as, the first active one is used. */
  units: string[];
  reason: string;
}

export interface RuntimeLayout {
  kind: RuntimeKind;
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
  handlers: HandlerPlacement;
  /** Null: the runtime picks changes up by itself (none does today). */
  restart: RuntimeRestart | null;
}

const K3S_CONTAINERD = "/var/lib/rancher/k3s/agent/etc/containerd";
const RKE2_CONTAINERD = "/var/lib/rancher/rke2/agent/etc/containerd";
export const CRIO_CONFIG = "/etc/crio/crio.conf";
export const CRIO_DROP_IN_DIR = "/etc/crio/crio.conf.d";

const restartOf = (target: string, units: string[] = [target]): RuntimeRestart => ({
  verb: "restart",
  target,
  units,
  reason: `${target} reads its runtime handlers only at start`,
});

export const RUNTIME_LAYOUTS: Record<RuntimeKind, RuntimeLayout> = {
  k0s: {
    kind: "k0s",
    binaries: ["/usr/local/bin/k0s", "/usr/bin/k0s"],
    socket: "/run/k0s/containerd.sock",
    config: "/etc/k0s/containerd.toml",
    marks: ["/etc/k0s", "/var/lib/k0s"],
    templates: [],
    versionArgs: ["version"],
    handlers: { kind: "drop-in-dir", dir: "/etc/k0s/containerd.d", defaultVersion: 2 },
    // k0s merges a containerd.d drop-in with a CRI table (ours) into containerd's configuration
    // only when its worker component starts; on a change it only signals containerd, which keeps
    // the configuration it started with. So the worker's unit is restarted: k0sworker, or
    // k0scontroller on a controller that runs workloads.
    restart: {
      verb: "restart",
      target: "k0s",
      units: ["k0sworker", "k0scontroller"],
      reason:
        "k0s merges containerd.d's runtime handlers into containerd's configuration only when its worker starts",
    },
  },
  k3s: {
    kind: "k3s",
    binaries: ["/usr/local/bin/k3s", "/usr/bin/k3s"],
    socket: "/run/k3s/containerd/containerd.sock",
    config: `${K3S_CONTAINERD}/config.toml`,
    marks: ["/etc/rancher/k3s"],
    templates: [`${K3S_CONTAINERD}/config-v3.toml.tmpl`, `${K3S_CONTAINERD}/config.toml.tmpl`],
    versionArgs: ["--version"],
    handlers: { kind: "imported-dir", defaultVersion: 2 },
    restart: restartOf("k3s", ["k3s", "k3s-agent"]),
  },
  rke2: {
    kind: "rke2",
    binaries: ["/usr/local/bin/rke2", "/usr/bin/rke2", "/opt/rke2/bin/rke2"],
    socket: "/run/k3s/containerd/containerd.sock",
    config: `${RKE2_CONTAINERD}/config.toml`,
    marks: ["/etc/rancher/rke2"],
    templates: [`${RKE2_CONTAINERD}/config-v3.toml.tmpl`, `${RKE2_CONTAINERD}/config.toml.tmpl`],
    versionArgs: ["--version"],
    handlers: { kind: "imported-dir", defaultVersion: 2 },
    restart: restartOf("rke2", ["rke2-server", "rke2-agent"]),
  },
  microk8s: {
    kind: "microk8s",
    binaries: ["/snap/bin/microk8s"],
    socket: "/var/snap/microk8s/common/run/containerd.sock",
    config: "/var/snap/microk8s/current/args/containerd.toml",
    marks: ["/var/snap/microk8s/current"],
    templates: ["/var/snap/microk8s/current/args/containerd-template.toml"],
    versionArgs: ["version"],
    handlers: { kind: "template" },
    restart: restartOf("snap.microk8s.daemon-containerd"),
  },
  crio: {
    kind: "crio",
    binaries: ["/usr/bin/crio", "/usr/local/bin/crio"],
    socket: "/var/run/crio/crio.sock",
    config: CRIO_CONFIG,
    marks: [CRIO_DROP_IN_DIR],
    templates: [],
    versionArgs: ["--version"],
    handlers: { kind: "crio", dir: CRIO_DROP_IN_DIR },
    restart: {
      verb: "reload",
      target: "crio",
      units: ["crio"],
      reason: "CRI-O re-reads its runtime handlers on reload",
    },
  },
  containerd: {
    kind: "containerd",
    binaries: ["/usr/bin/containerd", "/usr/local/bin/containerd"],
    socket: "/run/containerd/containerd.sock",
    config: "/etc/containerd/config.toml",
    marks: [],
    templates: [],
    versionArgs: ["--version"],
    handlers: { kind: "containerd", dir: "/etc/containerd/conf.d", defaultVersion: 3 },
    restart: restartOf("containerd"),
  },
};

/** When the kubelet does not say which runtime it uses: the embedding distributions first. */
export const DETECTION_ORDER: RuntimeKind[] = ["k0s", "k3s", "rke2", "microk8s", "crio", "containerd"];

/** The restart a plan or journal names by its target. */
export function restartFor(target: string): RuntimeRestart | null {
  return Object.values(RUNTIME_LAYOUTS).find((l) => l.restart?.target === target)?.restart ?? null;
}
