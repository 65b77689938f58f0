// A shim's config.d/ as Kata reads it: both runtimes take every entry of the directory, whatever its
// name (not only *.toml: a "90-override" or an editor's "50-kata-install.toml~" counts too), in the
// order of the names as bytes, and refuse the whole configuration when one does not parse or is not
// a file (the Go runtime's decodeDropIns, runtime-rs's drop_in_directory_handling).
import path from "node:path";
import type { TomlTable } from "../detect/toml.js";
import type { Host } from "../host/host.js";
import { parseKataToml } from "./config-file.js";

export interface DropInText {
  /** Host path. */
  file: string;
  name: string;
  text: string;
}

const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * The drop-ins of `dir` in Kata's order, with their text: the node's, or the one `planned` gives
 * for a host path (null: the plan removes it). What Kata could not read is a problem, said.
 */
export async function readDropIns(
  host: Host,
  dir: string,
  planned: ReadonlyMap<string, string | null> = new Map(),
): Promise<{ dropIns: DropInText[]; problems: string[] }> {
  const listing = await host.readDir(dir);
  const names = new Set(listing.ok ? listing.entries : []);
  for (const file of planned.keys())
    if (path.posix.dirname(file) === dir) names.add(path.posix.basename(file));
  const dropIns: DropInText[] = [];
  const problems: string[] = [];
  for (const name of [...names].sort(byBytes)) {
    const file = `${dir}/${name}`;
    if (planned.has(file)) {
      const text = planned.get(file);
      if (text !== null && text !== undefined) dropIns.push({ file, name, text });
      continue;
    }
    const read = await host.readText(file);
    if (read.ok) dropIns.push({ file, name, text: read.text });
    else if (!read.missing)
      problems.push(
        `${file} cannot be read as a drop-in (${read.reason}), and Kata reads every entry of config.d/`,
      );
  }
  return { dropIns, problems };
}

/** An entry of config.d/ as Kata meets it (src/render/kata-loader.ts judges it as Kata would). */
export interface ConfigEntry {
  name: string;
  /** Host path. */
  file: string;
  /** What the entry is, not following a link (Rust refuses a link; Go follows it). */
  kind: "file" | "link" | "directory" | "other";
  /** Its text parsed (a link's target's); null when it could not be read or parsed. */
  table: TomlTable | null;
  /** Why it could not be read ("cannot read: …") or parsed; null when it was. */
  problem: string | null;
}

/**
 * Every entry of `dir` as Kata's loaders meet them, with the files `planned` writes or removes
 * there counted (null: removed): kind, text parsed, or why not.
 */
export async function readConfigEntries(
  host: Host,
  dir: string,
  planned: ReadonlyMap<string, string | null> = new Map(),
  /** false: the node's own entries do not count (a takeover moves the directory's tree aside). */
  nodes = true,
): Promise<ConfigEntry[]> {
  const listing = nodes ? await host.readDir(dir) : null;
  const names = new Set(listing?.ok ? listing.entries : []);
  for (const file of planned.keys())
    if (path.posix.dirname(file) === dir) names.add(path.posix.basename(file));
  const entries: ConfigEntry[] = [];
  for (const name of [...names].sort(byBytes)) {
    const file = `${dir}/${name}`;
    const parsed = (text: string): Pick<ConfigEntry, "table" | "problem"> => {
      try {
        return { table: parseKataToml(text), problem: null };
      } catch (error) {
        return { table: null, problem: (error as Error).message.split("\n")[0] ?? "not TOML" };
      }
    };
    if (planned.has(file)) {
      const text = planned.get(file);
      if (text !== null && text !== undefined) entries.push({ name, file, kind: "file", ...parsed(text) });
      continue;
    }
    const link = await host.lookLink(file);
    const stat = link.ok ? null : await host.lookStat(file);
    if (stat !== null && !stat.ok && stat.missing) continue;
    const kind: ConfigEntry["kind"] = link.ok
      ? "link"
      : stat?.ok && stat.value.isDirectory()
        ? "directory"
        : stat?.ok && stat.value.isFile()
          ? "file"
          : "other";
    if (kind === "directory") {
      entries.push({ name, file, kind, table: null, problem: "is a directory" });
      continue;
    }
    const read = await host.readText(file);
    entries.push(
      read.ok
        ? { name, file, kind, ...parsed(read.text) }
        : {
            name,
            file,
            kind,
            table: null,
            problem: `cannot read: ${read.missing ? "no such file or directory (a link to nothing)" : read.reason}`,
          },
    );
  }
  return entries;
}
