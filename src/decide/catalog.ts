// The capability table (rules/shims.toml) and the configuration key registry
// (rules/config-keys.toml): what each shim can do and which Kata keys exist for it.
import fs from "node:fs";
import path from "node:path";
import * as z from "zod/mini";
import { loadArtifactCatalogue } from "../artifacts/catalogue.js";
import { HypervisorName } from "../detect/hypervisors.js";
import { tomlErrorText } from "../detect/toml.js";
import "../schema.js";
import { parseTomlText } from "../toml-data.js";
import { TomlLines } from "../toml-lines.js";
import { InputError, type InputIssue } from "./input-error.js";

export const KeyType = z.enum(["string", "bool", "int", "float", "string[]"]);
export type KeyType = z.infer<typeof KeyType>;
const KEY_TYPES: ReadonlySet<string> = new Set(KeyType.options);

const ShimSpec = z.strictObject({
  description: z.string(),
  hypervisor: z.string(),
  runtime: z.enum(["go", "rust"]),
  arches: z.array(z.string()),
  shared_fs: z.array(z.string()),
  block_device_drivers: z.array(z.string()),
  vfio_hotplug: z.boolean(),
  vfio_coldplug: z.boolean(),
  virtio_mem: z.boolean(),
  memory_hotplug: z.boolean(),
  confidential: z.enum(["none", "tdx", "sev-snp", "se"]),
  seccomp: z.boolean(),
  rate_limiters: z.boolean(),
  snapshotter: z.string(),
  agent_transport: z.enum(["vsock", "hybrid-vsock", "remote"]),
  requires: z.array(z.string()),
  artifacts: z.array(z.string()),
  arch_artifacts: z.optional(z.record(z.string(), z.array(z.string()))),
  host_parts: z.array(z.string()),
  opt_in: z.boolean(),
});
export type ShimSpec = z.infer<typeof ShimSpec> & { name: string };

/** An artifact a host's own package may stand in for (rules/shims.toml [host_part.*]). */
const HostPart = z.strictObject({
  fact: HypervisorName,
  path_keys: z.array(z.string()),
  list_keys: z.array(z.string()),
});
export type HostPart = z.infer<typeof HostPart>;

const ValuesFile = z.strictObject({
  one_of: z.optional(z.record(z.string(), z.array(z.string()))),
  at_least: z.optional(z.record(z.string(), z.number())),
});
export interface ValueLimits {
  oneOf: Record<string, string[]>;
  atLeast: Record<string, number>;
}

const ShimsFile = z.strictObject({
  default_shim: z.string(),
  host_part: z.record(z.string(), HostPart),
  shim: z.record(z.string(), ShimSpec),
  unserved: z.optional(z.record(z.string(), z.string())),
});

/** "unknown shim …", with the names there are: the one wording for every input that names a shim. */
export function unknownShim(name: string, catalog: Catalog): string {
  return `unknown shim "${name}" (known: ${catalog.shimNames().join(", ")})`;
}

/** Sections every shim has, besides its own [hypervisor.<section>]. */
const COMMON_SECTIONS = ["runtime", "agent.kata", "agent.kata.mem_agent", "factory"];

export class Catalog {
  readonly shims: ReadonlyMap<string, ShimSpec>;
  /** Every artifact some shim needs on some architecture, with what those depend on. */
  readonly artifacts: ReadonlySet<string>;
  /** Section ("hypervisor.qemu", "runtime", …) → key → type. */
  private readonly keys: ReadonlyMap<string, ReadonlyMap<string, KeyType>>;

  constructor(
    shims: Record<string, z.infer<typeof ShimSpec>>,
    keys: Map<string, Map<string, KeyType>>,
    /** Artifact → the artifacts it depends on (artifacts/catalogue.toml). */
    readonly artifactDepends: ReadonlyMap<string, readonly string[]> = new Map(),
    /** Shim names kata-deploy accepts that kata-install does not serve (yet), with why. */
    readonly unserved: ReadonlyMap<string, string> = new Map(),
    /** Artifacts a host's own package may stand in for. */
    readonly hostParts: ReadonlyMap<string, HostPart> = new Map(),
    /** The default shim when nothing names one and it is installed. */
    readonly defaultShim: string | null = null,
  ) {
    this.shims = new Map(Object.entries(shims).map(([name, spec]) => [name, { ...spec, name }]));
    this.keys = keys;
    this.artifacts = new Set(
      Object.values(shims).flatMap((s) =>
        [...s.artifacts, ...Object.values(s.arch_artifacts ?? {}).flat()].flatMap((a) => [
          ...this.dependencies(a),
        ]),
      ),
    );
  }

  /** An artifact and every one it depends on, directly or not. */
  dependencies(artifact: string): Set<string> {
    const out = new Set<string>();
    const visit = (a: string) => {
      if (out.has(a)) return;
      out.add(a);
      for (const d of this.artifactDepends.get(a) ?? []) visit(d);
    };
    visit(artifact);
    return out;
  }

