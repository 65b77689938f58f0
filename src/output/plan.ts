// The plan, as one JSON document and as the readable view rendered from it: the preflight verdict,
// the shims and artifacts with their reasons, a unified diff per file (`patch -p1` applies them in
// the host root), then the actions.

import { type Changeset, sha256, unifiedDiff } from "../changeset.js";
import { blocking, type Decision } from "../decide/decision.js";
import { NOT_IGNORABLE, type PreflightDocument, preflightDocument } from "./preflight.js";

export interface PlanDocument extends PreflightDocument {
  changes: Array<{
    path: string;
    action: string;
    reason: string;
    diff: string;
    beforeHash: string | null;
    afterHash: string | null;
    /** A symbolic link: the hashes are of its target. */
    link?: true;
  }>;
  actions: Array<{ kind: string; target: string; reason: string }>;
  /** Present with an artifact source and pulls: bytes this node pulls, against the whole release. */
  transfer?: Changeset["transfer"];
}

/** The preflight document, plus what an install would change. */
export function planDocument(decision: Decision, changeset: Changeset): PlanDocument {
  return {
    ...preflightDocument(decision),
    changes: changeset.changes.map((c) => ({
      path: c.path,
      action: c.action,
      reason: c.reason,
      diff: unifiedDiff(c),
      beforeHash: c.beforeHash,
      afterHash: c.blob ? (c.action === "delete" ? null : c.blob.sha256) : sha256(c.after),
      ...(c.link ? { link: true as const } : {}),
    })),
    actions: changeset.actions.map(({ kind, target, reason }) => ({ kind, target, reason })),
    ...(changeset.transfer ? { transfer: changeset.transfer } : {}),
  };
}

export function renderPlan(doc: PlanDocument): string {
  const lines: string[] = [];
  // An ignored error is said as the warning it became, and that it was ignored.
  const failing = doc.checks.filter(
    (c) => (c.status === "fail" && c.severity !== "info") || c.status === "ignored",
  );
  const errors = failing.filter((c) => c.status === "fail" && c.severity === "error");
  if (failing.length === 0) lines.push("Preflight: passed.");
  else {
    lines.push(`Preflight: ${errors.length} error(s), ${failing.length - errors.length} warning(s):`);
    for (const c of [...errors, ...failing.filter((c) => !errors.includes(c))])
      lines.push(
        `  [${c.status === "ignored" ? "WARNING" : c.severity.toUpperCase()}] ${c.id}: ${c.message}${c.status === "ignored" ? " (an error, ignored)" : ""}`,
      );
  }
  lines.push("", "Shims:");
  for (const s of doc.shims) lines.push(`  + ${s.name}: ${s.reason}`);
  for (const s of doc.dropped) lines.push(`  - ${s.name}: ${s.reason}`);
  if (doc.shims.length === 0) lines.push("  (none)");
  lines.push("", "Artifacts:");
  for (const a of doc.artifacts)
    lines.push(`  ${a.name}${a.from === "distro" ? " (the host's own)" : ""}: ${a.reason}`);
  if (doc.artifacts.length === 0) lines.push("  (none)");
  lines.push("");
  for (const c of doc.changes) lines.push(`# ${c.action} ${c.path}: ${c.reason}`, c.diff.trimEnd(), "");
  lines.push("Actions:");
  for (const a of doc.actions) lines.push(`  ${a.kind} ${a.target}: ${a.reason}`);
  if (doc.actions.length === 0) lines.push("  (none)");
  if (doc.transfer) lines.push(`  ${transferLine(doc.transfer)}`);
  const count = (action: string) => doc.changes.filter((c) => c.action === action).length;
  lines.push(
    "",
    doc.changes.length + doc.actions.length === 0
      ? errors.length > 0
        ? "Plan: no changes, as far as the errors above let it plan."
        : "Plan: no changes. The node is as this plan wants it."
      : `Plan: ${count("create")} to create, ${count("modify")} to modify, ${count("delete")} to delete; ${doc.actions.length} action(s).`,
  );
  if (errors.length > 0)
    lines.push(`An install would refuse this node: ${refusalHint(errors.map((c) => c.id))}.`);
  return `${lines.join("\n")}\n`;
}

export function planExitCode(decision: Decision, doc: PlanDocument, detailed: boolean): number {
  if (blocking(decision).length > 0) return 1;
  return detailed && doc.changes.length + doc.actions.length > 0 ? 2 : 0;
}

/** "Pulls 6 of the release's 31 artifacts: 1200 of 9000 bytes (13%)." */
export function transferLine(t: NonNullable<Changeset["transfer"]>): string {
  const share = t.releaseBytes > 0 ? ` (${Math.round((100 * t.bytes) / t.releaseBytes)}%)` : "";
  const reused = t.reused
    ? ` ${t.reused.images} more (${t.reused.bytes} bytes) unchanged since version ${t.reused.version}: taken from the node, not pulled.`
    : "";
  return `Pulls ${t.images} of the release's ${t.releaseImages} artifacts: ${t.bytes} of ${t.releaseBytes} bytes${share}.${reused}`;
}

/** What to do about failing error checks: ignoring is offered only where it works. */
export function refusalHint(ids: string[]): string {
  const fixed = ids.filter((id) => NOT_IGNORABLE.includes(id));
  if (fixed.length === 0) return "fix the errors above, or ignore them with --ignore-preflight-errors";
  if (fixed.length === ids.length) return "fix the errors above (they cannot be ignored)";
  return `fix the errors above (${fixed.join(", ")} cannot be ignored; the others can, with --ignore-preflight-errors)`;
}
