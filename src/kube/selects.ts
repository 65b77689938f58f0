// Whether a DaemonSet still wants its pod on a node, as the scheduler would judge it: the pod
// template's nodeSelector, its required node affinity, and the node's NoSchedule/NoExecute taints
// against its tolerations. The entrypoint asks this on SIGTERM: only a node the DaemonSet no longer
// selects is cleaned up — a rolling update or a pod restart must never uninstall Kata from under
// running Kata pods.
import type { DaemonSetView, KubeNode } from "./api.js";

/** Tolerations the DaemonSet controller gives every daemon pod, whatever the template says. */
const DAEMON_TOLERATED = new Set([
  "node.kubernetes.io/not-ready",
  "node.kubernetes.io/unreachable",
  "node.kubernetes.io/disk-pressure",
  "node.kubernetes.io/memory-pressure",
  "node.kubernetes.io/pid-pressure",
  "node.kubernetes.io/unschedulable",
  "node.kubernetes.io/network-unavailable",
]);

export type Selection = { selects: true } | { selects: false; why: string };

type Requirement = { key: string; operator: string; values?: string[] };

function holds(req: Requirement, value: string | undefined): boolean {
  const values = req.values ?? [];
  switch (req.operator) {
    case "In":
      return value !== undefined && values.includes(value);
    case "NotIn":
      return value === undefined || !values.includes(value);
    case "Exists":
      return value !== undefined;
    case "DoesNotExist":
      return value === undefined;
    case "Gt":
    case "Lt": {
      const a = Number(value);
      const b = Number(values[0]);
      if (value === undefined || !Number.isInteger(a) || !Number.isInteger(b)) return false;
      return req.operator === "Gt" ? a > b : a < b;
    }
    default:
      return false; // an operator the API would have refused
  }
}

export function daemonSetSelects(ds: DaemonSetView | null, node: KubeNode): Selection {
  if (ds === null) return { selects: false, why: "the DaemonSet is gone" };
  if (ds.deleting) return { selects: false, why: "the DaemonSet is being deleted" };
  const labels = node.meta.labels ?? {};
  for (const [key, value] of Object.entries(ds.nodeSelector))
    if (labels[key] !== value)
      return {
        selects: false,
        why: `its nodeSelector wants ${key}=${value}, the node has ${labels[key] ?? "no such label"}`,
      };
  if (ds.nodeAffinityTerms.length > 0) {
    // Terms are ORed; the requirements inside a term are ANDed.
    const anyTerm = ds.nodeAffinityTerms.some(
      (term) =>
        (term.matchExpressions ?? []).every((r) => holds(r, labels[r.key])) &&
        (term.matchFields ?? []).every((r) => holds(r, r.key === "metadata.name" ? node.name : undefined)),
    );
    if (!anyTerm) return { selects: false, why: "no term of its required node affinity matches the node" };
  }
  for (const taint of node.taints) {
    if (taint.effect !== "NoSchedule" && taint.effect !== "NoExecute") continue;
    if (DAEMON_TOLERATED.has(taint.key)) continue;
    const tolerated = ds.tolerations.some(
      (t) =>
        (t.effect === undefined || t.effect === "" || t.effect === taint.effect) &&
        (t.operator === "Exists"
          ? t.key === undefined || t.key === "" || t.key === taint.key
          : t.key === taint.key && (t.value ?? "") === (taint.value ?? "")),
    );
    if (!tolerated)
      return { selects: false, why: `it does not tolerate the node's taint ${taint.key}:${taint.effect}` };
  }
  return { selects: true };
}
