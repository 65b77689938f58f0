// How Kata loads a shim's configuration: the base file, then every entry of the config.d/ beside
// it (after the base's links are resolved), in the byte order of their names, each merged key by
// key over what came before. Written once, from Kata 4.1.0's own loaders, and used wherever
// kata-install says what Kata will read (explain, the plan's checks, the paths it verifies):
//   Go:   src/runtime/pkg/katautils/config.go — decodeConfig :1843-1870, decodeDropIns :1876-1898,
//         updateFromDropIn :1903-1941, applyKey :1947-1992, updateRuntimeConfigHypervisor :1488-1523,
//         newRemoteHypervisorConfig :1460-1474 (BurntSushi/toml v1.6.0 decodes).
//   Rust: src/libs/kata-types/src/config/drop_in.rs — load :246-280, the entry check :237-241,
//         toml_tree_ops::merge :18-41.
// A file Kata would refuse refuses the whole configuration: the shim's every pod fails to start. So
// each refusal is returned with Kata's own reason, for the plan to stop on.
import type { TomlTable } from "../detect/toml.js";
import { isTable } from "../detect/toml.js";
import type { ConfigEntry } from "../release/drop-in-dir.js";

export type KataFlavour = "go" | "rust";

export interface Refusal {
  file: string;
  /** Kata's reason, in its own words where they are known. */
  reason: string;
}

export interface Loaded {
  /** The configuration as Kata reads it (base and drop-ins merged), up to the first refusal. */
  config: TomlTable;
  /** Why Kata would refuse the configuration: empty when it loads. */
  refusals: Refusal[];
  /** What Kata reads but ignores, or only warns of: `hypervisor.remote.kernel_params` and its why. */
  ignored: Array<{ key: string; why: string }>;
}

/**
 * The keys Kata's runtime knows in each table kind (hypervisor, agent, runtime, factory) with the
 * TOML type it decodes them as: read from the configurations the release ships for that runtime
 * (every shim's), so that a key no shim's file names is still known when another's does.
 */
export type KnownKeys = ReadonlyMap<string, ReadonlyMap<string, TomlType>>;

export type TomlType = "string" | "integer" | "float" | "boolean" | "array" | "table" | "datetime";

export function tomlTypeOf(value: unknown): TomlType {
  if (typeof value === "string") return "string";
  if (typeof value === "bigint") return "integer";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "float";
  if (typeof value === "boolean") return "boolean";
  if (Array.isArray(value)) return "array";
  if (value instanceof Date) return "datetime";
  return "table";
}

/** Table kinds whose entries are named by the hypervisor or agent (`[hypervisor.qemu]`). */
const NAMED = new Set(["hypervisor", "agent"]);

/** The keys of `tables` (parsed configuration files of one runtime), with their types. */
export function knownKeysOf(tables: readonly TomlTable[]): KnownKeys {
  const known = new Map<string, Map<string, TomlType>>();
  const note = (kind: string, table: unknown) => {
    if (!isTable(table)) return;
    const keys = known.get(kind) ?? new Map<string, TomlType>();
    for (const [key, value] of Object.entries(table))
      if (!keys.has(key) || keys.get(key) === "integer") keys.set(key, tomlTypeOf(value));
    known.set(kind, keys);
  };
  for (const t of tables)
    for (const [kind, value] of Object.entries(t)) {
      if (NAMED.has(kind) && isTable(value)) for (const entry of Object.values(value)) note(kind, entry);
      else note(kind, value);
    }
  return known;
}

/** The hypervisor sections the Go runtime knows (config.go: updateRuntimeConfigHypervisor). */
const GO_HYPERVISORS = new Set(["qemu", "clh", "firecracker", "dragonball", "stratovirt", "remote"]);

/**
 * The only hypervisor keys the Go runtime reads for the remote hypervisor (newRemoteHypervisorConfig,
 * config.go:1460-1474 @ 4.1.0): every other key of [hypervisor.remote] is type-checked and ignored.
 */
