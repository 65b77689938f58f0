// A cluster at a glance: which shims each node can run, where nodes disagree with the majority on a
// fact that changes a decision, its pools (nodes that get the same plan, pools.ts), and the
// overrides that make the nodes of each pool alike, with what all of them share — so that
// uniformity is the administrator's explicit choice, not an accident of each node configuring
// itself, and a GPU node's settings are not every node's.

import { byText } from "../compare.js";
import type { NodeSummary } from "../kube/summary.js";
import type { NodeEntry } from "./entry.js";
import { countOf, groupKinds, kindsOf, type NodeKind, namesOf } from "./kinds.js";
import { type Pool, poolsOf } from "./pools.js";
import { countShims, type UniformOverrides, uniform } from "./uniform.js";

export type { UniformOverrides } from "./uniform.js";

export interface Disagreement {
  /** What differs, in words ("kernel virtio-fs"). */
  field: string;
  majority: { value: string; nodes: number };
  /** Every other value, with its nodes. */
  others: Array<{ value: string; nodes: string[] }>;
}

export interface ClusterReport {
  nodes: Array<{ name: string; shims: string[]; defaultShim: string | null; failed: string[] }>;
  skipped: Array<{ source: string; reason: string }>;
  /** Files read, but with facts missing from them that were taken as unknown. */
  partial: Array<{ source: string; reason: string }>;
  /** Shim → how many nodes can run it: nodes whose preflight has errors run nothing (install refuses). */
  shimCounts: Record<string, number>;
  /** Shim → how many more nodes could run it, once their preflight errors are fixed. */
  blockedShimCounts: Record<string, number>;
  disagreements: Disagreement[];
  /** What every node shares: its shims and, if every pool agrees, the default; nothing else. */
  overrides: UniformOverrides;
  pools: Pool[];
}

const yesNo = (v: boolean | undefined) => (v === undefined ? "unknown" : v ? "yes" : "no");

/**
 * What nodes are compared on: each fact the rules read (and the few shown though they decide
 * nothing), as every node published it under its path, and the shims that result. Read off the
 * rules, never listed by hand: a rule reading a new fact makes it compared.
 */
function fieldsOf(summaries: NodeSummary[]): Field[] {
  const seen = new Set<string>();
  for (const s of summaries) for (const p of Object.keys(s.facts ?? {})) seen.add(p);
  const paths = [...seen];
  // Summaries an earlier kata-install published carry no facts: compared on what they do have.
  if (paths.length === 0 || summaries.some((s) => s.facts === undefined)) return LEGACY_FIELDS;
  const fields: Field[] = [];
  for (const p of paths) {
    const kindPath = VERSION_OF[p];
    if (kindPath === undefined) {
      fields.push([p, (s) => shown(s.facts?.[p])]);
      continue;
    }
    // A version is compared among nodes of the same kind: containerd's 1.7 with containerd's 2.0,
    // never with CRI-O's 1.30.
    const kinds = [...new Set(summaries.map((s) => shown(s.facts?.[kindPath])))].sort(byText);
    for (const kind of kinds)
      fields.push([`${p} (${kind})`, (s) => shown(s.facts?.[p]), (s) => shown(s.facts?.[kindPath]) === kind]);
  }
  return [...fields, ["shims", (s) => s.shims.join(", ") || "none"]];
}

/** A field: its name, a node's value, and which nodes it compares (all, by default). */
type Field = [string, (s: NodeSummary) => string, ((s: NodeSummary) => boolean)?];

/** Version facts, by the fact that says of what they are the version. */
const VERSION_OF: Record<string, string> = {
  "runtime.version": "runtime.kind",
  "hypervisors.qemu.version": "hypervisors.qemu.origin",
  "hypervisors.virtiofsd.version": "hypervisors.virtiofsd.origin",
};

const shown = (value: string | number | boolean | null | undefined) =>
  value === null || value === undefined ? "unknown" : String(value);

