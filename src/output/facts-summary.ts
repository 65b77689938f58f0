// The readable form of `facts`, rendered from the same document that `--json` prints, so the two
// never disagree: each source's lines, in the order of the sources.
import type { Facts } from "../detect/facts.js";
import type { SecurityFeature } from "../detect/security.js";
import { SOURCES, type SourceKey } from "../detect/sources.js";
import { TEE_KEYS, TEES } from "../shims/tees.js";

const GPU_CLASS = /^03/;
const NVIDIA = "10de";

export type Row = [label: string, value: string];

const FILESYSTEMS = ["9p", "virtiofs", "fuse", "overlay", "erofs"];

/** "name: value · name: value", as the summary shows several things on one line. */
const each = (parts: Array<[string, string]>) =>
  parts.map(([name, value]) => `${name}: ${value}`).join(" · ");

const yes = (value: boolean | null) => (value === null ? "unknown" : value ? "yes" : "no");

/** Every source's lines (none is a choice made here): a source left out does not compile. */
const ROWS: { [Key in SourceKey]: (value: Facts[Key], facts: Facts) => Row[] } = {
  arch: (arch) => [["arch", arch ?? "unknown"]],
  os: (os) => [["os", os.prettyName ?? os.id ?? "unknown"]],
  kernel: (k) => {
    const rows: Row[] = [
      [
        "kernel",
        `${k.release ?? "unknown"} · loadable modules: ${yes(k.modulesSupported)} · build config: ${k.config ?? "not found"}`,
      ],
    ];
    for (const state of ["loaded", "builtin", "available", "missing"]) {
      const names = Object.entries(k.modules)
        .filter(([, m]) => m.state === state)
        .map(([name]) => name);
      if (names.length > 0) rows.push([`modules ${state}`, names.join(" ")]);
    }
    const fs = new Set(k.filesystems);
    rows.push(["filesystems", each(FILESYSTEMS.map((name) => [name, fs.has(name) ? "yes" : "no"]))]);
    const hp = k.hugepages;
    rows.push([
      "hugepages",
      `default ${hp.defaultSizeKb ?? "?"} kB · reserved: ${hp.sizes.map((x) => `${x.total}×${x.sizeKb} kB`).join(", ") || "none"}`,
    ]);
    return rows;
  },
  cpu: (c) => [
    [
      "cpu",
      `${c.model ?? c.vendor ?? "unknown"} · ${c.count} CPUs · virtualisation: ${c.virtualization ?? "none"} · node is a VM: ${yes(c.hypervisorGuest)}`,
    ],
  ],
  kvm: (kvm) => [
    [
      "kvm",
      `/dev/kvm: ${kvm.device ? "yes" : "no"} · module: ${kvm.module ?? "none"} · nested: ${yes(kvm.nested)}`,
    ],
  ],
  security: (s) => {
    const cc = (f: SecurityFeature) => (f.usable ? "yes" : f.cpu ? "cpu only" : "no");
    return [["confidential", each(TEE_KEYS.map((key) => [TEES[key].label, cc(s[key])]))]];
  },
  hypervisors: (h) => {
    const hv = (b: Facts["hypervisors"]["qemu"]) =>
      b === null ? "none" : `${b.version ?? "?"} (${b.origin}, ${b.path})`;
    const binaries: Array<[string, Facts["hypervisors"]["qemu"]]> = [
      ["qemu", h.qemu],
      ["cloud-hypervisor", h.cloudHypervisor],
      ["firecracker", h.firecracker],
      ["virtiofsd", h.virtiofsd],
    ];
    return [["hypervisors", each(binaries.map(([name, b]) => [name, hv(b)]))]];
  },
  runtime: (r) => {
    if (r.kind === null) return [["runtime", "none found"]];
    return [
      [
        "runtime",
        `${r.kind} ${r.version ?? "(version unknown)"} · socket ${r.socket?.path} ${r.socket?.present ? "present" : "absent"} · config ${r.configPath}${r.configExists ? "" : " (absent)"}${r.configVersion === null ? "" : ` v${r.configVersion}`}`,
      ],
      ["drop-ins", r.dropInDir ?? "not imported"],
      ["handlers", r.handlers.map((x) => x.name).join(" ") || "none"],
      ["snapshotters", r.snapshotters.map((x) => x.name).join(" ") || "none configured"],
    ];
  },
  pci: (pci, { iommu }) => {
    const gpus = pci.devices.filter((d) => GPU_CLASS.test(d.class ?? ""));
    const nvidia = gpus.filter((d) => d.vendor === NVIDIA);
    const sriov = pci.devices.filter((d) => (d.sriovTotalVfs ?? 0) > 0);
    return [
      [
        "pci",
        `${pci.devices.length} devices · GPUs: ${gpus.length} (NVIDIA ${nvidia.length}) · SR-IOV capable: ${sriov.length} · IOMMU: ${iommu.enabled ? `on (${iommu.groups} groups)` : "off"}`,
      ],
    ];
  },
  // Shown on the PCI line: the groups are the PCI devices' own.
  iommu: () => [],
  storage: (storage) => [
    [
      "storage",
      storage.blockDevices
        .filter((b) => b.transport !== "virtual")
        .map((b) => `${b.name} ${size(b.sizeBytes)} ${b.transport}${b.remote ? " (remote)" : ""}`)
        .join(" · ") || "no physical block devices",
    ],
  ],
  kata: (kt) => [
    [
      "kata",
      kt.installed
        ? `${kt.version ?? "version unknown"} at ${kt.prefix} (${kt.managedBy === "kata-install" || kt.managedBy === "kata-deploy" ? `${kt.managedBy}'s` : "not kata-install's"})`
        : "not installed",
    ],
  ],
  local: (local) => [["local facts", Object.keys(local).join(" ") || "none"]],
};

/** The summary's rows of one source, [label, value]. */
export function rowsOf<Key extends SourceKey>(facts: Facts, key: Key): Row[] {
  return ROWS[key](facts[key], facts);
}

/** `origin`: where the facts are from, the host root read or the saved facts file given. */
export function renderFactsSummary(facts: Facts, origin: { hostRoot: string } | { file: string }): string {
  const rows = SOURCES.flatMap((source) => rowsOf(facts, source.key));
  const width = Math.max(...rows.map(([label]) => label.length));
  const lines = [
    "file" in origin ? `Node facts (saved in ${origin.file})` : `Node facts (host root ${origin.hostRoot})`,
    ...rows.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`),
  ];
  if (facts.problems.length > 0) {
    lines.push("", `Could not read (${facts.problems.length}):`);
    for (const p of facts.problems) {
      lines.push(
        `  - ${p.source}: ${p.path ?? p.command ?? ""}${p.path || p.command ? ": " : ""}${p.reason}`,
      );
    }
  }
  return `${lines.join("\n")}\n`;
}

function size(bytes: number | null): string {
  if (bytes === null) return "?";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${Number.isInteger(value) ? value : value.toFixed(1)} ${units[unit]}`;
}
