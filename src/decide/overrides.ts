// The administrator's overrides file (TOML): pinned shims, default shim, runtime, artifact sources,
// configuration values and ignored checks. Validated whole before anything is decided: every
// problem is reported with its line and key, and a file with any problem decides nothing.
import * as z from "zod/mini";
import { closest } from "../closest.js";
import { RuntimeKind } from "../detect/runtime/schema.js";
import { isTable } from "../detect/toml.js";
import { hash } from "../hash.js";
import { InputError, type InputIssue } from "../input-error.js";
import { keysAt } from "../schema.js";
import { TomlLines } from "../toml-lines.js";
import { type Catalog, parseToml, shimNameProblem } from "./catalog.js";
import { snapshotterProblem } from "./env.js";
import { checkConfigValue } from "./rules.js";

const OverridesSchema = z.strictObject({
  shims: z.optional(z.array(z.string())),
  default_shim: z.optional(z.string()),
  runtime: z.optional(z.strictObject({ kind: z.optional(RuntimeKind) })),
  artifacts: z.optional(
    z.record(
      z.string(),
      z.strictObject({ source: z.optional(z.enum(["bundled", "distro"])), pull: z.optional(z.boolean()) }),
    ),
  ),
  config: z.optional(z.record(z.string(), z.record(z.string(), z.unknown()))),
  custom_runtimes: z.optional(
    z.record(
      z.string(),
      z.strictObject({
        base: z.string(),
        snapshotter: z.optional(z.string()),
        pull_type: z.optional(z.enum(["guest-pull", "default"])),
        config: z.optional(z.record(z.string(), z.unknown())),
      }),
    ),
  ),
  handlers: z.optional(
    z.record(
      z.string(),
      z.strictObject({
        snapshotter: z.optional(z.string()),
        pull_type: z.optional(z.enum(["guest-pull", "default"])),
      }),
    ),
  ),
  preflight: z.optional(z.strictObject({ ignore: z.optional(z.array(z.string())) })),
});

/** How one shim's handler gets its images: over the chart's default and kata-deploy's mappings. */
export interface HandlerSpec {
  /** A containerd snapshotter; "" for none of its own (containerd's default one). */
  snapshotter?: string;
  pullType?: "guest-pull" | "default";
}

/** A handler of the admin's own on a shim's base: its own configuration, with values over the shim's. */
export interface CustomRuntimeSpec {
  base: string;
  snapshotter?: string;
  pullType?: "guest-pull" | "default";
  /** Key → value, over what the base shim has on this node. */
  config: Record<string, unknown>;
}

/** A RuntimeClass handler is a DNS label (RFC 1123): what Kubernetes accepts, and a safe file name. */
const HANDLER_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export interface Overrides {
  /** Where it was read, on this machine: what messages name. */
  file: string;
  /**
   * The node's own file, by its path on the node (under any host root): what the files written
   * there name, so that a run under /host and one on the node itself write the same bytes.
   */
  nodePath?: string;
  /** The sha256 of the text these settings were parsed from (null: no file): what a saved plan keeps. */
  sha256: string | null;
  shims?: string[];
  defaultShim?: string;
  runtimeKind?: RuntimeKind;
  artifactSources: Record<string, "bundled" | "distro">;
  /** Artifacts the admin asks for though no shim's configuration names them ([artifacts.<name>] pull = true). */
  artifactPulls?: string[];
  /** Shim name or "all" → key → value. */
  config: Record<string, Record<string, unknown>>;
  /** Handler name → its base shim and settings (kata-deploy's customRuntimes). */
  customRuntimes: Record<string, CustomRuntimeSpec>;
  /** Shim → how its handler pulls images ([handlers.<shim>]). */
  handlers: Record<string, HandlerSpec>;
  ignore: string[];
  /** The line of each setting, by its key path ("config.qemu.hypervisor.qemu.shared_fs"). */
  lineOf(path: Array<string | number>): number | undefined;
}

/** No file: nothing pinned. */
export function emptyOverrides(): Overrides {
  return {
    file: "(none)",
    sha256: null,
    artifactSources: {},
    config: {},
    customRuntimes: {},
    handlers: {},
    ignore: [],
    lineOf: () => undefined,
  };
}

/** The value at `path` in a parsed TOML table, or undefined. */
function valueIn(table: unknown, path: ReadonlyArray<string | number>): unknown {
  let at: unknown = table;
  for (const part of path) {
    if (at === null || typeof at !== "object") return undefined;
    at = (at as Record<string | number, unknown>)[part];
  }
  return at;
}

/** "; did you mean "artifacts"?" for a mistyped key near one of `known`, else nothing. */
function didYouMean(key: string, known: readonly string[]): string {
  const near = closest(key, known);
  return near === null ? "" : `; did you mean "${near}"?`;
}