const REMOTE_READS = new Set([
  "remote_hypervisor_socket",
  "remote_hypervisor_timeout",
  "machine_type",
  "enable_annotations",
  "guest_hook_path",
]);

/**
 * Why Kata's runtime of `flavour` reads `key` (a dotted key of a shim's configuration) and does
 * nothing with it; null when it uses it, as far as is known here.
 */
export function ignoredKey(key: string, flavour: KataFlavour): string | null {
  const remote = /^hypervisor\.remote\.(.+)$/.exec(key)?.[1];
  if (flavour === "go" && remote !== undefined && !REMOTE_READS.has(remote))
    return `Kata's Go runtime reads only ${[...REMOTE_READS].join(", ")} of the remote hypervisor (newRemoteHypervisorConfig)`;
  return null;
}

/** Go's name of a decoded value's destination type, as BurntSushi/toml's error says it. */
const GO_TYPE: Record<TomlType, string> = {
  string: "string",
  integer: "integer",
  float: "float",
  boolean: "boolean",
  array: "slice",
  table: "struct",
  datetime: "time.Time",
};

/**
 * Whether Go's decoder takes a value of type `got` into a field of the base's type `want`. Numbers
 * are one class here: a float field (default_vcpus) is written `1` in the release's file, so an
 * integer and a float cannot be told apart from the files.
 */
function decodes(want: TomlType, got: TomlType): boolean {
  const numeric = (t: TomlType) => t === "integer" || t === "float";
  return want === got || (numeric(want) && numeric(got));
}

/**
 * Load a shim's configuration as Kata would: `base` (the file its handler names, links resolved),
 * then `entries` (its config.d/, in any order: sorted here as Kata sorts them).
 */
export function loadKataConfig(
  base: { file: string; table: TomlTable },
  entries: readonly ConfigEntry[],
  flavour: KataFlavour,
  known: KnownKeys,
): Loaded {
  const config = structuredClone(base.table);
  const refusals: Refusal[] = [];
  const ignored: Loaded["ignored"] = [];
  const sorted = [...entries].sort((a, b) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)));
  for (const entry of sorted) {
    const refused =
      entryRefusal(entry, flavour) ?? (flavour === "go" ? goDecodeRefusal(entry, known, ignored) : null);
    if (refused !== null) {
      // The first file Kata cannot take stops the load: what comes after is not read.
      refusals.push({ file: entry.file, reason: refused });
      break;
    }
    if (entry.table !== null) merge(config, entry.table);
  }
  if (refusals.length === 0) {
    const sections = hypervisorRefusal(config, flavour, base.file);
    if (sections !== null) refusals.push(sections);
  }
  // Set by a drop-in (the release's own file sets some of them too: not the admin's doing).
  if (flavour === "go")
    for (const entry of sorted) {
      const remote = isTable(entry.table?.hypervisor) ? entry.table.hypervisor.remote : undefined;
      if (isTable(remote))
        for (const key of Object.keys(remote)) {
          const why = ignoredKey(`hypervisor.remote.${key}`, flavour);
          if (why !== null)
            ignored.push({ key: `hypervisor.remote.${key}`, why: `set in ${entry.file}, and ${why}` });
        }
    }
  return { config, refusals, ignored };
}

/** What Kata says of an entry it cannot take as a file at all. */
function entryRefusal(entry: ConfigEntry, flavour: KataFlavour): string | null {
  if (flavour === "rust" && entry.kind !== "file")
    // drop_in.rs: the entry's own type (not following a link) must be a regular file.
    return "drop-in cfg file can only be a regular file or a symlink (Kata's Rust runtime takes regular files only: a link or a directory there refuses the whole configuration)";
  if (entry.kind === "directory")
    return `error reading file "${entry.file}": read ${entry.file}: is a directory`;
  if (entry.table === null && entry.problem?.startsWith("cannot read: "))
    return `error reading file "${entry.file}": ${entry.problem.slice("cannot read: ".length)}`;
  if (entry.table === null)
    return flavour === "go"
      ? `error decoding file "${entry.file}": ${entry.problem ?? "not TOML"}`
      : `TOML parse error: ${entry.problem ?? "not TOML"}`;
  return null;
}

