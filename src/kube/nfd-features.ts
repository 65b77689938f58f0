// What Kata can do on a node, as a Node Feature Discovery local feature file: the format nfd-worker
// reads from features.d/ (one `name=value` a line, `#` comments), each name a label NFD puts on the
// node. The names are in kata.feature.node.kubernetes.io/, a namespace nfd-master always allows.
// What is there: KVM, the CPU's virtualisation, the confidential-computing features usable, the
// kernel modules Kata depends on, the container runtime, the hypervisors' and Kata's versions, the
// GPUs, the artifacts taken from the distribution, and the shims this node can run (kata-install's
// rules on its facts, nothing pinned). `report` selects its pools of nodes by these labels.
import { teeOf } from "../shims/tees.js";
import type { NodeSummary } from "./summary.js";

export const NFD_PREFIX = "kata.feature.node.kubernetes.io/";
/** Where nfd-worker reads local feature files (its default). */
export const FEATURES_DIR = "/etc/kubernetes/node-feature-discovery/features.d";

export function featureFile(suffix: string | null): string {
  return `${FEATURES_DIR}/kata-install${suffix ? `-${suffix}` : ""}`;
}

/**
 * A label value Kubernetes takes: up to 63 of [A-Za-z0-9._-], beginning and ending with a letter or
 * digit. Versions like "1.7.20~ds1" keep their shape ("1.7.20_ds1"); null when nothing is left.
 */
export function labelValue(text: string): string | null {
  const value = text
    .replace(/[^A-Za-z0-9._-]/g, "_")
    .slice(0, 63)
    .replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, "");
  return value === "" ? null : value;
}

/** The feature file's text, from a node's summary (summarize(facts, the capability decision)). */
export function nfdFeatureFile(summary: NodeSummary, from: string): string {
  const features: Array<[string, string | null]> = [
    ["kvm", String(summary.kvm)],
    ["cpu.virtualization", summary.cpu],
    ...Object.entries(summary.modules).map(([name, present]): [string, string] => [
      `module.${name}`,
      String(present),
    ]),
    ...summary.confidential.map((name): [string, string] => [
      `confidential.${teeOf(name)?.label ?? name}`,
      "true",
    ]),
    ...(summary.gpus ?? []).map((vendor): [string, string] => [`gpu.${vendor}`, "true"]),
    ...(summary.distro ?? []).map((artifact): [string, string] => [`distro.${artifact}`, "true"]),
    ["runtime", summary.runtime.kind],
    ["runtime.version", summary.runtime.version],
    ["qemu.version", summary.qemu?.version ?? null],
    ["kata.version", summary.kata],
    ...summary.shims.map((shim): [string, string] => [`shim.${shim}`, "true"]),
    ["default-shim", summary.defaultShim],
  ];
  const lines = features
    .map(([name, value]) => [name, value === null ? null : labelValue(value)] as const)
    .filter((f): f is readonly [string, string] => f[1] !== null)
    .map(([name, value]) => `${NFD_PREFIX}${name}=${value}`);
  return `# What Kata can do on this node, written by kata-install (${from}) for Node Feature Discovery.\n# nfd-worker reads it from ${FEATURES_DIR}/; each line becomes a node label.\n${lines.join("\n")}\n`;
}
