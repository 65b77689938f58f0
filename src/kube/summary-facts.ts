// The half of a node's summary that its facts alone give (summary.ts has the half a decision
// gives): kept apart, with no schema and no rules, so that report's worker threads summarise
// thousands of saved documents while the main thread decides once per kind of node.
import type { Facts } from "../detect/facts.js";
import { valueAt } from "../detect/value-at.js";

/** Kernel modules whose absence changes what a node can run. */
export const SUMMARY_MODULES = ["virtiofs", "9p", "vhost_vsock", "vhost_net", "vfio_pci"] as const;

export interface SummaryFacts {
  v: 1;
  arch: string | null;
  kernel: string | null;
  modules: Record<string, boolean>;
  cpu: string;
  kvm: boolean;
  confidential: string[];
  qemu: { origin: string; version: string | null } | null;
  hypervisors: string[];
  runtime: { kind: string | null; version: string | null };
  kata: string | null;
  gpus: string[];
  facts?: Record<string, string | number | boolean | null>;
}

/**
 * Every fact summaryFacts reads, besides the `factPaths` it is given (a whole source or object where
 * it reads one whole): nodes that agree on all of them get the same summary (report's scan.ts).
 * test/kube/summary-facts.test.ts holds summaryFacts to it.
 */
export const SUMMARY_READS: readonly string[] = [
  "arch",
  "kernel.release",
  ...SUMMARY_MODULES.map((name) => `kernel.modules.${name}.state`),
  "cpu.virtualization",
  "kvm.device",
  "security",
  "hypervisors.qemu",
  "hypervisors.found",
  "runtime.kind",
  "runtime.version",
  "kata.version",
  "pci.devices",
];

/** PCI vendor ids of GPU makers; display (0300) and 3D (0302) controllers are GPUs. */
const GPU_VENDORS: Record<string, string> = { "10de": "nvidia", "1002": "amd", "8086": "intel" };

function gpuVendors(facts: Facts): string[] {
  const found = facts.pci.devices
    .filter((d) => /^030[02]/.test(d.class ?? ""))
    .map((d) => GPU_VENDORS[d.vendor ?? ""] ?? `pci-${d.vendor ?? "unknown"}`);
  return [...new Set(found)].sort();
}

function scalarAt(facts: Facts, path: string): string | number | boolean | null {
  const value = valueAt(facts, path);
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean" ? value : null;
}

/** What `facts` alone say of the node; `factPaths`' values published under their paths. */
export function summaryFacts(facts: Facts, factPaths: readonly string[] = []): SummaryFacts {
  const modules: Record<string, boolean> = {};
  for (const name of SUMMARY_MODULES) {
    const state = facts.kernel.modules[name]?.state;
    if (state !== undefined) modules[name] = state !== "missing";
  }
  const qemu = facts.hypervisors.qemu;
  return {
    v: 1,
    arch: facts.arch,
    kernel: facts.kernel.release,
    modules,
    cpu: facts.cpu.virtualization ?? "none",
    kvm: facts.kvm.device,
    confidential: Object.entries(facts.security)
      .filter(([, f]) => f.usable)
      .map(([name]) => name)
      .sort(),
    qemu: qemu ? { origin: qemu.origin, version: qemu.version } : null,
    hypervisors: facts.hypervisors.found
      .map((h) => `${h.name} ${h.version ?? "(version unknown)"} (${h.origin})`)
      .sort(),
    runtime: { kind: facts.runtime.kind, version: facts.runtime.version },
    kata: facts.kata.version,
    gpus: gpuVendors(facts),
    ...(factPaths.length > 0
      ? { facts: Object.fromEntries(factPaths.map((p) => [p, scalarAt(facts, p)])) }
      : {}),
  };
}
