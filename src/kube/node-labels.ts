// The labels and annotation a node carries, as JSON merge patches (RFC 7386: a key set to null is
// removed). A RuntimeClass selects nodes on the shim labels, so they must say exactly what is
// installed: while an install runs the node says kata-runtime=false, after it true with one label
// per shim; after cleanup nothing of ours is left. Other labels are never touched.
import type { NodeSummary } from "./summary.js";

export const RUNTIME_LABEL = "katacontainers.io/kata-runtime";
export const SHIM_LABEL_PREFIX = "katacontainers.io/shim.";
export const SUMMARY_ANNOTATION = "katacontainers.io/kata-install";

export interface NodeMeta {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface MergePatch {
  metadata: { labels?: Record<string, string | null>; annotations?: Record<string, string | null> };
}

export function shimLabel(shim: string): string {
  return `${SHIM_LABEL_PREFIX}${shim}`;
}

/** Shim labels of ours the node carries. */
function ourShimLabels(meta: NodeMeta): string[] {
  return Object.keys(meta.labels ?? {}).filter((k) => k.startsWith(SHIM_LABEL_PREFIX));
}

/** Before anything is written: not ready for Kata pods, and no shim claimed. */
export function installingPatch(meta: NodeMeta): MergePatch {
  const labels: Record<string, string | null> = { [RUNTIME_LABEL]: "false" };
  for (const label of ourShimLabels(meta)) labels[label] = null;
  return { metadata: { labels } };
}

/** After a successful install: ready, the installed shims and nothing else, and the summary. */
export function installedPatch(meta: NodeMeta, summary: NodeSummary): MergePatch {
  const labels: Record<string, string | null> = { [RUNTIME_LABEL]: "true" };
  for (const label of ourShimLabels(meta)) labels[label] = null;
  for (const shim of summary.shims) labels[shimLabel(shim)] = "true";
  return { metadata: { labels, annotations: { [SUMMARY_ANNOTATION]: JSON.stringify(summary) } } };
}

/** After cleanup: every label and the annotation of ours removed. */
export function cleanupPatch(meta: NodeMeta): MergePatch {
  const labels: Record<string, string | null> = {};
  for (const label of [RUNTIME_LABEL, ...ourShimLabels(meta)])
    if (meta.labels?.[label] !== undefined) labels[label] = null;
  const annotations: Record<string, string | null> = {};
  if (meta.annotations?.[SUMMARY_ANNOTATION] !== undefined) annotations[SUMMARY_ANNOTATION] = null;
  return { metadata: { labels, annotations } };
}
