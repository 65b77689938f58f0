// What a node publishes about itself (an annotation) and what `report` compares across nodes: the
// facts that change a decision, and what was decided. Compact — an annotation is part of the Node
// object every kubelet heartbeat and every `kubectl get nodes` moves — and versioned, so a report
// reads the annotations of nodes that run an older kata-install.
import * as z from "zod/mini";
import "../schema.js";
import type { Decision } from "../decide/decision.js";
import { type RuleSet, scalarFactsRead } from "../decide/rules.js";
import type { Facts } from "../detect/facts.js";
import { type SummaryFacts, summaryFacts } from "./summary-facts.js";

export { SUMMARY_MODULES } from "./summary-facts.js";

export const NodeSummary = z.object({
  v: z.literal(1),
  arch: z.nullable(z.string()),
  kernel: z.nullable(z.string()),
  /** Module → whether the kernel can use it (loaded, built in, or loadable). */
  modules: z.record(z.string(), z.boolean()),
  /** vmx, svm, … or "none". */
  cpu: z.string(),
  kvm: z.boolean(),
  /** Confidential-computing features usable on this node (cpu and KVM both), sorted. */
  confidential: z.array(z.string()),
  qemu: z.nullable(z.object({ origin: z.string(), version: z.nullable(z.string()) })),
  /** Every hypervisor binary found: "qemu 8.2.2 (distro)". */
  hypervisors: z.array(z.string()),
  runtime: z.object({ kind: z.nullable(z.string()), version: z.nullable(z.string()) }),
  /** The Kata version installed, when it says. */
  kata: z.nullable(z.string()),
  shims: z.array(z.string()),
  defaultShim: z.nullable(z.string()),
  /** Checks that failed (errors and warnings), by id. */
  failed: z.array(z.string()),
  /** How each installed shim shares files with its guest (virtio-fs, virtio-9p, none). */
  sharedFs: z.record(z.string(), z.string()),
  /** Configuration values this node's facts decided (by a rule): shim → key → value. */
  ruled: z.record(z.string(), z.record(z.string(), z.unknown())),
  /**
   * The node's value of each fact the rules read (and of the few shown though they decide
   * nothing), by path: what `report` compares. Absent in summaries of an earlier kata-install.
   */
  facts: z.optional(z.record(z.string(), z.nullable(z.union([z.string(), z.number(), z.boolean()])))),
  /** Vendors of the GPUs on the node (nvidia, amd, intel): what a GPU shim passes through. */
  gpus: z.optional(z.array(z.string())),
  /** Artifacts the node takes from its own distribution (qemu, virtiofsd) rather than Kata's. */
  distro: z.optional(z.array(z.string())),
  /** The failed errors and warnings, with what they say: `report` shows them per pool. */
  checks: z.optional(z.array(z.object({ id: z.string(), severity: z.string(), message: z.string() }))),
});
export type NodeSummary = z.infer<typeof NodeSummary>;

/**
 * `defaultSharedFs` gives a shim's shared_fs when nothing decided it (the templates' default); the
 * decision holds only what was decided.
 */
export function summarize(
  facts: Facts,
  decision: Decision,
  defaultSharedFs: (shim: string) => string | undefined = () => undefined,
  /** The fact paths to publish (scalarFactsRead of the rules, and SHOWN_FACTS). */
  factPaths: readonly string[] = [],
): NodeSummary {
  return assembleSummary(summaryFacts(facts, factPaths), decidedPart(decision, defaultSharedFs));
}

/**
 * A summary from its two halves, in the order an annotation has always had its keys. Every field
 * named (no rest or spread of the halves): a report compares thousands of these, and objects of
 * one literal shape are the ones V8 reads fast.
 */
export function assembleSummary(part: SummaryFacts, decided: DecidedPart): NodeSummary {
  const summary: NodeSummary = {
    v: part.v,
    arch: part.arch,
    kernel: part.kernel,
    modules: part.modules,
    cpu: part.cpu,
    kvm: part.kvm,
    confidential: part.confidential,
    qemu: part.qemu,
    hypervisors: part.hypervisors,
    runtime: part.runtime,
    kata: part.kata,
    shims: decided.shims,
    defaultShim: decided.defaultShim,
    sharedFs: decided.sharedFs,
    failed: decided.failed,
    ruled: decided.ruled,
    gpus: part.gpus,
    distro: decided.distro,
    checks: decided.checks,
  };
  if (part.facts !== undefined) summary.facts = part.facts;
  return summary;
}

export type DecidedPart = Pick<
  NodeSummary,
  "shims" | "defaultShim" | "sharedFs" | "failed" | "ruled" | "distro" | "checks"
>;

/**
 * What a summary takes from the decision alone. A report decides once per kind of node and
 * summarises thousands of nodes with one decision: worked out once per decision (the
 * shared_fs default is the catalogue's, the same for every call of a run).
 */
const DECIDED = new WeakMap<Decision, DecidedPart>();
export function decidedPart(
  decision: Decision,
  defaultSharedFs: (shim: string) => string | undefined,
): DecidedPart {
  const known = DECIDED.get(decision);
  if (known !== undefined) return known;
  const ruled: Record<string, Record<string, unknown>> = {};
  for (const [shim, keys] of Object.entries(decision.config)) {
    for (const [key, decided] of Object.entries(keys)) {
      if (decided.source.kind !== "rule") continue;
      ruled[shim] ??= {};
      (ruled[shim] as Record<string, unknown>)[key] = decided.value;
    }
  }
  const sharedFs: Record<string, string> = {};
  for (const shim of decision.shims) {
    const key = Object.keys(decision.config[shim.name] ?? {}).find((k) =>
      /^hypervisor\.[^.]+\.shared_fs$/.test(k),
    );
    const value = key === undefined ? defaultSharedFs(shim.name) : decision.config[shim.name]?.[key]?.value;
    if (typeof value === "string") sharedFs[shim.name] = value;
  }
  const part: DecidedPart = {
    shims: decision.shims.map((s) => s.name).sort(),
    defaultShim: decision.defaultShim?.value ?? null,
    sharedFs,
    failed: decision.checks
      .filter((c) => c.status === "fail")
      .map((c) => c.id)
      .sort(),
    ruled,
    distro: decision.artifacts
      .filter((a) => a.from === "distro")
      .map((a) => a.name)
      .sort(),
    checks: decision.checks
      .filter((c) => c.status === "fail" && c.severity !== "info")
      .map((c) => ({ id: c.id, severity: c.severity, message: c.message }))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
  };
  DECIDED.set(decision, part);
  return part;
}

/**
 * Facts the report shows though no rule reads them: the host kernel's virtio-fs and 9p decide
 * nothing (virtiofsd and qemu serve them, the guest kernel has the drivers), but nodes that differ
 * there are worth seeing.
 */
export const SHOWN_FACTS = ["kernel.modules.virtiofs.state", "kernel.modules.9p.state"];

/** The fact paths a node publishes: what the rules read, then SHOWN_FACTS. */
export function publishedFactPaths(rules: RuleSet): string[] {
  const read = scalarFactsRead(rules.rules);
  return [...read, ...SHOWN_FACTS.filter((p) => !read.includes(p))];
}
