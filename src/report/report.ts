// A cluster at a glance: which shims each node can run, where nodes disagree with the majority on a
// fact that changes a decision, and an overrides file that would give every node the same
// configuration — so that uniformity is the administrator's explicit choice, not an accident of
// each node configuring itself.
import { byText } from "../compare.js";
import type { NodeSummary } from "../kube/summary.js";

export interface NodeEntry {
  name: string;
  summary: NodeSummary;
}

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
  /** Shim → how many nodes can run it. */
  shimCounts: Record<string, number>;
  disagreements: Disagreement[];
  overrides: UniformOverrides;
}

export interface UniformOverrides {
  shims: string[];
  defaultShim: string | null;
  /** shim → key → the value pinned, and why. */
  config: Record<string, Record<string, { value: unknown; note: string }>>;
  notes: string[];
}

const yesNo = (v: boolean | undefined) => (v === undefined ? "unknown" : v ? "yes" : "no");

/**
 * What nodes are compared on: each fact the rules read (and the few shown though they decide
 * nothing), as every node published it under its path, and the shims that result. Read off the
 * rules, never listed by hand: a rule reading a new fact makes it compared.
 */
function fieldsOf(nodes: NodeEntry[]): Array<[string, (s: NodeSummary) => string]> {
  const paths: string[] = [];
  for (const n of nodes)
    for (const p of Object.keys(n.summary.facts ?? {})) if (!paths.includes(p)) paths.push(p);
  // Summaries an earlier kata-install published carry no facts: compared on what they do have.
  if (paths.length === 0 || nodes.some((n) => n.summary.facts === undefined)) return LEGACY_FIELDS;
  return [
    ...paths.map((p): [string, (s: NodeSummary) => string] => [p, (s) => shown(s.facts?.[p])]),
    ["shims", (s) => s.shims.join(", ") || "none"],
  ];
}

const shown = (value: string | number | boolean | null | undefined) =>
  value === null || value === undefined ? "unknown" : String(value);

/** What summaries without facts (an earlier kata-install's) are compared on. */
const LEGACY_FIELDS: Array<[string, (s: NodeSummary) => string]> = [
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

function disagreements(nodes: NodeEntry[]): Disagreement[] {
  const out: Disagreement[] = [];
  for (const [field, read] of fieldsOf(nodes)) {
    const byValue = new Map<string, string[]>();
    for (const n of nodes) {
      const value = read(n.summary);
      const list = byValue.get(value);
      if (list) list.push(n.name);
      else byValue.set(value, [n.name]);
    }
    if (byValue.size < 2) continue;
    // The majority is the most common value; a tie goes to the first in sort order, so it is stable.
    const ranked = [...byValue].sort(([a, x], [b, y]) => y.length - x.length || byText(a, b));
    const [majority, majorityNodes] = ranked[0] as [string, string[]];
    out.push({
      field,
      majority: { value: majority, nodes: majorityNodes.length },
      others: ranked.slice(1).map(([value, names]) => ({ value, nodes: names.sort(byText) })),
    });
  }
  return out;
}

/**
 * The overrides that make every node alike: the shims every node can run, one default, and for
 * each configuration value that some nodes' facts decided differently, the value that contradicts
 * no node's facts when there is one (a value a rule chose on the nodes that needed it), else the
 * majority's, with the nodes it goes against named.
 */
function uniform(nodes: NodeEntry[], shimCounts: Record<string, number>): UniformOverrides {
  const total = nodes.length;
  const notes: string[] = [];
  const shims = Object.keys(shimCounts)
    .filter((s) => shimCounts[s] === total)
    .sort(byText);
  for (const [shim, count] of Object.entries(shimCounts).sort(([a], [b]) => byText(a, b)))
    if (count < total) notes.push(`${shim} left out: only ${count} of ${total} nodes can run it`);
  const defaults = new Map<string, number>();
  for (const n of nodes)
    if (n.summary.defaultShim)
      defaults.set(n.summary.defaultShim, (defaults.get(n.summary.defaultShim) ?? 0) + 1);
  const rankedDefaults = [...defaults]
    .filter(([s]) => shims.includes(s))
    .sort(([a, x], [b, y]) => y - x || byText(a, b));
  const defaultShim = rankedDefaults[0]?.[0] ?? shims[0] ?? null;

  const config: UniformOverrides["config"] = {};
  for (const shim of shims) {
    const keys = new Set(nodes.flatMap((n) => Object.keys(n.summary.ruled[shim] ?? {})));
    for (const key of [...keys].sort(byText)) {
      const ruledBy = new Map<string, { value: unknown; nodes: string[] }>();
      let unruled = 0;
      for (const n of nodes) {
        const table = n.summary.ruled[shim];
        if (!table || !(key in table)) {
          unruled++;
          continue;
        }
        const id = JSON.stringify(table[key]);
        const entry = ruledBy.get(id) ?? { value: table[key], nodes: [] };
        entry.nodes.push(n.name);
        ruledBy.set(id, entry);
      }
      if (ruledBy.size === 1 && unruled === 0) continue; // the same on every node already
      const ranked = [...ruledBy.values()].sort((a, b) => b.nodes.length - a.nodes.length);
      const chosen = ranked[0] as { value: unknown; nodes: string[] };
      const note =
        ranked.length === 1
          ? `${chosen.nodes.length} node(s) decided this from their facts; ${unruled} took the default`
          : `nodes' facts decided different values: ${ranked
              .map((r) => `${JSON.stringify(r.value)} on ${r.nodes.length}`)
              .join(", ")}; this goes against the facts of ${ranked
              .slice(1)
              .flatMap((r) => r.nodes)
              .slice(0, 5)
              .join(", ")}${ranked.slice(1).reduce((n, r) => n + r.nodes.length, 0) > 5 ? ", …" : ""}`;
      config[shim] ??= {};
      (config[shim] as Record<string, { value: unknown; note: string }>)[key] = { value: chosen.value, note };
    }
  }
  if (shims.length === 0)
    notes.push("no shim can run on every node: no overrides file gives them all the same shims");
  return { shims, defaultShim, config, notes };
}

export function buildReport(nodes: NodeEntry[], skipped: ClusterReport["skipped"]): ClusterReport {
  const sorted = [...nodes].sort((a, b) => byText(a.name, b.name));
  const shimCounts: Record<string, number> = {};
  for (const n of sorted) for (const s of n.summary.shims) shimCounts[s] = (shimCounts[s] ?? 0) + 1;
  return {
    nodes: sorted.map((n) => ({
      name: n.name,
      shims: n.summary.shims,
      defaultShim: n.summary.defaultShim,
      failed: n.summary.failed,
    })),
    skipped,
    shimCounts,
    disagreements: disagreements(sorted),
    overrides: uniform(sorted, shimCounts),
  };
}
