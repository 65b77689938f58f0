// The values `manifests` renders from: the defaults beside the templates (templates/k8s/values.toml),
// then a values file (-f: ours in TOML, or kata-deploy's chart values in YAML), then --set
// KEY=VALUE, each checked against the defaults' keys and types. Every problem is reported at once,
// with the file, line and key.
import fs from "node:fs";
import { parse } from "smol-toml";
import { type Catalog, parseToml } from "../decide/catalog.js";
import { InputError, type InputIssue } from "../input-error.js";
import { readInputText } from "../input-file.js";
import { SHIMS } from "../shims/table.js";
import { TomlLines } from "../toml-lines.js";
import { CHART } from "./kata-deploy/chart.js";
import type { Entry } from "./kata-deploy/ledger.js";
import { mapChartValues } from "./kata-deploy/map.js";
import { readChartValues } from "./kata-deploy/read.js";
import { unpublishedNotes } from "./published.js";

import type { Values } from "./values-type.js";

export type { Values };

/** Tables whose keys are the user's (label names, shim names, Kubernetes' own fields) and lists of any shape. */
const FREE_FORM = new Set([
  "node_selector",
  "tolerations",
  "image_pull_secrets",
  "affinity",
  "resources",
  "pod_labels",
  "pod_annotations",
  "update_strategy",
  "overrides",
  "runtime_classes.labels",
  "runtime_classes.annotations",
  "runtime_classes.overhead_by_shim",
  "runtime_classes.overhead_enabled_by_shim",
  "runtime_classes.node_selector_by_shim",
  "runtime_classes.custom",
  "monitor.security_context",
  "monitor.resources",
]);
/** Free-form tables a file replaces whole: half of one and half of another is no valid object. */
const REPLACED = new Set([
  "affinity",
  "resources",
  "update_strategy",
  "monitor.security_context",
  "monitor.resources",
]);

function kindOf(value: unknown): string {
  if (Array.isArray(value)) return "a list";
  if (value !== null && typeof value === "object") return "a table";
  if (typeof value === "number") return "a number";
  return `a ${typeof value}`;
}

