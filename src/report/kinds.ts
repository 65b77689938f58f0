// Nodes of one kind share one summary object (sources.ts): what a report reads of a summary it
// reads once per kind, and it counts or names a kind's nodes together. Summaries read from a
// cluster's annotations are each a kind of their own.
import type { NodeSummary } from "../kube/summary.js";
import type { NodeEntry } from "./entry.js";

export interface NodeKind {
  summary: NodeSummary;
  /** Its nodes, as their indexes in the list, ascending. */
  at: number[];
}

/** The kinds of `nodes`, in the order of their first node. */
export function kindsOf(nodes: readonly NodeEntry[]): NodeKind[] {
  const bySummary = new Map<NodeSummary, NodeKind>();
  nodes.forEach(({ summary }, i) => {
    const kind = bySummary.get(summary);
    if (kind) kind.at.push(i);
    else bySummary.set(summary, { summary, at: [i] });
  });
  return [...bySummary.values()];
}

/** How many nodes `kinds` have. */
export const countOf = (kinds: readonly NodeKind[]): number => kinds.reduce((n, k) => n + k.at.length, 0);

/** The names of the nodes of `kinds`, in the list's order (a node named as often as its kind is given). */
export function namesOf(nodes: readonly NodeEntry[], kinds: readonly NodeKind[]): string[] {
  const only = kinds.length === 1 ? (kinds[0] as NodeKind) : undefined;
  if (only !== undefined) return only.at.map((i) => (nodes[i] as NodeEntry).name);
  // Counted in place and read in order: no sort of thousands of indexes.
  const times = new Uint16Array(nodes.length);
  for (const { at } of kinds) for (const i of at) times[i] = (times[i] as number) + 1;
  const names: string[] = [];
  times.forEach((n, i) => {
    for (let k = 0; k < n; k++) names.push((nodes[i] as NodeEntry).name);
  });
  return names;
}

/** Kinds by a value of theirs, in the order of their first node. */
export function groupKinds<K>(kinds: readonly NodeKind[], by: (kind: NodeKind) => K): Map<K, NodeKind[]> {
  const groups = new Map<K, NodeKind[]>();
  for (const kind of kinds) {
    const value = by(kind);
    const group = groups.get(value);
    if (group) group.push(kind);
    else groups.set(value, [kind]);
  }
  return groups;
}
