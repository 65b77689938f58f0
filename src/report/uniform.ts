// The overrides that make a set of nodes alike (a pool, or the whole cluster for what they share):
// the shims every one can run, one default, and the values some nodes' facts decided differently.
import { byText } from "../compare.js";
import { CHART_DEFAULT_SHIM } from "../manifests/kata-deploy/chart.js";
import type { NodeEntry } from "./report.js";

export interface UniformOverrides {
  shims: string[];
  defaultShim: string | null;
  /** shim → key → the value pinned, and why. */
  config: Record<string, Record<string, { value: unknown; note: string }>>;
  notes: string[];
}

export function countShims(nodes: NodeEntry[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const n of nodes) for (const s of n.summary.shims) counts[s] = (counts[s] ?? 0) + 1;
  return counts;
}

/**
 * The overrides that make `nodes` alike: the shims every one can run, one default (kata-deploy
 * 4.1's, qemu-runtime-rs, when all can run it; else the most common of theirs), and — with `pin` —
 * for each configuration value that some nodes' facts decided differently, the value that
 * contradicts no node's facts when there is one (a value a rule chose on the nodes that needed it),
 * else the majority's, with the nodes it goes against named.
 */
export function uniform(nodes: NodeEntry[], pin = true): UniformOverrides {
  const shimCounts = countShims(nodes);
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
  const defaultShim = shims.includes(CHART_DEFAULT_SHIM)
    ? CHART_DEFAULT_SHIM
    : (rankedDefaults[0]?.[0] ?? shims[0] ?? null);
  if (defaultShim === CHART_DEFAULT_SHIM && rankedDefaults[0]?.[0] !== CHART_DEFAULT_SHIM)
    notes.push(`default ${CHART_DEFAULT_SHIM}: kata-deploy 4.1's default, which every node here can run`);

  const config: UniformOverrides["config"] = {};
  for (const shim of pin ? shims : []) {
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