export function parseOverrides(
  file: string,
  text: string,
  catalog: Catalog,
  checkIds: ReadonlySet<string>,
): Overrides {
  const issues: InputIssue[] = [];
  const table = parseToml(file, text, issues);
  if (table === undefined) throw new InputError("the overrides file is invalid", issues);
  const lines = new TomlLines(text);
  const at = (path: Array<string | number>) => ({ file, line: lines.lineOf(path), key: path.join(".") });
  const result = OverridesSchema.safeParse(table);
  if (!result.success) {
    for (const issue of result.error.issues) {
      const path = issue.path as Array<string | number>;
      if (issue.code === "unrecognized_keys") {
        // Each on its own line, with the key it may be a typo of.
        const known = keysAt(OverridesSchema, path);
        for (const key of issue.keys)
          issues.push({ ...at([...path, key]), message: `unknown key "${key}"${didYouMean(key, known)}` });
        continue;
      }
      const given = valueIn(table, path);
      const message =
        issue.code === "invalid_type" && issue.message.endsWith("received undefined")
          ? `missing: a ${issue.expected} is needed here`
          : issue.code === "invalid_value" && typeof given === "string"
            ? `${issue.message}${didYouMean(given, issue.values.map(String))}`
            : issue.message;
      issues.push({ ...at(path), message });
    }
  }
  // On a schema error, the rest is still checked, as far as its shape allows: every problem of
  // the file in one run (an unknown key must not hide a bad value further down).
  const data = (result.success ? result.data : wellShaped(table)) as z.infer<typeof OverridesSchema>;
  // Names by their form here: whether the release ships each is known once it is read (decide).
  const shimName = (name: string, path: Array<string | number>, key = path.join(".")) => {
    const problem = shimNameProblem(name);
    if (problem !== null) issues.push({ ...at(path), key, message: problem });
    return problem === null;
  };
  (data.shims ?? []).forEach((name, i) => {
    shimName(name, ["shims", i], `shims[${i}]`);
  });
  if (data.shims !== undefined && data.shims.length === 0)
    issues.push({
      ...at(["shims"]),
      message: "an empty list would install no shim; remove the key to let the rules decide",
    });
  if (data.default_shim !== undefined) {
    if (!shimName(data.default_shim, ["default_shim"])) {
      // said
    } else if (data.shims !== undefined && !data.shims.includes(data.default_shim)) {
      issues.push({
        ...at(["default_shim"]),
        message: `"${data.default_shim}" is not among the shims this file pins (${data.shims.join(", ")})`,
      });
    }
  }
  for (const [name, spec] of Object.entries(data.artifacts ?? {})) {
    // Any artifact of the catalogue may be asked for; a source, only of one some shim needs.
    if (spec.pull === true && catalog.artifactDepends.has(name)) {
      if (spec.source === "distro")
        issues.push({
          ...at(["artifacts", name, "pull"]),
          message: `artifact "${name}" cannot be both pulled and the host's own (source = "distro")`,
        });
    } else if (!catalog.artifacts.has(name))
      issues.push({
        ...at(["artifacts", name]),
        message: `unknown artifact "${name}" (known: ${[...(spec.pull ? catalog.artifactDepends.keys() : catalog.artifacts)].sort().join(", ")})`,
      });
    else if (spec.source === "distro" && !catalog.hostParts.has(name)) {
      issues.push({
        ...at(["artifacts", name, "source"]),
        message: `artifact "${name}" has no distribution counterpart (only ${[...catalog.hostParts.keys()].join(", ")})`,
      });
    }
  }
  for (const [target, values] of Object.entries(data.config ?? {})) {
    if (target !== "all" && !shimName(target, ["config", target])) continue;
    for (const [key, value] of Object.entries(values)) {
      const problem =
        value !== null && typeof value === "object" && !Array.isArray(value)
          ? notATable(key, value)
          : checkConfigValue(catalog, target, key, value);
      if (problem !== null)
        issues.push({ ...at(["config", target, key]), key: `config.${target}."${key}"`, message: problem });
    }
  }
  for (const [handler, spec] of Object.entries(data.custom_runtimes ?? {})) {
    const where = ["custom_runtimes", handler];
    if (!HANDLER_NAME.test(handler))
      issues.push({
        ...at(where),
        message: "a handler name is a DNS label: lower-case letters, digits and dashes, at most 63",
      });
    const shimOwn = catalog
      .shimNames()
      .find((shim) => handler === `kata-${shim}` || handler === `kata-${shim}-debug`);
    if (shimOwn !== undefined)
      issues.push({
        ...at(where),
        message: `${handler} is the name of the ${shimOwn} shim's own handler${handler.endsWith("-debug") ? " (its DEBUG variant)" : ""}: name the custom runtime otherwise`,
      });
    if (!shimName(spec.base, [...where, "base"])) continue;
    for (const [key, value] of Object.entries(spec.config ?? {})) {
      const problem =
        value !== null && typeof value === "object" && !Array.isArray(value)
          ? notATable(key, value)
          : checkConfigValue(catalog, spec.base, key, value);
      if (problem !== null)
        issues.push({
          ...at([...where, "config", key]),
          key: `custom_runtimes.${handler}.config."${key}"`,
          message: problem,
        });
    }
  }
  for (const [shim, spec] of Object.entries(data.handlers ?? {})) {
    if (!shimName(shim, ["handlers", shim])) continue;
    const problem =
      typeof spec.snapshotter === "string" && spec.snapshotter !== ""
        ? snapshotterProblem(spec.snapshotter)
        : null;
    if (problem !== null)
      issues.push({
        ...at(["handlers", shim, "snapshotter"]),
        message: `"${spec.snapshotter}" ${problem}, or "" for none of its own`,
      });
  }
  (data.preflight?.ignore ?? []).forEach((id, i) => {
    if (id.toLowerCase() !== "all" && !checkIds.has(id.toLowerCase())) {
      issues.push({
        ...at(["preflight", "ignore"]),
        key: `preflight.ignore[${i}]`,
        message: unknownCheck(id, checkIds),
      });
    }
  });
  if (issues.length > 0) throw new InputError("the overrides file is invalid", issues);
  return {
    file,
    sha256: hash(text),
    shims: data.shims,
    defaultShim: data.default_shim,
    runtimeKind: data.runtime?.kind,
    artifactSources: Object.fromEntries(
      Object.entries(data.artifacts ?? {}).flatMap(([name, spec]) =>
        spec.source === undefined ? [] : [[name, spec.source]],
      ),
    ),
    artifactPulls: Object.entries(data.artifacts ?? {})
      .filter(([, spec]) => spec.pull === true)
      .map(([name]) => name),
    config: data.config ?? {},
    customRuntimes: Object.fromEntries(
      Object.entries(data.custom_runtimes ?? {}).map(([handler, spec]) => [
        handler,
        {
          base: spec.base,
          ...(spec.snapshotter ? { snapshotter: spec.snapshotter } : {}),
          ...(spec.pull_type ? { pullType: spec.pull_type } : {}),
          config: spec.config ?? {},
        },
      ]),
    ),
    handlers: Object.fromEntries(
      Object.entries(data.handlers ?? {}).map(([shim, spec]) => [
        shim,
        {
          ...(spec.snapshotter !== undefined ? { snapshotter: spec.snapshotter } : {}),
          ...(spec.pull_type !== undefined ? { pullType: spec.pull_type } : {}),
        },
      ]),
    ),
    ignore: (data.preflight?.ignore ?? []).map((id) => id.toLowerCase()),
    lineOf: (path) => lines.lineOf(path),
  };
}

