// A cluster report as text, and its uniform configuration as an overrides file.

import { tomlComment, tomlKey, tomlLiteral } from "../render/toml-literal.js";
import type { ClusterReport, UniformOverrides } from "../report/report.js";

const LIST = 8;

function names(list: string[]): string {
  return list.length <= LIST
    ? list.join(", ")
    : `${list.slice(0, LIST).join(", ")}, … (${list.length - LIST} more)`;
}

export function renderReport(report: ClusterReport): string {
  const total = report.nodes.length;
  const lines = [
    `${total} node(s)${report.skipped.length > 0 ? `, ${report.skipped.length} left out` : ""}.`,
  ];
  for (const s of report.skipped.slice(0, LIST)) lines.push(`  left out ${s.source}: ${s.reason}`);
  if (report.skipped.length > LIST) lines.push(`  … and ${report.skipped.length - LIST} more`);
  lines.push("", "Shims, by the nodes that can run them:");
  const counts = Object.entries(report.shimCounts).sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1));
  const width = Math.max(4, ...counts.map(([s]) => s.length));
  for (const [shim, count] of counts)
    lines.push(`  ${shim.padEnd(width)}  ${count === total ? "every node" : `${count} of ${total}`}`);
  if (counts.length === 0) lines.push("  (none)");
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
    `The same configuration on every node (--emit-overrides FILE writes it): shims ${o.shims.join(", ") || "(none)"}, default ${o.defaultShim ?? "(none)"}, ${Object.values(o.config).reduce((n, keys) => n + Object.keys(keys).length, 0)} value(s) pinned.`,
  );
  for (const note of o.notes) lines.push(`  ${note}`);
  return `${lines.join("\n")}\n`;
}

export function renderOverrides(o: UniformOverrides, from: string, nodes: number): string {
  const lines = [
    `# Written by \`kata-install report\` from ${nodes} node(s): ${tomlComment(from)}.`,
    "# One configuration that every node can run. Review it; then give it to every node",
    "# (/etc/kata-containers/kata-install.toml, or install --overrides FILE), so that no node",
    "# configures itself differently. `kata-install report --facts-dir DIR --overrides FILE` shows",
    "# what the nodes would decide with it.",
  ];
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
  return `${lines.join("\n")}\n`;
}
