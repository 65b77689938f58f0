// A shim's config.d/ as Kata reads it: both runtimes take every entry of the directory, whatever its
// name (not only *.toml: a "90-override" or an editor's "50-kata-install.toml~" counts too), in the
// order of the names as bytes, and refuse the whole configuration when one does not parse or is not
// a file (the Go runtime's decodeDropIns, runtime-rs's drop_in_directory_handling).
import path from "node:path";
import type { Host } from "../host/host.js";

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