  /** The artifacts a shim names itself on `arch` (its dependencies not added). */
  directArtifacts(shim: string, arch: string | null): string[] {
    const spec = this.shims.get(shim);
    if (!spec) return [];
    return [...spec.artifacts, ...(spec.arch_artifacts?.[arch ?? ""] ?? [])];
  }

  /** The type of `key` ("hypervisor.qemu.shared_fs") for `shim`, or undefined when that shim has no such key. */
  keyType(shim: string, key: string): KeyType | undefined {
    const spec = this.shims.get(shim);
    if (spec === undefined) return undefined;
    const dot = key.lastIndexOf(".");
    const section = key.slice(0, dot);
    const name = key.slice(dot + 1);
    const own =
      section === `hypervisor.${spec.hypervisor}` || section === `hypervisor.${spec.hypervisor}.factory`;
    if (!own && !COMMON_SECTIONS.includes(section)) return undefined;
    return this.keys.get(section)?.get(name);
  }

  /** Whether any shim has `key`: config.all may name keys that only some shims have. */
  keyExists(key: string): boolean {
    return [...this.shims.keys()].some((shim) => this.keyType(shim, key) !== undefined);
  }

  /** Values Kata accepts, by key name (rules/config-values.toml). */
  valueLimits: ValueLimits = { oneOf: {}, atLeast: {} };

  /** Why `value` is not one Kata accepts for `key` ("hypervisor.qemu.shared_fs"), or null. */
  valueProblem(key: string, value: unknown): string | null {
    const name = key.slice(key.lastIndexOf(".") + 1);
    const allowed = this.valueLimits.oneOf[name];
    if (allowed !== undefined && typeof value === "string" && !allowed.includes(value))
      return `"${value}" is not one of ${allowed.map((v) => `"${v}"`).join(", ")}`;
    const least = this.valueLimits.atLeast[name];
    if (least !== undefined && typeof value === "number" && value < least)
      return `${value} is less than ${least}, the least Kata takes for ${name}`;
    return null;
  }

  /** A shim name kata-install serves, or one of kata-deploy's it knows and says why it does not. */
  isKnownShim(name: string): boolean {
    return this.shims.has(name) || this.unserved.has(name);
  }

  shimNames(): string[] {
    return [...this.shims.keys()].sort();
  }
}

export function loadCatalog(dir: string): Catalog {
  const shimsFile = path.join(dir, "shims.toml");
  const keysFile = path.join(dir, "config-keys.toml");
  const issues: InputIssue[] = [];
  const shimsText = readText(shimsFile, issues);
  const keysText = readText(keysFile, issues);
  let shims: Record<string, z.infer<typeof ShimSpec>> = {};
  let unserved: Record<string, string> = {};
  let hostParts: Record<string, HostPart> = {};
  let defaultShim: string | null = null;
  const keys = new Map<string, Map<string, KeyType>>();
  if (shimsText !== null) {
    const parsed = parseToml(shimsFile, shimsText, issues);
    if (parsed !== undefined) {
      const result = ShimsFile.safeParse(parsed);
      if (result.success) {
        shims = result.data.shim;
        unserved = result.data.unserved ?? {};
        hostParts = result.data.host_part;
        defaultShim = result.data.default_shim;
      } else {
        const lines = new TomlLines(shimsText);
        for (const issue of result.error.issues) {
          issues.push({
            file: shimsFile,
            line: lines.lineOf(issue.path as Array<string | number>),
            key: issue.path.join("."),
            message: issue.message,
          });
        }
      }
    }
  }
  if (keysText !== null) {
    const parsed = parseToml(keysFile, keysText, issues);
    if (parsed !== undefined) collectKeys(parsed, [], keys, keysFile, issues);
  }
  const depends = artifactDepends(path.join(dir, "..", "artifacts", "catalogue.toml"), issues);
  if (depends !== null) {
    // Lines only for a problem: indexing the file costs more than checking it.
    let lines: TomlLines | null = null;
    const lineOf = (keyPath: string[]) => {
      lines ??= new TomlLines(shimsText ?? "");
      return lines.lineOf(keyPath);
    };
    for (const [name, spec] of Object.entries(shims))
      for (const [key, names] of [
        ["artifacts", spec.artifacts],
        ...Object.entries(spec.arch_artifacts ?? {}).map(([arch, list]) => [`arch_artifacts.${arch}`, list]),
      ] as Array<[string, string[]]>)
        for (const artifact of names)
          if (!depends.has(artifact))
            issues.push({
              file: shimsFile,
              line: lineOf(["shim", name, ...key.split(".")]),
              key: `shim.${name}.${key}`,
              message: `no artifact "${artifact}" in artifacts/catalogue.toml`,
            });
  }
  const valuesFile = path.join(dir, "config-values.toml");
  const valuesText = fs.existsSync(valuesFile) ? readText(valuesFile, issues) : null;
  let limits: ValueLimits = { oneOf: {}, atLeast: {} };
  if (valuesText !== null) {
    const parsed = parseToml(valuesFile, valuesText, issues);
    const result = parsed === undefined ? null : ValuesFile.safeParse(parsed);
    if (result && !result.success)
      for (const issue of result.error.issues)
        issues.push({ file: valuesFile, key: issue.path.join("."), message: issue.message });
    else if (result?.success)
      limits = { oneOf: result.data.one_of ?? {}, atLeast: result.data.at_least ?? {} };
  }
  if (issues.length === 0)
    issues.push(...referenceIssues(shimsFile, shimsText ?? "", shims, hostParts, defaultShim, keys));
  if (issues.length > 0) throw new InputError("the shim catalogue is invalid", issues);
  const catalog = new Catalog(
    shims,
    keys,
    depends ?? new Map(),
    new Map(Object.entries(unserved)),
    new Map(Object.entries(hostParts)),
    defaultShim,
  );
  catalog.valueLimits = limits;
  return catalog;
}

