// The capability table (src/shims/table.ts, with rules/shims.toml's host parts): what kata-install
// knows of each shim — the facts it needs, whether it comes by default, where its files are when a
// host package stands in — and,
// once the release being installed is read, what that release says: which shims it ships (a shim
// is a configuration file of the release), which keys each has, of which type, with which values.
import { parse } from "smol-toml";
import * as z from "zod/mini";
import type { ArtifactCatalogue } from "../artifacts/catalogue.js";
import { HypervisorName } from "../detect/hypervisors.js";
import type { KeyInfo, KeyType } from "../release/config-file.js";
import { baseName, type Release, type ShimConfig } from "../release/release.js";
import { tomlErrorText } from "../toml-error.js";
import "../schema.js";
import { InputError, type InputIssue } from "../input-error.js";
import { DEFAULT_SHIM, GUEST_PULL, SHIMS, type Vetting } from "../shims/table.js";
import { TEES } from "../shims/tees.js";
import { TomlLines } from "../toml-lines.js";
import { type DataText, readable } from "./data-text.js";

export type { KeyType };

/** A shim's name, as a configuration file's (configuration-<name>.toml) and a handler's (kata-<name>). */
export const SHIM_NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;

/** Null when `name` can name a shim; whether the release ships it is known once it is read. */
export function shimNameProblem(name: string): string | null {
  return SHIM_NAME.test(name)
    ? null
    : `"${name}" is no shim name (lower-case letters, digits and "-", as in configuration-<shim>.toml)`;
}

/** A key of Kata's configuration as rules and overrides name it: "section[.sub].key". */
const KEY_SHAPE = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)+$/;

export function keyShapeProblem(key: string): string | null {
  return KEY_SHAPE.test(key)
    ? null
    : `"${key}" is no configuration key (expected a dotted key such as "hypervisor.qemu.default_memory")`;
}

/** What the capability table says of a shim (src/shims/table.ts), as decide reads it. */
type SpecFields = Omit<Vetting, "arch_artifacts" | "arches"> & {
  arches: string[];
  /** The TEE its guests run in, by its label ("tdx", "sev-snp", "se"), or "none". */
  confidential: string;
  arch_artifacts?: Record<string, string[]>;
};
export type ShimSpec = SpecFields & {
  name: string;
  /** Shipped by the release, unknown to the rules: installed only when asked for, with a warning. */
  unvetted?: boolean;
};

/** The capability table's shims, as specs: every record that has a vetting, in the table's order. */
export function tableSpecs(): Record<string, SpecFields> {
  const out: Record<string, SpecFields> = {};
  for (const [name, record] of SHIMS) {
    if (record.vetting === "none") continue;
    const { arch_artifacts, ...vetting } = record.vetting;
    out[name] = {
      ...vetting,
      confidential: record.tee === "none" ? "none" : TEES[record.tee].label,
      ...(arch_artifacts === "none" ? {} : { arch_artifacts: arch_artifacts as Record<string, string[]> }),
    };
  }
  return out;
}

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
  host_part: z.record(z.string(), HostPart),
  unserved: z.optional(z.record(z.string(), z.string())),
});

/** "unknown shim …", with the names there are: the one wording for every input that names a shim. */
export function unknownShim(name: string, catalog: Catalog): string {
  return `unknown shim "${name}" (known: ${catalog.shimNames().join(", ")})`;
}

export class Catalog {
  readonly shims: ReadonlyMap<string, ShimSpec>;
  /** Every artifact some shim needs on some architecture, with what those depend on. */
  readonly artifacts: ReadonlySet<string>;

  constructor(
    shims: Record<string, SpecFields>,
    /** Artifact → the artifacts it depends on (artifacts/catalogue.toml). */
    readonly artifactDepends: ReadonlyMap<string, readonly string[]> = new Map(),
    /** Shim names kata-deploy accepts that kata-install does not serve, with why. */
    readonly unserved: ReadonlyMap<string, string> = new Map(),
    /** Artifacts a host's own package may stand in for. */
    readonly hostParts: ReadonlyMap<string, HostPart> = new Map(),
    /** The default shim when nothing names one and it is installed. */
    readonly defaultShim: string | null = null,
    /** Values Kata accepts, by key name (rules/config-values.toml), where the release lists none. */
    readonly valueLimits: ValueLimits = { oneOf: {}, atLeast: {} },
    /** Shims whose images kata-deploy's chart pulls inside the guest by default (the table's chart.guestPull). */
    readonly guestPull: ReadonlySet<string> = new Set(),
    /** The release being installed; null until it is read (or when there is none to read). */
    readonly release: Release | null = null,
    /** Artifacts pulled too when DEBUG is on (artifacts/catalogue.toml with_debug). */
    readonly debugArtifacts: ReadonlySet<string> = new Set(),
  ) {
    this.shims = new Map(Object.entries(shims).map(([name, spec]) => [name, { ...spec, name }]));
    this.artifacts = new Set(
      Object.values(shims).flatMap((s) =>
        [...s.artifacts, ...Object.values(s.arch_artifacts ?? {}).flat()].flatMap((a) => [
          ...this.dependencies(a),
        ]),
      ),
    );
  }

