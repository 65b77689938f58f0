// The overrides that make a set of nodes alike (a pool, or the whole cluster for what they share):
// the shims every one can run, one default, and the values some nodes' facts decided differently.
import { byText } from "../compare.js";
import { toJson } from "../json-text.js";
import { CHART_DEFAULT_SHIM } from "../manifests/kata-deploy/chart.js";
import type { NodeEntry } from "./entry.js";
import { countOf, type NodeKind, namesOf } from "./kinds.js";

export interface UniformOverrides {
  shims: string[];
  defaultShim: string | null;
  /** shim → key → the value pinned, and why. */
  config: Record<string, Record<string, { value: unknown; note: string }>>;
  notes: string[];
}

/** Shim → how many of the nodes of `kinds` can run it. */
export function countShims(kinds: readonly NodeKind[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { summary, at } of kinds)
    for (const s of summary.shims) counts[s] = (counts[s] ?? 0) + at.length;
  return counts;
}

/**
 * The overrides that make the nodes of `kinds` (of the list `nodes`) alike: the shims every one can
 * run, one default (kata-deploy 4.1's, qemu-runtime-rs, when all can run it; else the most common
 * of theirs), and — with `pin` — for each configuration value that some nodes' facts decided
 * differently, the value that contradicts no node's facts when there is one (a value a rule chose
 * on the nodes that needed it), else the majority's, with the nodes it goes against named.
 */
export function uniform(
  nodes: readonly NodeEntry[],
  kinds: readonly NodeKind[],
  pin = true,
): UniformOverrides {
  const shimCounts = countShims(kinds);
  const total = countOf(kinds);
  const notes: string[] = [];
  const shims = Object.keys(shimCounts)
    .filter((s) => shimCounts[s] === total)
    .sort(byText);
  for (const [shim, count] of Object.entries(shimCounts).sort(([a], [b]) => byText(a, b)))
    if (count < total) notes.push(`${shim} left out: only ${count} of ${total} nodes can run it`);
  const defaults = new Map<string, number>();
  for (const { summary, at } of kinds)
    if (summary.defaultShim)
      defaults.set(summary.defaultShim, (defaults.get(summary.defaultShim) ?? 0) + at.length);
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
    const keys = new Set(kinds.flatMap((k) => Object.keys(k.summary.ruled[shim] ?? {})));
    for (const key of [...keys].sort(byText)) {
      const ruledBy = new Map<string, { value: unknown; kinds: NodeKind[]; count: number }>();
      let unruled = 0;
      for (const kind of kinds) {
        const table = kind.summary.ruled[shim];
        if (!table || !(key in table)) {
          unruled += kind.at.length;
          continue;
        }
        const id = toJson(table[key]);
        const entry = ruledBy.get(id) ?? { value: table[key], kinds: [], count: 0 };
        entry.kinds.push(kind);
        entry.count += kind.at.length;
        ruledBy.set(id, entry);
      }
      if (ruledBy.size === 1 && unruled === 0) continue; // the same on every node already
      const ranked = [...ruledBy.values()].sort((a, b) => b.count - a.count);
      const chosen = ranked[0] as { value: unknown; count: number };
      const against = ranked.slice(1);
      const note =
        ranked.length === 1
          ? `${chosen.count} node(s) decided this from their facts; ${unruled} took the default`
          : `nodes' facts decided different values: ${ranked
              .map((r) => `${JSON.stringify(r.value)} on ${r.count}`)
              .join(", ")}; this goes against the facts of ${against
              .flatMap((r) => namesOf(nodes, r.kinds))
              .slice(0, 5)
              .join(", ")}${against.reduce((n, r) => n + r.count, 0) > 5 ? ", …" : ""}`;
      config[shim] ??= {};
      (config[shim] as Record<string, { value: unknown; note: string }>)[key] = { value: chosen.value, note };
    }
  }
  if (shims.length === 0)
    notes.push("no shim can run on every node: no overrides file gives them all the same shims");
  return { shims, defaultShim, config, notes };
}