/**
 * A configuration key given a table: most often a dotted key left unquoted, which TOML reads as
 * tables (`hypervisor.qemu.default_memory = 1024` under [config.qemu]); said with the quoted form.
 */
function notATable(key: string, value: object): string {
  let dotted = key;
  let at: unknown = value;
  while (at !== null && typeof at === "object" && !Array.isArray(at)) {
    const [first] = Object.keys(at);
    if (first === undefined) break;
    dotted = `${dotted}.${first}`;
    at = (at as Record<string, unknown>)[first];
  }
  return dotted === key
    ? "expected a value, not a table"
    : `expected a value, not a table: a key of Kata's configuration is one quoted string here ("${dotted}" = …), else TOML reads its dots as tables`;
}

export function unknownCheck(id: string, checkIds: ReadonlySet<string>): string {
  return `unknown check "${id}" (known: ${[...checkIds].sort().join(", ")}, or all)`;
}

/** The parts of a table that failed the schema which still have the shape the checks read. */
function wellShaped(table: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (Array.isArray(table.shims) && table.shims.every((s) => typeof s === "string")) out.shims = table.shims;
  if (typeof table.default_shim === "string") out.default_shim = table.default_shim;
  if (isTable(table.artifacts))
    out.artifacts = Object.fromEntries(
      Object.entries(table.artifacts).filter(
        ([, v]) =>
          isTable(v) &&
          (v.source === "bundled" ||
            v.source === "distro" ||
            (v.source === undefined && v.pull !== undefined)),
      ),
    );
  if (isTable(table.config))
    out.config = Object.fromEntries(Object.entries(table.config).filter(([, v]) => isTable(v)));
  if (isTable(table.custom_runtimes))
    out.custom_runtimes = Object.fromEntries(
      Object.entries(table.custom_runtimes)
        .filter(([, v]) => isTable(v) && typeof v.base === "string")
        .map(([k, v]) => [
          k,
          {
            ...(v as object),
            config: isTable((v as Record<string, unknown>).config)
              ? (v as Record<string, unknown>).config
              : {},
          },
        ]),
    );
  if (isTable(table.handlers))
    out.handlers = Object.fromEntries(Object.entries(table.handlers).filter(([, v]) => isTable(v)));
  if (isTable(table.preflight) && Array.isArray(table.preflight.ignore))
    out.preflight = { ignore: table.preflight.ignore.filter((i) => typeof i === "string") };
  return out;
}