  /**
   * This catalogue with the release's word: the release's runtime and hypervisor section for the
   * shims the rules know, and a shim of its own for each configuration the rules do not know.
   */
  withRelease(release: Release | null): Catalog {
    if (release === null) return this;
    const shims: Record<string, SpecFields & { unvetted?: boolean }> = {};
    for (const [name, spec] of this.shims) {
      const shipped = release.shims.get(name);
      const { name: _name, ...rest } = spec;
      shims[name] = shipped
        ? { ...rest, runtime: shipped.runtime, hypervisor: shipped.hypervisor ?? spec.hypervisor }
        : rest;
    }
    for (const [name, shipped] of release.shims)
      if (shims[name] === undefined && !this.unserved.has(name)) shims[name] = unvettedSpec(release, shipped);
    return new Catalog(
      shims,
      this.artifactDepends,
      this.unserved,
      this.hostParts,
      this.defaultShim,
      this.valueLimits,
      this.guestPull,
      release,
      this.debugArtifacts,
    );
  }

  /** Whether the release ships `shim`; null when no release has been read. */
  shipped(shim: string): boolean | null {
    return this.release === null ? null : this.release.shims.has(shim);
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

  /** What the release's configuration of `shim` says of `key`; undefined when it lacks it (or no release). */
  keyInfo(shim: string, key: string): KeyInfo | undefined {
    return this.release?.shims.get(shim)?.config.keys.get(key);
  }

  /**
   * Whether `shim`'s configuration in the release has `key` ("hypervisor.qemu.shared_fs"); null
   * when no release has been read, so nothing can be said yet.
   */
  hasKey(shim: string, key: string): boolean | null {
    const shipped = this.release?.shims.get(shim);
    if (shipped === undefined) return null;
    return shipped.config.keys.has(key);
  }

  /** The release's type of `key` for `shim`, or undefined. */
  keyType(shim: string, key: string): KeyType | undefined {
    return this.keyInfo(shim, key)?.type;
  }

  /**
   * Why `value` is not one Kata accepts for `key` on `shim`, or null: the values the release's own
   * comment lists for it, else those rules/config-values.toml knows for the key's name.
   */
  valueProblem(shim: string | null, key: string, value: unknown): string | null {
    const listed = shim === null ? undefined : this.keyInfo(shim, key)?.domain;
    if (listed !== undefined && this.release !== null && shim !== null) {
      if (typeof value === "string" && !listed.includes(value))
        return `"${value}" is not one of the values ${baseName(this.release, shim)} lists for it: ${listed.map((v) => `"${v}"`).join(", ")}`;
      return null;
    }
    const name = key.slice(key.lastIndexOf(".") + 1);
    const allowed = this.valueLimits.oneOf[name];
    if (allowed !== undefined && typeof value === "string" && !allowed.includes(value))
      return `"${value}" is not one of ${allowed.map((v) => `"${v}"`).join(", ")}`;
    const least = this.valueLimits.atLeast[name];
    if (least !== undefined && typeof value === "number" && value < least)
      return `${value} is less than ${least}, the least Kata takes for ${name}`;
    return null;
  }

  /** A shim name kata-install serves (the rules', or the release's), or one of kata-deploy's it knows and says why it does not. */
  isKnownShim(name: string): boolean {
    return this.shims.has(name) || this.unserved.has(name);
  }

  shimNames(): string[] {
    return [...this.shims.keys()].sort();
  }
}

/** A shim the release ships that no rule knows: installable when asked for, vetted by nothing. */
function unvettedSpec(release: Release, shipped: ShimConfig): SpecFields & { unvetted: true } {
  return {
    description: `shipped by Kata ${release.version} (${shipped.file}); no rule of kata-install's knows what it needs of a node`,
    hypervisor: shipped.hypervisor ?? "unknown",
    runtime: shipped.runtime,
    arches: [],
    shared_fs: [],
    block_device_drivers: [],
    vfio_hotplug: false,
    vfio_coldplug: false,
    virtio_mem: false,
    memory_hotplug: false,
    confidential: "none",
    seccomp: false,
    rate_limiters: false,
    snapshotter: "",
    agent_transport: "vsock",
    requires: [],
    artifacts: [],
    host_parts: [],
    opt_in: true,
    unvetted: true,
  };
}

/** Where the shims' records are (what a problem with one of them names). */
const TABLE_FILE = "src/shims/table.ts";

/** The catalogue's files, as src/inputs/ read them. */
export interface CatalogFiles {
  /** rules/shims.toml: the host parts, the shims no artifact serves. */
  shims: DataText;
  /** artifacts/catalogue.toml, parsed (once a run: the sources and the plan ask for it too), or its problems. */
  artifacts: ArtifactCatalogue | InputIssue[];
  /** rules/config-values.toml; null when there is none. */
  values: DataText | null;
}

export function parseCatalog(files: CatalogFiles): Catalog {
  const issues: InputIssue[] = [];
  const shimsRead = readable(files.shims, issues);
  const shimsFile = files.shims.file;
  const shims = tableSpecs();
  let unserved: Record<string, string> = {};
  let hostParts: Record<string, HostPart> = {};
  if (shimsRead !== null) {
    const shimsText = shimsRead.text;
    const parsed = parseToml(shimsFile, shimsText, issues, shimsRead.table);
    if (parsed !== undefined) {
      const result = ShimsFile.safeParse(parsed);
      if (result.success) {
        unserved = result.data.unserved ?? {};
        hostParts = result.data.host_part;
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
  if (Array.isArray(files.artifacts)) issues.push(...files.artifacts);
  const artifactCatalogue = Array.isArray(files.artifacts) ? null : files.artifacts;
  const depends =
    artifactCatalogue === null
      ? null
      : new Map([...artifactCatalogue].map(([name, spec]) => [name, spec.depends]));
  if (depends !== null)
    for (const [name, spec] of Object.entries(shims))
      for (const [key, names] of [
        ["artifacts", spec.artifacts],
        ...Object.entries(spec.arch_artifacts ?? {}).map(([arch, list]) => [`arch_artifacts.${arch}`, list]),
      ] as Array<[string, string[]]>)
        for (const artifact of names)
          if (!depends.has(artifact))
            issues.push({
              file: TABLE_FILE,
              key: `${name}.vetting.${key}`,
              message: `no artifact "${artifact}" in artifacts/catalogue.toml`,
            });
  const valuesRead = files.values === null ? null : readable(files.values, issues);
  let limits: ValueLimits = { oneOf: {}, atLeast: {} };
  if (valuesRead !== null) {
    const valuesFile = valuesRead.file;
    const parsed = parseToml(valuesFile, valuesRead.text, issues, valuesRead.table);
    const result = parsed === undefined ? null : ValuesFile.safeParse(parsed);
    if (result && !result.success)
      for (const issue of result.error.issues)
        issues.push({ file: valuesFile, key: issue.path.join("."), message: issue.message });
    else if (result?.success)
      limits = { oneOf: result.data.one_of ?? {}, atLeast: result.data.at_least ?? {} };
  }
  if (issues.length === 0) issues.push(...hostPartIssues(shims, hostParts));
  if (issues.length > 0) throw new InputError("the shim catalogue is invalid", issues);
  return new Catalog(
    shims,
    depends ?? new Map(),
    new Map(Object.entries(unserved)),
    new Map(Object.entries(hostParts)),
    DEFAULT_SHIM,
    limits,
    GUEST_PULL,
    null,
    new Set([...(artifactCatalogue?.values() ?? [])].filter((a) => a.withDebug).map((a) => a.name)),
  );
}

/** Each host part a shim lists is one shims.toml describes, and among the shim's artifacts. */
function hostPartIssues(
  shims: Record<string, SpecFields>,
  hostParts: Record<string, HostPart>,
): InputIssue[] {
  const issues: InputIssue[] = [];
  for (const [shim, spec] of Object.entries(shims))
    for (const part of spec.host_parts) {
      const key = `${shim}.vetting.host_parts`;
      if (hostParts[part] === undefined)
        issues.push({ file: TABLE_FILE, key, message: `no [host_part.${part}] in rules/shims.toml` });
      else if (!spec.artifacts.includes(part))
        issues.push({ file: TABLE_FILE, key, message: `"${part}" is not one of its artifacts` });
    }
  return issues;
}

/** `text` as TOML (`table`: as the build parsed it already), or its problem joins `issues`. */
export function parseToml(
  file: string,
  text: string,
  issues: InputIssue[],
  table?: Record<string, unknown>,
): Record<string, unknown> | undefined {
  if (table !== undefined) return table;
  try {
    return parse(text) as Record<string, unknown>;
  } catch (error) {
    const line = (error as { line?: number }).line;
    issues.push({ file, line, message: tomlErrorText(error) });
    return undefined;
  }
}

/** Whether `value` fits a key of type `type` (TOML integers arrive as numbers, large ones as bigints). */
export function fitsType(type: KeyType, value: unknown): boolean {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "bool":
      return typeof value === "boolean";
    case "int":
      return (typeof value === "number" && Number.isInteger(value)) || typeof value === "bigint";
    case "float":
      return typeof value === "number";
    case "string[]":
      return Array.isArray(value) && value.every((v) => typeof v === "string");
    case "other":
      return true;
  }
}
