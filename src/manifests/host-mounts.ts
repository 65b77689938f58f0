// The host paths the DaemonSet's pod mounts under /host, each with why and whether it may write:
// the narrowest set kata-install's detection reads and its install writes (kata-deploy 4.1's chart
// runs the same job unprivileged with a set like it). The runtime's directories come from
// RUNTIME_LAYOUTS for the values' k8s_distribution, so a new runtime kind brings its own. The
// entrypoint is told the list (HOST_MOUNTS): a path outside it reads as unknown, not as absent.
import path from "node:path";
import { DEFAULT_PREFIX, kataDirFromEnv } from "../detect/context.js";
import { RUNTIME_LAYOUTS, type RuntimeLayout } from "../detect/runtime/layouts.js";
import { hash } from "../hash.js";
import { VANILLA_NAMES } from "../kube/distribution.js";
import type { Values } from "./values.js";

/** kubelet's hostPath types used here: what must be there, and what the kubelet makes when it is not. */
export type HostPathType = "Directory" | "DirectoryOrCreate";

export interface HostMount {
  path: string;
  readOnly: boolean;
  type: HostPathType;
  why: string;
}

/** Where the DaemonSet's pod sees the host's paths. */
export const POD_HOST_ROOT = "/host";

/** What every node gives to read, whatever its runtime. */
const ALWAYS: HostMount[] = [
  {
    path: "/proc",
    readOnly: true,
    type: "Directory",
    why: "the host's CPU, kernel, modules and mounts (cpuinfo, modules, cmdline, PID 1's mountinfo): the pod's own /proc shows the pod's mounts",
  },
  {
    path: "/sys",
    readOnly: true,
    type: "Directory",
    why: "KVM and its modules' parameters, IOMMU groups, PCI devices, confidential-computing firmware (the pod's /sys masks /sys/firmware)",
  },
  {
    path: "/dev",
    readOnly: true,
    type: "Directory",
    why: "whether /dev/kvm and the SGX device exist (looked at, never opened)",
  },
  {
    path: "/boot",
    readOnly: true,
    type: "DirectoryOrCreate",
    why: "the kernel's build configuration (config-<release>); some nodes (a container's, kind's) have no /boot",
  },
  {
    path: "/usr",
    readOnly: true,
    type: "Directory",
    why: "the runtime's, the hypervisors' and systemctl's binaries and libraries, os-release, packaged systemd units, kernel modules",
  },
  {
    path: "/lib",
    readOnly: true,
    type: "Directory",
    why: "libraries and kernel modules on a host without a merged /usr (elsewhere the same files as /usr/lib)",
  },
  { path: "/bin", readOnly: true, type: "Directory", why: "host commands on a host without a merged /usr" },
  { path: "/sbin", readOnly: true, type: "Directory", why: "host commands on a host without a merged /usr" },
  {
    path: "/etc/kata-containers",
    readOnly: true,
    type: "DirectoryOrCreate",
    why: "the host owner's facts (preflight.d) and the node's overrides (kata-install.toml)",
  },
  {
    path: "/run/systemd",
    readOnly: true,
    type: "Directory",
    why: "systemctl reaches systemd through its private socket here (a socket connects on a read-only mount); runtime units",
  },
  {
    path: "/etc/systemd/system",
    readOnly: false,
    type: "DirectoryOrCreate",
    why: "the admin's unit overrides are read; the nydus snapshotter's unit is written, when the values set it up",
  },
  {
    path: "/run/lock",
    readOnly: false,
    type: "DirectoryOrCreate",
    why: "the lock one install per node takes",
  },
];

/** The layouts a distribution value names: its own, or the default directory's (containerd's and CRI-O's). */
function layoutsOf(distribution: string): RuntimeLayout[] {
  const layouts = Object.values(RUNTIME_LAYOUTS);
  const own = layouts.filter((l) => l.distribution === distribution);
  return own.length > 0 && !VANILLA_NAMES.includes(distribution)
    ? own
    : layouts.filter((l) => l.distribution === "none");
}

/**
 * The layout's directories: its configuration's (written) and its socket's (read). Not its marks:
 * the kubelet would make a missing one, and a mark made is evidence of a runtime that is not there.
 */
function runtimeMounts(layout: RuntimeLayout): HostMount[] {
  const name = layout.kind;
  return [
    {
      path: path.posix.dirname(layout.config),
      readOnly: false,
      type: "DirectoryOrCreate",
      why: `${name}'s configuration: its Kata handlers are written here (made empty when ${name} is not on the node)`,
    },
    {
      path: path.posix.dirname(layout.socket),
      readOnly: true,
      type: "DirectoryOrCreate",
      why: `${name}'s socket: whether it serves the handlers after its restart (made empty when ${name} is not on the node)`,
    },
  ];
}

/**
 * The pod's host mounts for `v`, each path once (the first reason kept, read-only only if every
 * use only reads), none inside a writable one or a read-only one inside a read-only one, parents
 * first.
 */
export function hostMounts(v: Values): HostMount[] {
  const installDir = kataDirFromEnv({
    INSTALLATION_PREFIX: String(v.installation_prefix ?? ""),
    MULTI_INSTALL_SUFFIX: String(v.multi_install_suffix ?? ""),
  });
  const wanted: HostMount[] = [...ALWAYS];
  for (const layout of layoutsOf(String(v.k8s_distribution ?? "").trim()))
    wanted.push(...runtimeMounts(layout));
  wanted.push({
    path: installDir,
    readOnly: false,
    type: "DirectoryOrCreate",
    why: `Kata's files and kata-install's journal${installDir === DEFAULT_PREFIX ? "" : " (installation_prefix, multi_install_suffix)"}`,
  });
  if ((v.nfd as Values | undefined)?.feature_file)
    wanted.push({
      path: "/etc/kubernetes/node-feature-discovery/features.d",
      readOnly: false,
      type: "DirectoryOrCreate",
      why: "the node's Kata features for Node Feature Discovery (nfd.feature_file)",
    });
  const byPath = new Map<string, HostMount>();
  for (const m of wanted) {
    const seen = byPath.get(m.path);
    byPath.set(m.path, seen === undefined ? m : { ...seen, readOnly: seen.readOnly && m.readOnly });
  }
  const all = [...byPath.values()];
  // Inside a writable mount, or a read-only one inside a read-only one: seen through the outer one.
  const covered = (m: HostMount, outer: HostMount) =>
    outer !== m && (!outer.readOnly || m.readOnly) && m.path.startsWith(`${outer.path}/`);
  // Parents before children: the kubelet mounts in this order.
  return all
    .filter((m) => !all.some((outer) => covered(m, outer)))
    .sort((a, b) => a.path.localeCompare(b.path));
}

/** The pod's environment value that tells the entrypoint what it can see (HOST_MOUNTS). */
export function hostMountsVariable(mounts: readonly HostMount[]): string {
  return mounts.map((m) => m.path).join(":");
}

/** A volume's name for a host path: "host-" and the path's parts ("/etc/containerd": host-etc-containerd). */
export function volumeName(hostPath: string): string {
  const name = `host${hostPath.replace(/[^a-z0-9]+/gi, "-").toLowerCase()}`.replace(/-+$/, "");
  return name.length <= 63 ? name : `${name.slice(0, 54)}-${hash(hostPath).slice(0, 8)}`;
}
