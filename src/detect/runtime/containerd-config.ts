// What a containerd config (and the drop-ins it imports) already holds. Config version 2 keeps the
// CRI plugin under "io.containerd.grpc.v1.cri"; versions 3 and 4 split it, with runtimes under
// "io.containerd.cri.v1.runtime" and the image settings under "io.containerd.cri.v1.images".
import path from "node:path";
import type { DetectContext } from "../context.js";
import { dig, isTable, readToml, type TomlTable } from "../toml.js";
import type { RuntimeHandler, Snapshotter } from "./schema.js";

const RUNTIME_TABLES = [
  ["plugins", "io.containerd.grpc.v1.cri", "containerd", "runtimes"],
  ["plugins", "io.containerd.cri.v1.runtime", "containerd", "runtimes"],
  ["plugins", "cri", "containerd", "runtimes"], // version 1 short plugin names
];
const DEFAULT_SNAPSHOTTER = [
  ["plugins", "io.containerd.grpc.v1.cri", "containerd", "snapshotter"],
  ["plugins", "io.containerd.cri.v1.images", "snapshotter"],
  ["plugins", "cri", "containerd", "snapshotter"],
];

export interface ContainerdConfig {
  exists: boolean;
  /** Why it exists but cannot be read, or null. */
  problem: string | null;
  version: number | null;
  imports: string[];
  /** The files its imports name (globs expanded). */
  imported: string[];
  dropInDir: string | null;
  handlers: RuntimeHandler[];
  snapshotters: Snapshotter[];
  defaultSnapshotter: string | null;
  /** The entries of disabled_plugins that turn the CRI plugin off (no pod could run on it). */
  criDisabled: string[];
  /** containerd's root directory (its `root`, else its default). */
  root: string;
}

/** The names disabled_plugins may give the CRI plugin and the plugins it is made of from 2.0 on. */
const CRI_PLUGINS = new Set([
  "cri",
  "io.containerd.grpc.v1.cri",
  "io.containerd.cri.v1.runtime",
  "io.containerd.cri.v1.images",
]);

export async function readContainerdConfig(
  ctx: DetectContext,
  configPath: string,
): Promise<ContainerdConfig> {
  const main = await readToml(ctx, "runtime", configPath);
  const exists = main !== null || (await ctx.exists("runtime", configPath));
  // There but unreadable (a directory, a FIFO, bad TOML), or not even reachable (a link loop).
  const recorded = ctx.problems.find((p) => p.path === configPath && p.source === "runtime")?.reason;
  // A dangling link is not a file to create: writing would go through it, to wherever it points
  // (an unmounted volume's directory, say), and no rollback could tell the link from our file.
  const dangling =
    main === null && !exists && recorded === undefined ? await ctx.readlink("runtime", configPath) : null;
  const problem =
    dangling !== null
      ? `is a symbolic link to ${dangling}, which does not exist`
      : main === null && (exists || recorded !== undefined)
        ? (recorded ?? "cannot be read")
        : null;
  const imports = stringList(main?.imports);
  const files: Array<[string, TomlTable]> = main === null ? [] : [[configPath, main]];
  for (const pattern of imports) {
    for (const file of await expandImport(ctx, configPath, pattern)) {
      const table = await readToml(ctx, "runtime", file);
      if (table !== null) files.push([file, table]);
    }
  }
  const version = typeof main?.version === "number" ? main.version : null;
  return {
    exists,
    problem,
    version,
    imports,
    imported: files.slice(main === null ? 0 : 1).map(([file]) => file),
    dropInDir: dropInDirOf(configPath, imports),
    handlers: files.flatMap(([file, table]) => handlersOf(file, table)),
    snapshotters: uniqueByName(files.flatMap(([, table]) => snapshottersOf(table))),
    defaultSnapshotter: lastString(files.map(([, table]) => firstString(table, DEFAULT_SNAPSHOTTER))),
    // containerd merges disabled_plugins from every file it imports.
    criDisabled: [...new Set(files.flatMap(([, table]) => stringList(table.disabled_plugins)))].filter((p) =>
      CRI_PLUGINS.has(p),
    ),
    root:
      lastString(files.map(([, table]) => (typeof table.root === "string" ? table.root : null))) ??
      DEFAULT_ROOT,
  };
}