/**
 * The Go runtime decodes each drop-in into its typed structures: a value of another type than the
 * field's refuses the configuration. A key it does not know in a [hypervisor.X] or [agent.X] table
 * of a drop-in refuses it too (applyKey: "key … not found"); known here only as far as the release's
 * configurations name keys, so one none names is a doubt said (`ignored`), not a refusal.
 */
function goDecodeRefusal(entry: ConfigEntry, known: KnownKeys, ignored: Loaded["ignored"]): string | null {
  const table = entry.table ?? {};
  for (const [kind, value] of Object.entries(table)) {
    if (!isTable(value)) continue;
    const fieldsOf = (section: TomlTable, prefix: string): string | null => {
      const keys = known.get(kind);
      for (const [key, v] of Object.entries(section)) {
        const want = keys?.get(key);
        const got = tomlTypeOf(v);
        if (want !== undefined && !decodes(want, got))
          return `error decoding file "${entry.file}": toml: (last key "${prefix}.${key}"): incompatible types: TOML value has type ${got}; destination has type ${GO_TYPE[want]}`;
        if (want === undefined && keys !== undefined && NAMED.has(kind))
          ignored.push({
            key: `${prefix}.${key}`,
            why: `${entry.file} sets it, and no configuration of this release names it: Kata's Go runtime refuses a key it does not know in a drop-in's [${kind}.*] table ("key "${key}" not found"), the whole configuration with it`,
          });
      }
      return null;
    };
    if (NAMED.has(kind)) {
      for (const [name, section] of Object.entries(value))
        if (isTable(section)) {
          const said = fieldsOf(section, `${kind}.${name}`);
          if (said !== null) return said;
        }
    } else {
      const said = fieldsOf(value, kind);
      if (said !== null) return said;
    }
  }
  return null;
}

/**
 * After the merge, every [hypervisor.<name>] section counts (Go walks them all: a name it does not
 * know refuses the file; two it knows leave which one runs to Go's random map order). The Rust
 * runtime takes the one [runtime] hypervisor_name names, and still adjusts every section's.
 */
function hypervisorRefusal(config: TomlTable, flavour: KataFlavour, baseFile: string): Refusal | null {
  if (!isTable(config.hypervisor)) return null;
  const names = Object.keys(config.hypervisor);
  if (flavour === "go") {
    const unknown = names.find((n) => !GO_HYPERVISORS.has(n));
    if (unknown !== undefined)
      return {
        file: baseFile,
        reason: `${baseFile}: configuration file contains invalid hypervisor section: "${unknown}"`,
      };
  }
  if (names.length > 1)
    return {
      file: baseFile,
      reason:
        flavour === "go"
          ? `its drop-ins add hypervisor sections (${names.map((n) => `[hypervisor.${n}]`).join(", ")}): Kata's Go runtime configures each in turn, and which one it runs is left to Go's random map order (a section for another hypervisor never belongs in this shim's config.d/)`
          : `its drop-ins add hypervisor sections (${names.map((n) => `[hypervisor.${n}]`).join(", ")}): Kata's Rust runtime runs the one [runtime] hypervisor_name names, and adjusts every section's settings (a section for another hypervisor never belongs in this shim's config.d/)`,
    };
  return null;
}

/** A drop-in over what came before: tables merged key by key, any other value (a list too) replaced. */
export function merge(into: TomlTable, from: TomlTable): TomlTable {
  for (const [key, value] of Object.entries(from)) {
    const here = into[key];
    if (isTable(here) && isTable(value)) merge(here, value);
    else into[key] = structuredClone(value);
  }
  return into;
}
