// `shims`: the capability table and, for this node, whether each shim can run and why not.

import { itemAt } from "../at.js";
import type { Catalog, ShimSpec } from "../decide/catalog.js";
import type { Decision } from "../decide/decision.js";

export interface ShimRow {
  name: string;
  description: string;
  hypervisor: string;
  runtime: string;
  arches: string[];
  sharedFs: string[];
  blockDeviceDrivers: string[];
  vfioHotplug: boolean;
  vfioColdplug: boolean;
  virtioMem: boolean;
  memoryHotplug: boolean;
  confidential: string;
  seccomp: boolean;
  rateLimiters: boolean;
  snapshotter: string;
  requires: string[];
  /** Shipped by the release, described by no rule: what it can do is not known here. */
  unvetted: boolean;
  node: { status: "install" | "dropped" | "other-arch" | "opt-in"; reason: string };
}

export function shimsDocument(
  catalog: Catalog,
  decision: Decision,
): { arch: string | null; shims: ShimRow[] } {
  const rows = catalog.shimNames().map((name) => row(catalog.shims.get(name) as ShimSpec, decision));
  return { arch: decision.arch, shims: rows };
}

function row(spec: ShimSpec, decision: Decision): ShimRow {
  const chosen = decision.shims.find((s) => s.name === spec.name);
  const dropped = decision.dropped.find((s) => s.name === spec.name);
  const node: ShimRow["node"] = chosen
    ? { status: "install", reason: chosen.reason }
    : dropped
      ? { status: "dropped", reason: dropped.reason }
      : spec.unvetted
        ? { status: "opt-in", reason: `installed only when asked for: ${spec.description}` }
        : !spec.arches.includes(decision.arch ?? "")
          ? { status: "other-arch", reason: `built for ${spec.arches.join(", ")}` }
          : {
              status: "opt-in",
              reason: "installed only when asked for (--shims, the overrides file or SHIMS)",
            };
  return {
    name: spec.name,
    description: spec.description,
    hypervisor: spec.hypervisor,
    runtime: spec.runtime,
    arches: spec.arches,
    sharedFs: spec.shared_fs,
    blockDeviceDrivers: spec.block_device_drivers,
    vfioHotplug: spec.vfio_hotplug,
    vfioColdplug: spec.vfio_coldplug,
    virtioMem: spec.virtio_mem,
    memoryHotplug: spec.memory_hotplug,
    confidential: spec.confidential,
    seccomp: spec.seccomp,
    rateLimiters: spec.rate_limiters,
    snapshotter: spec.snapshotter,
    requires: spec.requires,
    unvetted: spec.unvetted === true,
    node,
  };
}

export function renderShims(doc: { arch: string | null; shims: ShimRow[] }): string {
  const yes = (b: boolean) => (b ? "yes" : "-");
  const header = [
    "SHIM",
    "HYPERVISOR",
    "RUNTIME",
    "SHARED FS",
    "BLOCK",
    "VFIO HOT",
    "VFIO COLD",
    "VIRTIO-MEM",
    "SECCOMP",
    "RATE LIMIT",
    "TEE",
    `ON THIS NODE (${doc.arch ?? "unknown arch"})`,
  ];
  // What no rule describes is not known: "?", never a "no" nobody checked.
  const rows = doc.shims.map((s) => [
    s.name,
    s.hypervisor,
    s.runtime,
    ...(s.unvetted
      ? ["?", "?", "?", "?", "?", "?", "?", "?"]
      : [
          s.sharedFs.join(",") || "-",
          s.blockDeviceDrivers.join(",") || "-",
          yes(s.vfioHotplug),
          yes(s.vfioColdplug),
          yes(s.virtioMem),
          yes(s.seccomp),
          yes(s.rateLimiters),
          s.confidential === "none" ? "-" : s.confidential,
        ]),
    s.node.status,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => itemAt(r, i, "a cell").length)));
  const format = (cells: string[]) =>
    cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] as number))).join("  ");
  const lines = [format(header), ...rows.map(format), ""];
  for (const s of doc.shims.filter((x) => x.node.status !== "install" && x.node.status !== "other-arch"))
    lines.push(`${s.name}: ${s.node.reason}`);
  return `${lines.join("\n")}\n`;
}