/**
 * What shims.toml names must exist: the default shim; each host part a shim lists, among its
 * artifacts, with keys its hypervisor section has, of the type the part writes.
 */
function referenceIssues(
  file: string,
  text: string,
  shims: Record<string, z.infer<typeof ShimSpec>>,
  hostParts: Record<string, HostPart>,
  defaultShim: string | null,
  keys: ReadonlyMap<string, ReadonlyMap<string, KeyType>>,
): InputIssue[] {
  const issues: InputIssue[] = [];
  // Lines are looked up only for a problem: indexing the file costs more than checking it.
  let lines: TomlLines | undefined;
  const at = (keyPath: string[], message: string) => {
    lines ??= new TomlLines(text);
    issues.push({ file, line: lines.lineOf(keyPath), key: keyPath.join("."), message });
  };
  if (defaultShim !== null && shims[defaultShim] === undefined)
    at(["default_shim"], `no shim "${defaultShim}"`);
  for (const [shim, spec] of Object.entries(shims))
    for (const part of spec.host_parts) {
      const hostPart = hostParts[part];
      if (hostPart === undefined) at(["shim", shim, "host_parts"], `no [host_part.${part}]`);
      else if (!spec.artifacts.includes(part))
        at(["shim", shim, "host_parts"], `"${part}" is not one of its artifacts`);
      else {
        const section = `hypervisor.${spec.hypervisor}`;
        for (const [list, type] of [
          [hostPart.path_keys, "string"],
          [hostPart.list_keys, "string[]"],
        ] as const)
          for (const key of list)
            if (keys.get(section)?.get(key) !== type)
              at(["host_part", part], `${section}.${key} is no ${type} key of ${shim}'s configuration`);
      }
    }
  return issues;
}

function collectKeys(
  table: Record<string, unknown>,
  prefix: string[],
  into: Map<string, Map<string, KeyType>>,
  file: string,
  issues: InputIssue[],
): void {
  for (const [name, value] of Object.entries(table)) {
    if (value !== null && typeof value === "object")
      collectKeys(value as Record<string, unknown>, [...prefix, name], into, file, issues);
    else {
      // ~400 keys: a set lookup, not a schema parse each.
      if (!KEY_TYPES.has(value as KeyType)) {
        issues.push({
          file,
          key: [...prefix, name].join("."),
          message: `unknown type ${JSON.stringify(value)}`,
        });
      } else {
        const section = prefix.join(".");
        if (!into.has(section)) into.set(section, new Map());
        into.get(section)?.set(name, value as KeyType);
      }
    }
  }
}

/** Each artifact's `depends`, from the artifact catalogue; its problems join the shims'. */
function artifactDepends(file: string, issues: InputIssue[]): Map<string, string[]> | null {
  try {
    return new Map([...loadArtifactCatalogue(file)].map(([name, spec]) => [name, spec.depends]));
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    issues.push(...error.issues);
    return null;
  }
}

function readText(file: string, issues: InputIssue[]): string | null {
  try {
    return fs.readFileSync(file, "utf8");
  } catch (error) {
    issues.push({
      file,
      message: `cannot read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    });
    return null;
  }
}

export function parseToml(
  file: string,
  text: string,
  issues: InputIssue[],
): Record<string, unknown> | undefined {
  try {
    return parseTomlText(text);
  } catch (error) {
    const line = (error as { line?: number }).line;
    issues.push({ file, line, message: tomlErrorText(error) });
    return undefined;
  }
}

/** Whether `value` fits a key of type `type` (TOML integers arrive as numbers). */
export function fitsType(type: KeyType, value: unknown): boolean {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "bool":
      return typeof value === "boolean";
    case "int":
      return typeof value === "number" && Number.isInteger(value);
    case "float":
      return typeof value === "number";
    case "string[]":
      return Array.isArray(value) && value.every((v) => typeof v === "string");
  }
}
