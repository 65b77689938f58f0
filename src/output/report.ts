// A cluster report as text, and its overrides as files: what every node shares, and each pool's.

import { tomlComment, tomlKey, tomlLiteral } from "../render/toml-literal.js";
import type { Pool, PoolKey } from "../report/pools.js";
import type { ClusterReport, UniformOverrides } from "../report/report.js";

const LIST = 8;

function names(list: string[]): string {
  return list.length <= LIST
    ? list.join(", ")
    : `${list.slice(0, LIST).join(", ")}, … (${list.length - LIST} more)`;
}

/** What decides a pool's plan, in words. */
export function describePool(k: PoolKey): string {
  return [
    k.arch ?? "unknown architecture",
    k.runtime ?? "no runtime",
    k.tee.length > 0 ? `TEE ${k.tee.join(", ")}` : "no TEE",
    k.gpus.length > 0 ? `GPU ${k.gpus.join(", ")}` : "no GPU",
    // Which qemu is pulled, not which every shim runs: a node with a usable host qemu still pulls
    // Kata's for a shim the host's cannot serve (qemu-snp on RHEL's qemu-kvm).
    k.distroQemu ? "the distribution's qemu only" : "Kata's qemu pulled",
  ].join(", ");
}

function poolLines(pool: Pool, total: number): string[] {
  const count = pool.nodes.length;
  const lines = [
    `  ${pool.id}: ${count === total ? "every node" : `${count} node(s)${count <= LIST ? `: ${names(pool.nodes)}` : ""}`}`,
    `    ${describePool(pool.key)}`,
    `    shims ${pool.overrides.shims.join(", ") || "(none)"}; default ${pool.overrides.defaultShim ?? "(none)"}`,
  ];
  const errors = pool.checks.filter((c) => c.severity === "error").length;
  const warnings = pool.checks.filter((c) => c.severity === "warning").length;
  lines.push(`    preflight: ${errors} error(s), ${warnings} warning(s)`);
  for (const c of pool.checks)
    lines.push(
      `      [${c.severity.toUpperCase()}] ${c.id} on ${c.nodes.length === count ? "every node here" : names(c.nodes)}: ${c.message}`,
    );
  return lines;
}

/** A reason of several lines (a schema's problems), its later lines under the first's. */
export function indented(reason: string, by = "    "): string {
  return reason.split("\n").join(`\n${by}`);
}

/** Each file's line, up to LIST of them, then how many more (the JSON has them all). */
function fileLines(list: ClusterReport["skipped"], verb: string): string[] {
  const lines = list.slice(0, LIST).map((s) => `  ${verb} ${s.source}: ${indented(s.reason)}`);
  if (list.length > LIST) lines.push(`  … and ${list.length - LIST} more`);
  return lines;
}

