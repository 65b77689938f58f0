// One configuration file of a Kata release, as kata-install reads it: its table, the keys it
// documents (set, or shown commented out as `# key = value`) with their TOML types, and the values
// it lists for a key where its own comment enumerates them ("#   - virtio-fs (default)"). This is
// what a decided key and value are checked against: the release's own word, not a copy of it.
import { parse } from "smol-toml";
import { itemAt } from "../at.js";
import { isTable } from "../detect/toml.js";
import { tomlErrorText } from "../toml-error.js";

export type KeyType = "string" | "bool" | "int" | "float" | "string[]" | "other";

export interface KeyInfo {
  type: KeyType;
  /** Set in the file (false: only shown commented out). */
  set: boolean;
  /** The values the file's comment above the key lists, when it lists them and its own value is one. */
  domain?: string[];
  /** 1-based line of the key in the file. */
  line: number;
}

export interface ConfigFile {
  text: string;
  table: Record<string, unknown>;
  /** "hypervisor.qemu.shared_fs" → what the file says of it. */
  keys: ReadonlyMap<string, KeyInfo>;
  /** The [hypervisor.<name>] section the file configures (null for none). */
  hypervisor: string | null;
}

export class ConfigFileError extends Error {}

/**
 * A Kata configuration as TOML: Kata's files hold integers past 2^53 (runtime-rs's
 * `compact_force_times = 9223372036854775807`), which stay exact as bigints.
 */
export function parseKataToml(text: string): Record<string, unknown> {
  // Kata's files are nine parts comments: the parser is given the lines that hold TOML, blank
  // lines in their place (so errors keep their line numbers), unless a multi-line string could
  // hold a line that only looks like a comment.
  const input = text.includes('"""') || text.includes("'''") ? text : text.replace(/^[ \t]*#.*$/gm, "");
  return parse(input, { integersAsBigInt: "asNeeded" }) as Record<string, unknown>;
}

export function typeOf(value: unknown): KeyType {
  if (typeof value === "string") return "string";
  if (typeof value === "boolean") return "bool";
  if (typeof value === "number") return Number.isInteger(value) ? "int" : "float";
  if (typeof value === "bigint") return "int";
  if (Array.isArray(value) && value.every((v) => typeof v === "string")) return "string[]";
  return "other";
}

const SECTION = /^\s*\[\s*([A-Za-z0-9_.-]+)\s*\]\s*(#.*)?$/;
const ARRAY_SECTION = /^\s*\[\[/;
const KEY = /^([A-Za-z0-9_-]+)\s*=/;
const COMMENTED = /^\s*#\s?([A-Za-z0-9_-]+\s*=.*)$/;
// "#   - virtio-fs (default)", "#   - \"erofs\"": one listed value, with an optional remark.
const LISTED = /^#\s+-\s+"?([a-z0-9][a-z0-9._-]*)"?(\s+\(.*\))?\s*$/;

/** Read one configuration file; `name` is for errors ("configuration-qemu.toml of Kata 4.1.0"). */
export function readConfigFile(text: string, name: string): ConfigFile {
  let table: Record<string, unknown>;
  try {
    table = parseKataToml(text);
  } catch (error) {
    throw new ConfigFileError(`${name} does not parse: ${tomlErrorText(error)}`);
  }
  const keys = new Map<string, KeyInfo>();
  let section = "";
  let sectionTable: Record<string, unknown> | undefined;
  // The values listed in the comment above the next key ("#   - virtio-fs"), in order.
  let listed: string[] = [];
  let inArray = false;
  let at = 0;
  // One pass over the lines, dispatched on their first character: most are comments.
  for (let i = 1; at <= text.length; i++) {
    const end = text.indexOf("\n", at);
    const next = end < 0 ? text.length + 1 : end + 1;
    let line = text.slice(at, end < 0 ? text.length : end);
    at = next;
    if (line.endsWith("\r")) line = line.slice(0, -1);
    const first = line.trimStart()[0];
    if (first === "#") {
      const commented = section !== "" && !inArray ? COMMENTED.exec(line) : null;
      // A key shown commented out documents it: `#default_maxmemory = 0`, `# kernel_params = ""`.
      if (commented) {
        const text = itemAt(commented, 1, "the commented-out line");
        const value = parseValue(text);
        const key = `${section}.${(KEY.exec(text) as RegExpExecArray)[1]}`;
        if (value !== undefined && !keys.has(key))
          keys.set(key, { type: typeOf(value), set: false, line: i });
      } else if (line.includes("- ")) {
        const item = LISTED.exec(line.trim())?.[1];
        if (item !== undefined) listed.push(item);
      }
      continue;
    }
    if (first === "[") {
      const header = SECTION.exec(line);
      if (header) {
        section = itemAt(header, 1, "the section name");
        sectionTable = undefined;
        inArray = false;
      } else if (ARRAY_SECTION.test(line)) inArray = true; // a list of tables: no key of its own to set
      listed = [];
      continue;
    }
    const assignment = first === undefined ? null : KEY.exec(line);
    if (assignment && section !== "" && !inArray) {
      const name = itemAt(assignment, 1, "the key");
      const key = `${section}.${name}`;
      if (sectionTable === undefined)
        sectionTable = valueAt(table, section) as Record<string, unknown> | undefined;
      const value = sectionTable?.[name];
      const domain =
        typeof value === "string" && listed.length >= 2 && listed.includes(value) ? listed : undefined;
      keys.set(key, { type: typeOf(value), set: true, line: i, ...(domain ? { domain } : {}) });
    }
    listed = []; // a key, or a blank line: the comment above the next key starts after it
  }
  const hypervisors = isTable(table.hypervisor) ? Object.keys(table.hypervisor) : [];
  return { text, table, keys, hypervisor: hypervisors[0] ?? null };
}

function parseValue(assignment: string): unknown {
  try {
    const parsed = parseKataToml(assignment);
    return Object.values(parsed)[0];
  } catch {
    return undefined; // prose that looks like a key ("# cold_plug_vfio = no_port (default) =>")
  }
}

/** The value at a dotted key; section names never hold dots inside a part (agent.kata). */
export function valueAt(table: Record<string, unknown>, key: string): unknown {
  let current: unknown = table;
  for (const part of key.split(".")) {
    if (!isTable(current)) return undefined;
    current = current[part];
  }
  return current;
}

/**
 * The file as installed under another directory than /opt/kata (INSTALLATION_PREFIX,
 * MULTI_INSTALL_SUFFIX): each path under /opt/kata moved there, every other byte as released.
 */
export function moveInstallDir(text: string, dir: string): string {
  if (dir === "/opt/kata") return text;
  return text.replace(/\/opt\/kata(?=[/"'\s,\]]|$)/gm, dir);
}

/** A drop-in over a configuration as Kata reads it: tables merged key by key, a later value winning. */
export function mergeDropIn(
  into: Record<string, unknown>,
  from: Record<string, unknown>,
): Record<string, unknown> {
  for (const [key, value] of Object.entries(from)) {
    const here = into[key];
    if (isTable(here) && isTable(value)) mergeDropIn(here, value);
    else into[key] = value;
  }
  return into;
}
