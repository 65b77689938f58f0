// Whether a DaemonSet still wants its pod on a node, as kata-deploy judges it: the pod template's
// nodeSelector and its required node affinity, nothing else. The entrypoint asks this on SIGTERM:
// only a node the DaemonSet no longer selects is cleaned up. Taints are left out on purpose: a
// maintenance NoSchedule taint plus a pod restart must not uninstall Kata under running Kata pods
// (the DaemonSet controller keeps a running daemon pod on a tainted node anyway).
import type { DaemonSetView, KubeNode, NodeSelectorTerm } from "./api.js";

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

/** A term with no requirement matches no node, as Kubernetes reads it (not every node). */
function termMatches(term: NodeSelectorTerm, node: KubeNode): boolean {
  const labels = node.meta.labels ?? {};
  const expressions = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (expressions.length === 0 && fields.length === 0) return false;
  return (
    expressions.every((r) => holds(r, labels[r.key])) &&
    fields.every((r) => holds(r, r.key === "metadata.name" ? node.name : undefined))
  );
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
  // Terms are ORed (none: no node), the requirements inside a term ANDed.
  if (ds.nodeAffinityTerms !== null && !ds.nodeAffinityTerms.some((term) => termMatches(term, node)))
    return { selects: false, why: "no term of its required node affinity matches the node" };
  return { selects: true };
}
