import { parse } from "smol-toml";
import { tomlErrorText } from "../toml-error.js";
import type { DetectContext } from "./context.js";

export type TomlTable = Record<string, unknown>;

/** A host TOML file as a table; null when absent, and null with a recorded problem when it does not parse. */
export async function readToml(
  ctx: DetectContext,
  source: string,
  hostPath: string,
): Promise<TomlTable | null> {
  const text = await ctx.read(source, hostPath, { utf8: true });
  if (text === null) return null;
  try {
    return parse(text, { integersAsBigInt: "asNeeded" }) as TomlTable;
  } catch (error) {
    ctx.problem(source, tomlErrorText(error), { path: hostPath });
    return null;
  }
}

/** The value at a dotted path of table keys, e.g. ["plugins", "io.containerd.grpc.v1.cri", "containerd"]. */
export function dig(table: unknown, keys: readonly string[]): unknown {
  let current = table;
  for (const key of keys) {
    if (current === null || typeof current !== "object" || Array.isArray(current)) return undefined;
    current = (current as TomlTable)[key];
  }
  return current;
}

export function isTable(value: unknown): value is TomlTable {
  return value !== null && typeof value === "object" && !Array.isArray(value) && !(value instanceof Date);
}

/** A table's values as dotted keys ("hypervisor.qemu.default_memory"). */
export function dotted(table: Record<string, unknown>, prefix = ""): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(table)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (isTable(value)) Object.assign(out, dotted(value, path));
    else out[path] = value;
  }
  return out;
}
