// The RuntimeClasses: one per shim the nodes are to install (kata-<shim>[-<suffix>], the handler's
// name), a -debug one beside each where the nodes get debug handlers (DEBUG), and the default one
// as kata-deploy's chart makes it. Each selects the nodes labelled with its shim; its overhead is
// the chart's for that shim.

import { must } from "../at.js";
import type { Catalog } from "../decide/catalog.js";
import type { InputIssue } from "../input-error.js";
import { shimLabel } from "../kube/node-labels.js";
import { shimRecord } from "../shims/table.js";
import { TEES, type Tee } from "../shims/tees.js";
import { customRuntimeClasses } from "./custom-classes.js";
import { ARCHES, suffixOf } from "./environment.js";
import { CHART_SHIMS } from "./kata-deploy/chart.js";
import type { RuntimeClassSpec } from "./runtime-class.js";
import type { Values } from "./values.js";

type Table = Record<string, unknown>;

/** The TEE a shim's guests run in, from its record (none for a shim kata-install does not know). */
function teeOf(shim: string): Tee | null {
  const tee = shimRecord(shim)?.tee;
  return tee === undefined || tee === "none" ? null : TEES[tee];
}

function pinnedShims(v: Values): string[] {
  const arches = v.arch as Record<string, Table>;
  const overrides = (v.overrides as Table).shims;
  return [
    ...(v.shims as string[]),
    ...ARCHES.flatMap((a) => (arches[a]?.shims as string[]) ?? []),
    ...(Array.isArray(overrides) ? (overrides as string[]) : []),
  ];
}

/**
 * The shims that get a RuntimeClass: as listed; else those the nodes are told to install; else,
 * when every node decides, every shim kata-install installs unasked (not the opt-in ones).
 */
export function classShims(v: Values, catalog: Catalog): string[] {
  const rc = v.runtime_classes as Table;
  const listed = rc.shims as string[];
  const pinned = pinnedShims(v);
  // A pinned shim is one of the rules' or of kata-deploy's (a release's, which its nodes install);
  // kata-deploy's other names install nothing: no class either.
  const served = (s: string) => catalog.shims.has(s) || (CHART_SHIMS.includes(s) && !catalog.unserved.has(s));
  const names =
    listed.length > 0
      ? listed
      : pinned.length > 0
        ? pinned.filter(served)
        : catalog.shimNames().filter((s) => !catalog.shims.get(s)?.opt_in);
  return [...new Set(names)].sort();
}

/** The shim of the default RuntimeClass: its own, else default_shim, else the first architecture's. */
export function defaultShim(v: Values): string | undefined {
  const arches = v.arch as Record<string, Table>;
  const rc = v.runtime_classes as Table;
  return [rc.default_shim, v.default_shim, ...ARCHES.map((a) => arches[a]?.default_shim)]
    .map((s) => String(s ?? "").trim())
    .find((s) => s !== "");
}

export function runtimeClasses(
  v: Values,
  catalog: Catalog,
  notes: InputIssue[],
  issues: InputIssue[],
  file: string,
): RuntimeClassSpec[] {
  const rc = v.runtime_classes as Table;
  if (!rc.create) return [];
  const suffix = suffixOf(v);
  const nfdRules = Boolean((v.nfd as Table).node_feature_rules);
  const byShim = (key: string) => rc[key] as Record<string, Table>;
  const handler = (shim: string) => `kata-${shim}${suffix ? `-${suffix}` : ""}`;
  const labels = {
    "app.kubernetes.io/managed-by": "kata-install",
    "kata-deploy/instance": suffix ?? "default",
    ...(rc.labels as Record<string, string>),
  };
  const annotations = {
    "katacontainers.io/kata-version": String(v.kata_version),
    ...(rc.annotations as Record<string, string>),
  };
  const spec = (shim: string, name: string, handlerName: string): RuntimeClassSpec => {
    const enabled = (rc.overhead_enabled_by_shim as Record<string, boolean>)[shim] ?? rc.overhead_enabled;
    const overhead: Record<string, string> = enabled
      ? {
          ...(rc.overhead as Record<string, string>),
          ...((byShim("overhead_by_shim")[shim] ?? {}) as Record<string, string>),
        }
      : {};
    // A TEE key per sandbox whatever overhead_enabled says: without it the scheduler would place
    // more confidential pods on a node than it has keys for.
    const tee = teeOf(shim);
    if (nfdRules && tee !== null && tee.nfdResource !== "none") overhead[tee.nfdResource] = "1";
    const own = byShim("node_selector_by_shim")[shim] as Record<string, string> | undefined;
    const selector: Record<string, string> = { ...(own ?? {}), [shimLabel(shim, suffix)]: "true" };
    // As kata-deploy's chart: NFD's TEE label for the TEE shims that set no selector of their own
    // (by default: the GPU ones carry theirs, their TEE's label among them).
    if (rc.tee_node_selectors && own === undefined && tee !== null && tee.runtimeClassSelector !== "none")
      selector[tee.runtimeClassSelector] = "true";
    return {
      name,
      handler: handlerName,
      labels,
      annotations,
      overhead: Object.keys(overhead).length > 0 ? overhead : null,
      nodeSelector: selector,
    };
  };
  const shims = classShims(v, catalog);
  const classes = shims.map((shim) => spec(shim, handler(shim), handler(shim)));
  if (v.debug) classes.push(...shims.map((s) => spec(s, `${handler(s)}-debug`, `${handler(s)}-debug`)));
  classes.push(...customRuntimeClasses(v, spec, file, issues));
  if (rc.create_default) {
    if (suffix)
      notes.push({
        file,
        key: "runtime_classes.create_default",
        message: `no "${rc.default_name}" RuntimeClass with multi_install_suffix (as kata-deploy's chart): its handler would be one install's among several; name kata-<shim>-${suffix} instead`,
      });
    else {
      const shim = must(defaultShim(v), "the default shim"); // checked: manifests.ts
      classes.push(spec(shim, String(rc.default_name), handler(shim)));
    }
  }
  return classes;
}

export type { RuntimeClassSpec };