function isTable(value: unknown): value is Values {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * `given` over `base`, key by key; a key the defaults do not have, or a value of another kind, is an
 * issue (reported through `at`, which knows the file and its lines).
 */
/** Where each value the user gave was set, by its key ("probes.startup.period_seconds"). */
export type Origins = Map<string, { file: string; line?: number }>;

function mergeChecked(
  base: Values,
  given: Values,
  path: string[],
  at: (path: string[]) => { file: string; line?: number },
  issues: InputIssue[],
  origins: Origins,
): Values {
  const out: Values = { ...base };
  for (const [key, value] of Object.entries(given)) {
    const keyPath = [...path, key];
    const name = keyPath.join(".");
    if (!(key in base) && !FREE_FORM.has(path.join("."))) {
      const known = Object.keys(base).sort().join(", ");
      issues.push({ ...at(keyPath), key: name, message: `unknown key (known here: ${known})` });
      continue;
    }
    const current = base[key];
    if (FREE_FORM.has(name) || FREE_FORM.has(path.join("."))) {
      if (current !== undefined && kindOf(current) !== kindOf(value))
        issues.push({
          ...at(keyPath),
          key: name,
          message: `expected ${kindOf(current)}, got ${kindOf(value)}`,
        });
      // A table the user keys adds to what is there (a file's labels and a --set's); a list replaces.
      else {
        out[key] =
          isTable(current) && isTable(value) && !REPLACED.has(name) ? { ...current, ...value } : value;
        origins.set(name, at(keyPath));
      }
      continue;
    }
    if (isTable(current) && isTable(value))
      out[key] = mergeChecked(current, value, keyPath, at, issues, origins);
    else if (kindOf(current) !== kindOf(value))
      issues.push({
        ...at(keyPath),
        key: name,
        message: `expected ${kindOf(current)}, got ${kindOf(value)}`,
      });
    else {
      out[key] = value;
      origins.set(name, at(keyPath));
    }
  }
  return out;
}

/** KEY=VALUE: VALUE as TOML when it reads as TOML (true, 3, ["a", "b"], { a = "b" }), else a string. */
export function parseSet(assignment: string): { path: string[]; value: unknown } | string {
  const eq = assignment.indexOf("=");
  if (eq <= 0) return `--set ${assignment}: expected KEY=VALUE`;
  const key = assignment.slice(0, eq).trim();
  const raw = assignment.slice(eq + 1);
  if (!/^[A-Za-z0-9_.-]+$/.test(key)) return `--set ${assignment}: a key is names joined by dots`;
  let value: unknown = raw;
  try {
    value = (parse(`v = ${raw}`) as { v: unknown }).v;
  } catch {
    value = raw;
  }
  return { path: key.split("."), value };
}

/** A value set on the command line for a string key is that string, even when it reads as a number. */
function coerce(current: unknown, value: unknown, raw: string): unknown {
  return typeof current === "string" && typeof value !== "string" ? raw : value;
}

export interface LoadedValues {
  values: Values;
  /** Keys of a kata-deploy values file that are not carried, with why (warnings). */
  notes: InputIssue[];
  /** What became of each key of a kata-deploy values file; null for a TOML one. */
  entries: Entry[] | null;
  /** Where each value given was set (the file and its line, or --set): a later check names it. */
  origins: Origins;
}

/**
 * The defaults with each shim's RuntimeClass defaults (its record's overhead and node selector, as
 * kata-deploy's chart sets them) under what the defaults file gives for it.
 */
function withShimDefaults(values: Values): Values {
  const rc = values.runtime_classes;
  if (!isTable(rc)) return values;
  const overhead: Values = {};
  const selector: Values = {};
  for (const [name, record] of SHIMS) {
    if (record.runtimeClass.overhead !== "default") overhead[name] = { ...record.runtimeClass.overhead };
    if (record.runtimeClass.nodeSelector !== "none") selector[name] = { ...record.runtimeClass.nodeSelector };
  }
  const own = (key: string): Values => (isTable(rc[key]) ? rc[key] : {});
  return {
    ...values,
    runtime_classes: {
      ...rc,
      overhead_by_shim: { ...overhead, ...own("overhead_by_shim") },
      node_selector_by_shim: { ...selector, ...own("node_selector_by_shim") },
    },
  };
}

/** kata-deploy's chart values are YAML; ours are TOML. */
export function isChartValues(file: string): boolean {
  return /\.ya?ml$/i.test(file);
}

/** kata-deploy's own values.yaml, every key set, is 20 kB. */
const MAX_VALUES_BYTES = 1 << 20;

export function loadValues(
  defaultsFile: string,
  valuesFile: string | undefined,
  sets: string[],
  catalog: Catalog,
): LoadedValues {
  const issues: InputIssue[] = [];
  const origins: Origins = new Map();
  const defaults = parse(fs.readFileSync(defaultsFile, "utf8")) as Values;
  let values = withShimDefaults(defaults);
  let notes: InputIssue[] = [];
  let entries: Entry[] | null = null;
  if (valuesFile !== undefined) {
    // A values file is kilobytes: one that is not a regular file of a sane size is refused at
    // once (a FIFO would block, /dev/zero fill memory, 55 MB take minutes to parse).
    const read = readInputText(valuesFile, MAX_VALUES_BYTES);
    if (!read.ok)
      throw new InputError("the values file is unreadable", [{ file: valuesFile, message: read.reason }]);
    const text = read.text;
    if (isChartValues(valuesFile)) {
      // What does not fit the chart's shape is left out of what is read: the rest is mapped all the
      // same, so that every problem of the file is said at once.
      const chart = readChartValues(valuesFile, text, CHART, issues);
      {
        const mapped = mapChartValues(chart, catalog, values, issues);
        values = mergeChecked(values, mapped.overlay, [], () => ({ file: valuesFile }), issues, origins);
        notes = mapped.notes;
        entries = mapped.entries;
      }
    } else {
      const table = parseToml(valuesFile, text, issues);
      if (table !== undefined) {
        const lines = new TomlLines(text);
        values = mergeChecked(
          values,
          table,
          [],
          (p) => ({ file: valuesFile, line: lines.lineOf(p) }),
          issues,
          origins,
        );
      }
    }
  }
  for (const assignment of sets) {
    const parsed = parseSet(assignment);
    if (typeof parsed === "string") {
      issues.push({ file: "--set", message: parsed });
      continue;
    }
    // Build the nested table the assignment stands for, and merge it with the same checks.
    let current: unknown = values;
    for (const part of parsed.path) current = isTable(current) ? current[part] : undefined;
    const raw = assignment.slice(assignment.indexOf("=") + 1);
    let nested: unknown = coerce(current, parsed.value, raw);
    for (const part of [...parsed.path].reverse()) nested = { [part]: nested };
    values = mergeChecked(values, nested as Values, [], () => ({ file: "--set" }), issues, origins);
  }
  // The chart's nydus, refused until chosen: answered by --set (no nydus in setup_snapshotter, or
  // an image said to carry it).
  const chosen =
    !String(values.setup_snapshotter ?? "")
      .split(",")
      .includes("nydus") || values.nydus_in_image === true;
  const left = issues.filter((i) => !(chosen && i.file === valuesFile && i.key === "snapshotter.setup"));
  if (left.length > 0) throw new InputError("the manifests' values are invalid", left);
  // Said where the value was given (a file's line, or --set).
  const unpublished = unpublishedNotes(defaults, values, valuesFile ?? "values");
  notes = [...notes, ...unpublished.map((n) => ({ ...n, ...origins.get(n.key ?? "") }))];
  return { values, notes, entries, origins };
}