/** What summaries without facts (an earlier kata-install's) are compared on. */
const LEGACY_FIELDS: Field[] = [
  ["architecture", (s) => s.arch ?? "unknown"],
  ["CPU virtualisation", (s) => s.cpu],
  ["/dev/kvm", (s) => (s.kvm ? "present" : "absent")],
  ["kernel virtio-fs", (s) => yesNo(s.modules.virtiofs)],
  ["kernel 9p", (s) => yesNo(s.modules["9p"])],
  ["kernel vhost_vsock", (s) => yesNo(s.modules.vhost_vsock)],
  ["kernel vhost_net", (s) => yesNo(s.modules.vhost_net)],
  ["kernel vfio_pci", (s) => yesNo(s.modules.vfio_pci)],
  ["confidential computing", (s) => s.confidential.join(", ") || "none"],
  ["qemu", (s) => (s.qemu ? `${s.qemu.origin} ${s.qemu.version ?? "(version unknown)"}` : "none")],
  ["runtime", (s) => `${s.runtime.kind ?? "none"} ${s.runtime.version ?? ""}`.trim()],
  ["shims", (s) => s.shims.join(", ") || "none"],
];

function disagreements(nodes: NodeEntry[], kinds: NodeKind[]): Disagreement[] {
  const out: Disagreement[] = [];
  for (const [field, read, among] of fieldsOf(kinds.map((k) => k.summary))) {
    const byValue = groupKinds(
      kinds.filter((k) => !among || among(k.summary)),
      (k) => read(k.summary),
    );
    if (byValue.size < 2) continue;
    // The majority is the most common value; a tie goes to the first in sort order, so it is stable.
    const ranked = [...byValue]
      .map(([value, of]) => ({ value, of, count: countOf(of) }))
      .sort((a, b) => b.count - a.count || byText(a.value, b.value));
    const [majority] = ranked as [(typeof ranked)[number]];
    out.push({
      field,
      majority: { value: majority.value, nodes: majority.count },
      others: ranked.slice(1).map(({ value, of }) => ({ value, nodes: namesOf(nodes, of).sort(byText) })),
    });
  }
  return out;
}

/** What every node shares, and only that: a value or default that differs between pools is theirs. */
function shared(nodes: NodeEntry[], kinds: NodeKind[], pools: Pool[]): UniformOverrides {
  const all = uniform(nodes, kinds, false);
  const defaults = [...new Set(pools.map((p) => p.overrides.defaultShim))];
  if (pools.length > 1 && defaults.length > 1) {
    all.defaultShim = null;
    all.notes.push(
      `no default for all: the pools' differ (${pools.map((p) => `${p.overrides.defaultShim ?? "none"} on ${p.id}`).join(", ")}); each pool's file sets its own`,
    );
  }
  if (pools.some((p) => Object.keys(p.overrides.config).length > 0))
    all.notes.push("values some nodes decided differently are pinned in the pools' files, not here");
  return all;
}

/** A node whose preflight has an error: install refuses there until it is fixed (or ignored). */
const blocked = (kind: NodeKind) => (kind.summary.checks ?? []).some((c) => c.severity === "error");

export function buildReport(
  nodes: NodeEntry[],
  skipped: ClusterReport["skipped"],
  partial: ClusterReport["partial"] = [],
): ClusterReport {
  const sorted = [...nodes].sort((a, b) => byText(a.name, b.name));
  // Read once per kind of node, not once per node (kinds.ts).
  const kinds = kindsOf(sorted);
  const shimCounts = countShims(kinds.filter((k) => !blocked(k)));
  const blockedShimCounts = countShims(kinds.filter(blocked));
  const pools = poolsOf(sorted, kinds);
  return {
    nodes: sorted.map((n) => ({
      name: n.name,
      shims: n.summary.shims,
      defaultShim: n.summary.defaultShim,
      failed: n.summary.failed,
    })),
    skipped,
    partial,
    shimCounts,
    blockedShimCounts,
    disagreements: disagreements(sorted, kinds),
    overrides: shared(sorted, kinds, pools),
    pools,
  };
}