/** `from`: where the nodes came from (and the overrides they were decided with), as the command says it. */
export function renderReport(report: ClusterReport, from: string, written: string[] = []): string {
  const total = report.nodes.length;
  const lines = [
    `${total} node(s), from ${from}${report.skipped.length > 0 ? `; ${report.skipped.length} left out` : ""}${report.partial.length > 0 ? `; ${report.partial.length} read in part` : ""}.`,
    ...fileLines(report.skipped, "left out"),
    ...fileLines(report.partial, "read in part"),
  ];
  lines.push("", "Shims, by the nodes that can run them:");
  const shims = [...new Set([...Object.keys(report.shimCounts), ...Object.keys(report.blockedShimCounts)])];
  const counts = shims
    .map((s): [string, number, number] => [s, report.shimCounts[s] ?? 0, report.blockedShimCounts[s] ?? 0])
    .sort(([a, x, p], [b, y, q]) => y - x || q - p || (a < b ? -1 : 1));
  const width = Math.max(4, ...counts.map(([s]) => s.length));
  for (const [shim, count, later] of counts)
    lines.push(
      `  ${shim.padEnd(width)}  ${count === total ? "every node" : `${count} of ${total}`}${later > 0 ? ` (${later} more once their preflight errors are fixed)` : ""}`,
    );
  if (counts.length === 0) lines.push("  (none)");
  lines.push("", "Pools (nodes that get the same plan: architecture, runtime, TEE, GPU, distribution qemu):");
  for (const pool of report.pools) lines.push(...poolLines(pool, total));
  lines.push("");
  if (report.disagreements.length === 0)
    lines.push("Every node agrees on every fact that changes a decision.");
  else {
    lines.push("Where nodes differ from the majority, on facts Kata depends on:");
    for (const d of report.disagreements) {
      lines.push(`  ${d.field}: ${d.majority.value} on ${d.majority.nodes} node(s); but`);
      for (const o of d.others) lines.push(`    ${o.value} on ${o.nodes.length}: ${names(o.nodes)}`);
    }
  }
  const o = report.overrides;
  lines.push(
    "",
    `What every node shares (--emit-overrides FILE writes it, and one file per pool beside it): shims ${o.shims.join(", ") || "(none)"}, default ${o.defaultShim ?? "(none)"}.`,
  );
  for (const note of o.notes) lines.push(`  ${note}`);
  for (const file of written) lines.push(`Written: ${file}`);
  return `${lines.join("\n")}\n`;
}

const HOW =
  "# Review it; then give it to those nodes (/etc/kata-containers/kata-install.toml, install\n# --overrides FILE, or the [overrides] of a DaemonSet of their own: docs/commands.md,\n# `kata-install report`), so that no node configures itself differently. `kata-install report --facts-dir DIR\n# --overrides FILE` shows what the nodes would decide with it.";

function body(o: UniformOverrides): string[] {
  const lines: string[] = [];
  for (const note of o.notes) lines.push(`# ${tomlComment(note)}`);
  lines.push("", `shims = ${tomlLiteral(o.shims)}`);
  if (o.defaultShim) lines.push(`default_shim = ${tomlLiteral(o.defaultShim)}`);
  for (const [shim, keys] of Object.entries(o.config)) {
    lines.push("", `[config.${tomlKey(shim)}]`);
    for (const [key, { value, note }] of Object.entries(keys)) {
      lines.push(`# ${tomlComment(note)}`);
      lines.push(`${tomlKey(key)} = ${tomlLiteral(value)}`);
    }
  }
  return lines;
}

/** The file for every node: what they all share. */
export function renderOverrides(o: UniformOverrides, from: string, nodes: number): string {
  const lines = [
    `# Written by \`kata-install report\` from ${nodes} node(s): ${tomlComment(from)}.`,
    "# What every node shares: the shims they can all run (and a default, if every pool has the",
    "# same). The values their pools decide differently are in each pool's file.",
    HOW,
    ...body(o),
  ];
  return `${lines.join("\n")}\n`;
}

/** A pool's file: its nodes, the term that selects them, and what makes them alike. */
export function renderPoolOverrides(pool: Pool, from: string): string {
  const lines = [
    `# Written by \`kata-install report\` from ${tomlComment(from)}: pool ${pool.id}, ${pool.nodes.length} node(s).`,
    `# What decides their plan: ${tomlComment(describePool(pool.key))}.`,
    "# The nodes it applies to, as a node affinity term (nodeSelectorTerms; the kata.feature.node.",
    "# kubernetes.io/ labels are the nodes' own, from `manifests --set nfd.feature_file=true`):",
    ...pool.selector.matchExpressions.map(
      (r) =>
        `#   - {key: ${r.key}, operator: ${r.operator}${r.values ? `, values: [${r.values.map((v) => JSON.stringify(v)).join(", ")}]` : ""}}`,
    ),
    `# Its nodes: ${tomlComment(pool.nodes.join(", "))}.`,
    HOW,
    ...body(pool.overrides),
  ];
  return `${lines.join("\n")}\n`;
}
