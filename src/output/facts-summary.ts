// The readable form of `facts`, rendered from the same document that `--json` prints, so the two
// never disagree.
import type { Facts } from "../detect/facts.js";
import type { SecurityFeature } from "../detect/security.js";

const GPU_CLASS = /^03/;
const NVIDIA = "10de";

export function renderFactsSummary(facts: Facts, origin: string): string {
  const rows: Array<[string, string]> = [];
  const yes = (value: boolean | null) => (value === null ? "unknown" : value ? "yes" : "no");
  rows.push(["arch", facts.arch ?? "unknown"]);
  rows.push(["os", facts.os.prettyName ?? facts.os.id ?? "unknown"]);
  const k = facts.kernel;
  rows.push([
    "kernel",
    `${k.release ?? "unknown"} · loadable modules: ${yes(k.modulesSupported)} · build config: ${k.config ?? "not found"}`,
  ]);
  const c = facts.cpu;
  rows.push([
    "cpu",
    `${c.model ?? c.vendor ?? "unknown"} · ${c.count} CPUs · virtualisation: ${c.virtualization ?? "none"} · node is a VM: ${yes(c.hypervisorGuest)}`,
  ]);
  rows.push([
    "kvm",
    `/dev/kvm: ${facts.kvm.device ? "yes" : "no"} · module: ${facts.kvm.module ?? "none"} · nested: ${yes(facts.kvm.nested)}`,
  ]);
  const s = facts.security;
  const cc = (name: string, f: SecurityFeature) => `${name}: ${f.usable ? "yes" : f.cpu ? "cpu only" : "no"}`;
  rows.push([
    "confidential",
    [
      cc("sev", s.sev),
      cc("sev-es", s.sevEs),
      cc("sev-snp", s.sevSnp),
      cc("tdx", s.tdx),
      cc("sgx", s.sgx),
      cc("se", s.s390xSe),
    ].join(" · "),
  ]);
  const byState = (state: string) =>
    Object.entries(k.modules)
      .filter(([, m]) => m.state === state)
      .map(([name]) => name);
  for (const state of ["loaded", "builtin", "available", "missing"]) {
    const names = byState(state);
    if (names.length > 0) rows.push([`modules ${state}`, names.join(" ")]);
  }
  const fs = new Set(k.filesystems);
  rows.push([
    "filesystems",
    ["9p", "virtiofs", "fuse", "overlay", "erofs"]
      .map((n) => `${n}: ${fs.has(n) ? "yes" : "no"}`)
      .join(" · "),
  ]);
  const h = facts.hypervisors;
  const hv = (name: string, b: Facts["hypervisors"]["qemu"]) =>
    `${name}: ${b === null ? "none" : `${b.version ?? "?"} (${b.origin}, ${b.path})`}`;
  rows.push([
    "hypervisors",
    [
      hv("qemu", h.qemu),
      hv("cloud-hypervisor", h.cloudHypervisor),
      hv("firecracker", h.firecracker),
      hv("virtiofsd", h.virtiofsd),
    ].join(" · "),
  ]);
  const r = facts.runtime;
  if (r.kind === null) rows.push(["runtime", "none found"]);
  else {
    rows.push([
      "runtime",
      `${r.kind} ${r.version ?? "(version unknown)"} · socket ${r.socket?.path} ${r.socket?.present ? "present" : "absent"} · config ${r.configPath}${r.configExists ? "" : " (absent)"}${r.configVersion === null ? "" : ` v${r.configVersion}`}`,
    ]);
    rows.push(["drop-ins", r.dropInDir ?? "not imported"]);
    rows.push(["handlers", r.handlers.map((x) => x.name).join(" ") || "none"]);
    rows.push(["snapshotters", r.snapshotters.map((x) => x.name).join(" ") || "none configured"]);
  }
  const gpus = facts.pci.devices.filter((d) => GPU_CLASS.test(d.class ?? ""));
  const nvidia = gpus.filter((d) => d.vendor === NVIDIA);
  const sriov = facts.pci.devices.filter((d) => (d.sriovTotalVfs ?? 0) > 0);
  rows.push([
    "pci",
    `${facts.pci.devices.length} devices · GPUs: ${gpus.length} (NVIDIA ${nvidia.length}) · SR-IOV capable: ${sriov.length} · IOMMU: ${facts.iommu.enabled ? `on (${facts.iommu.groups} groups)` : "off"}`,
  ]);
  rows.push([
    "storage",
    facts.storage.blockDevices
      .filter((b) => b.transport !== "virtual")
      .map((b) => `${b.name} ${size(b.sizeBytes)} ${b.transport}${b.remote ? " (remote)" : ""}`)
      .join(" · ") || "no physical block devices",
  ]);
  const hp = k.hugepages;
  rows.push([
    "hugepages",
    `default ${hp.defaultSizeKb ?? "?"} kB · reserved: ${hp.sizes.map((x) => `${x.total}×${x.sizeKb} kB`).join(", ") || "none"}`,
  ]);
  const kt = facts.kata;
  rows.push([
    "kata",
    kt.installed
      ? `${kt.version ?? "version unknown"} at ${kt.prefix} (${kt.managedBy === "kata-install" ? "kata-install" : "not ours"})`
      : "not installed",
  ]);
  const localKeys = Object.keys(facts.local);
  rows.push(["local facts", localKeys.length > 0 ? localKeys.join(" ") : "none"]);

  const width = Math.max(...rows.map(([label]) => label.length));
  const lines = [
    `Node facts (host root ${origin})`,
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
