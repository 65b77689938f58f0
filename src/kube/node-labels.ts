// The labels and annotation a node carries, as JSON merge patches (RFC 7386: a key set to null is
// removed). RuntimeClasses select nodes on them, so they must say exactly what is installed.
//
// Labels kata-deploy sets are set too, with its meaning, so that pods of RuntimeClasses made by its
// chart keep scheduling while a cluster moves to kata-install: katacontainers.io/kata-runtime
// (shared by every install on the node: "false" on a node claimed and not yet served, "true" once one
// serves Kata)
// and each install's own mark kata-deploy.katacontainers.io/<suffix|default>. kata-install adds one
// katacontainers.io/shim.<shim>[-<suffix>] per installed shim, the name of its handler. An install
// changes only its own mark, shim labels and annotation; the shared label goes only with the last
// install that held it. Other labels are never touched.
import type { NodeSummary } from "./summary.js";

export const RUNTIME_LABEL = "katacontainers.io/kata-runtime";
/** kata-deploy's value of RUNTIME_LABEL (and of a mark) while an install has not finished. */
const PENDING = "false";
export const INSTANCE_LABEL_PREFIX = "kata-deploy.katacontainers.io/";
export const SHIM_LABEL_PREFIX = "katacontainers.io/shim.";
export const SUMMARY_ANNOTATION = "katacontainers.io/kata-install";

export interface NodeMeta {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface MergePatch {
  metadata: {
    labels?: Record<string, string | null>;
    annotations?: Record<string, string | null>;
    /** A precondition: the API refuses the patch when the node changed since it was read. */
    resourceVersion?: string;
  };
  spec?: { taints?: Array<{ key: string; value?: string; effect: string }> };
}

/** Which install on the node: its MULTI_INSTALL_SUFFIX, and every shim it could label. */
export interface Install {
  suffix: string | null;
  shims: readonly string[];
}

/** The label of an installed shim: its handler's name, kata-<shim>[-<suffix>], without "kata-". */
export function shimLabel(shim: string, suffix: string | null = null): string {
  return `${SHIM_LABEL_PREFIX}${shim}${suffix ? `-${suffix}` : ""}`;
}

/** The mark of one install, as kata-deploy names it. */
export function instanceLabel(suffix: string | null): string {
  return `${INSTANCE_LABEL_PREFIX}${suffix ?? "default"}`;
}

/** Each install's own summary: two installs on a node must not overwrite each other's. */
export function summaryAnnotation(suffix: string | null): string {
  return suffix ? `${SUMMARY_ANNOTATION}-${suffix}` : SUMMARY_ANNOTATION;
}

/** Shim labels of this install the node carries (set by it, or by hand for one of its shims). */
function ourShimLabels(meta: NodeMeta, install: Install): string[] {
  const ours = new Set(install.shims.map((s) => shimLabel(s, install.suffix)));
  return Object.keys(meta.labels ?? {}).filter((k) => ours.has(k));
}

/**
 * What the other installs' marks say about the shared label, as kata-deploy reads them: one that
 * serves Kata keeps it "true"; marks that are all unfinished keep it, but "false"; none: it goes.
 */
export function sharedLabelAfter(meta: NodeMeta, install: Install): "keep" | "demote" | "remove" {
  const ours = instanceLabel(install.suffix);
  const others = Object.entries(meta.labels ?? {}).filter(
    ([key]) => key !== ours && key.startsWith(INSTANCE_LABEL_PREFIX),
  );
  if (others.some(([, value]) => value !== PENDING)) return "keep";
  return others.length > 0 ? "demote" : "remove";
}

/**
 * Before anything is written, the node is claimed as kata-deploy claims it: the shared label and
 * this install's mark are set to "false" where they are absent, so a cleanup finds a node that is
 * half installed. A label already there is left alone: a re-install on a node that serves Kata
 * (a rolling update, a restarted pod) never takes it out of scheduling, and its shim labels stay
 * until the install says what it now serves. Null: nothing to claim.
 */
export function installingPatch(meta: NodeMeta, install: Install): MergePatch | null {
  const labels: Record<string, string> = {};
  for (const key of [RUNTIME_LABEL, instanceLabel(install.suffix)])
    if (meta.labels?.[key] === undefined) labels[key] = PENDING;
  return Object.keys(labels).length === 0 ? null : { metadata: { labels } };
}

/** After a successful install: ready, its installed shims and no other of its own, and the summary. */
export function installedPatch(meta: NodeMeta, install: Install, summary: NodeSummary): MergePatch {
  const labels: Record<string, string | null> = {
    [RUNTIME_LABEL]: "true",
    [instanceLabel(install.suffix)]: "true",
  };
  for (const label of ourShimLabels(meta, install)) labels[label] = null;
  for (const shim of summary.shims) labels[shimLabel(shim, install.suffix)] = "true";
  return {
    metadata: { labels, annotations: { [summaryAnnotation(install.suffix)]: JSON.stringify(summary) } },
  };
}

/**
 * After cleanup: this install's labels and annotation gone; the shared one only if nobody holds it.
 * `legacyHolder`: another kata-deploy without marks (an older one) still has its pod here, so the
 * shared label is its too.
 */
export function cleanupPatch(meta: NodeMeta, install: Install, legacyHolder = false): MergePatch {
  const labels: Record<string, string | null> = {};
  const present = (key: string) => meta.labels?.[key] !== undefined;
  for (const label of [instanceLabel(install.suffix), ...ourShimLabels(meta, install)])
    if (present(label)) labels[label] = null;
  const verdict = sharedLabelAfter(meta, install);
  const shared = legacyHolder && verdict === "remove" ? "keep" : verdict;
  if (shared === "remove" && present(RUNTIME_LABEL)) labels[RUNTIME_LABEL] = null;
  if (shared === "demote" && meta.labels?.[RUNTIME_LABEL] !== PENDING) labels[RUNTIME_LABEL] = PENDING;
  const annotations: Record<string, string | null> = {};
  const summary = summaryAnnotation(install.suffix);
  if (meta.annotations?.[summary] !== undefined) annotations[summary] = null;
  return { metadata: { labels, annotations } };
}
