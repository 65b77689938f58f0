// kubeadm-style preflight output, rendered from the JSON document that `preflight --json` prints.

import { byText } from "../compare.js";
import { blocking, type Decision } from "../decide/decision.js";

export interface PreflightDocument {
  checks: Array<{
    id: string;
    severity: string;
    status: string;
    message: string;
    hint?: string;
    rule: string;
  }>;
  shims: Array<{ name: string; reason: string }>;
  dropped: Array<{ name: string; reason: string }>;
  artifacts: Array<{ name: string; reason: string; from: string }>;
}

export function preflightDocument(decision: Decision): PreflightDocument {
  return {
    checks: decision.checks.map(({ id, severity, status, message, hint, rule }) => ({
      id,
      severity,
      status,
      message,
      hint,
      rule,
    })),
    shims: decision.shims.map(({ name, reason }) => ({ name, reason })),
    dropped: decision.dropped.map(({ name, reason }) => ({ name, reason })),
    artifacts: decision.artifacts.map(({ name, reason, from }) => ({ name, reason, from })),
  };
}

/**
 * Checks made on the plan itself, after the decision: what they guard (a Kata that cannot boot,
 * someone else's files, artifacts that cannot be had, a runtime that cannot be restarted) is never
 * ignored.
 */
export const NOT_IGNORABLE = [
  "artifact-paths",
  "kata-config",
  "install-prefix",
  "artifact-source",
  "artifact-blobs",
  "runtime-handlers",
  "restart-command",
];

const LABEL: Record<string, string> = { pass: "ok", fail: "FAIL", ignored: "ignored" };

export function renderPreflight(doc: PreflightDocument, where: string): string {
  const lines = [`[preflight] Running pre-flight checks on ${where}`];
  const order = (s: string) => ({ fail: 0, ignored: 1, pass: 2 })[s] ?? 3;
  const severityOrder = (s: string) => ({ error: 0, warning: 1, info: 2 })[s] ?? 3;
  // Failures first, by severity; passing checks after them, by name.
  const checks = [...doc.checks].sort(
    (a, b) =>
      order(a.status) - order(b.status) ||
      (a.status === "pass" ? 0 : severityOrder(a.severity) - severityOrder(b.severity)) ||
      byText(a.id, b.id),
  );
  const width = Math.max(...checks.map((c) => c.id.length), 8);
  for (const check of checks) {
    const label = `[${check.status === "fail" ? check.severity.toUpperCase() : LABEL[check.status]}]`.padEnd(
      10,
    );
    const text = check.status === "pass" ? "" : `  ${check.message}`;
    lines.push(`  ${label}${check.id.padEnd(width)}${text}`.trimEnd());
    if (check.status !== "pass" && check.hint) lines.push(`  ${" ".repeat(10 + width)}  hint: ${check.hint}`);
  }
  const count = (severity: string) =>
    doc.checks.filter((c) => c.status === "fail" && c.severity === severity).length;
  const errors = count("error");
  // Ignored errors are warnings now, and said to be ignored ones.
  const ignored = doc.checks.filter((c) => c.status === "ignored").length;
  const warnings = count("warning") + ignored;
  const warningText = `${warnings} warning${warnings === 1 ? "" : "s"}${ignored > 0 ? ` (${ignored} ignored error${ignored === 1 ? "" : "s"})` : ""}`;
  lines.push("");
  lines.push(`Shims for this node: ${doc.shims.map((s) => s.name).join(", ") || "none"}`);
  for (const d of doc.dropped) lines.push(`  dropped ${d.name}: ${d.reason}`);
  // Each artifact with why it is pulled (the shims, and the artifacts that depend on it).
  if (doc.artifacts.length > 0) lines.push("Artifacts for this node:");
  for (const a of doc.artifacts)
    lines.push(`  ${a.name}${a.from === "distro" ? " (the host's own)" : ""}: ${a.reason}`);
  lines.push("");
  if (errors > 0) {
    const ids = doc.checks.filter((c) => c.status === "fail" && c.severity === "error").map((c) => c.id);
    const fixed = ids.filter((id) => NOT_IGNORABLE.includes(id));
    lines.push(
      `[preflight] ${errors} error${errors === 1 ? "" : "s"}, ${warningText}: an install would refuse this node.`,
      fixed.length === ids.length
        ? `[preflight] ${fixed.join(", ")} cannot be ignored: fix ${fixed.length === 1 ? "it" : "them"} first`
        : `[preflight] To go ahead anyway, ignore checks by id: --ignore-preflight-errors=<id>,<id> (or all)${fixed.length > 0 ? `; ${fixed.join(", ")} cannot be ignored` : ""}`,
    );
  } else {
    lines.push(`[preflight] passed with ${warningText}`);
  }
  return `${lines.join("\n")}\n`;
}

export function preflightExitCode(decision: Decision): number {
  return blocking(decision).length > 0 ? 1 : 0;
}