const DEFAULT_ROOT = "/var/lib/containerd";

/** The directory an `imports` glob reads ("/etc/containerd/conf.d/*.toml" → "/etc/containerd/conf.d"). */
export function dropInDirOf(configPath: string, imports: readonly string[]): string | null {
  for (const entry of imports) {
    if (!entry.includes("*")) continue;
    const absolute = path.posix.resolve(path.posix.dirname(configPath), entry);
    if (!path.posix.dirname(absolute).includes("*")) return path.posix.dirname(absolute);
  }
  return null;
}

async function expandImport(ctx: DetectContext, configPath: string, pattern: string): Promise<string[]> {
  const absolute = path.posix.resolve(path.posix.dirname(configPath), pattern);
  if (!absolute.includes("*") && !absolute.includes("?")) return [absolute];
  const dir = path.posix.dirname(absolute);
  const glob = new RegExp(
    `^${path.posix
      .basename(absolute)
      .replace(/[.+^${}()|[\]\\]/g, "\\$&")
      .replaceAll("*", ".*")
      .replaceAll("?", ".")}$`,
  );
  return (await ctx.list("runtime", dir)).filter((name) => glob.test(name)).map((name) => `${dir}/${name}`);
}

function handlersOf(file: string, table: TomlTable): RuntimeHandler[] {
  const out: RuntimeHandler[] = [];
  for (const keys of RUNTIME_TABLES) {
    const runtimes = dig(table, keys);
    if (!isTable(runtimes)) continue;
    for (const [name, value] of Object.entries(runtimes)) {
      if (!isTable(value)) continue;
      out.push({
        name,
        runtimeType: stringOrNull(value.runtime_type),
        runtimePath: stringOrNull(value.runtime_path),
        configPath: stringOrNull(dig(value, ["options", "ConfigPath"])),
        file,
        ...(typeof value.snapshotter === "string" && value.snapshotter !== ""
          ? { snapshotter: value.snapshotter }
          : {}),
      });
    }
  }
  return out;
}

function snapshottersOf(table: TomlTable): Snapshotter[] {
  const out: Snapshotter[] = [];
  const plugins = dig(table, ["plugins"]);
  if (isTable(plugins)) {
    const devmapper = plugins["io.containerd.snapshotter.v1.devmapper"] ?? plugins.devmapper;
    // devmapper without a pool is inert: containerd skips it at start.
    const pool = isTable(devmapper) ? stringOrNull(devmapper.pool_name) : null;
    if (pool) out.push({ name: "devmapper", kind: "builtin", detail: pool });
    if (isTable(plugins["io.containerd.snapshotter.v1.erofs"]))
      out.push({ name: "erofs", kind: "builtin", detail: null });
    if (isTable(plugins["io.containerd.snapshotter.v1.blockfile"]))
      out.push({ name: "blockfile", kind: "builtin", detail: null });
  }
  const proxies = dig(table, ["proxy_plugins"]);
  if (isTable(proxies)) {
    for (const [name, value] of Object.entries(proxies)) {
      if (isTable(value) && value.type === "snapshot") {
        out.push({ name, kind: "proxy", detail: stringOrNull(value.address) });
      }
    }
  }
  return out;
}

function firstString(table: TomlTable, paths: string[][]): string | null {
  for (const keys of paths) {
    const value = dig(table, keys);
    if (typeof value === "string" && value !== "") return value;
  }
  return null;
}

function lastString(values: Array<string | null>): string | null {
  return values.filter((v): v is string => v !== null).pop() ?? null;
}

function uniqueByName(list: Snapshotter[]): Snapshotter[] {
  const byName = new Map<string, Snapshotter>();
  for (const item of list) byName.set(item.name, item);
  return [...byName.values()];
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

function stringOrNull(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}
