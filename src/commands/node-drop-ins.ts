// The drop-ins of a shim's config.d/ on the node that are not kata-install's: an admin's own
// (Kata reads every entry there in the order of their names, a later file winning:
// src/release/drop-in-dir.ts). `explain` holds each decided value
// against them, so that a value an admin's later drop-in replaces is not shown as the one Kata uses.
import path from "node:path";
import type { Catalog } from "../decide/catalog.js";
import type { Decision } from "../decide/decision.js";
import type { Host } from "../host/host.js";
import { parseKataToml, valueAt } from "../release/config-file.js";
import { readDropIns } from "../release/drop-in-dir.js";
import { DECIDED_DROP_IN, handlersFor } from "../render/layout.js";

export interface NodeDropIn {
  /** Host path of the file. */
  file: string;
  /** Read after kata-install's own drop-in: its values are the ones Kata uses. */
  after: boolean;
  table: Record<string, unknown>;
}

/** Each handler's (a shim's, or a variant's by its name) drop-ins of the node, in Kata's order. */
export async function nodeDropIns(
  host: Host,
  decision: Decision,
  catalog: Catalog,
): Promise<{ dropIns: Map<string, NodeDropIn[]>; problems: string[] }> {
  const dropIns = new Map<string, NodeDropIn[]>();
  const problems: string[] = [];
  for (const handler of handlersFor(decision, catalog)) {
    const read = await readDropIns(host, `${path.posix.dirname(handler.configPath)}/config.d`);
    problems.push(...read.problems);
    const found: NodeDropIn[] = [];
    for (const { file, name, text } of read.dropIns) {
      if (name === DECIDED_DROP_IN) continue;
      try {
        found.push({
          file,
          after: Buffer.compare(Buffer.from(name), Buffer.from(DECIDED_DROP_IN)) > 0,
          table: parseKataToml(text),
        });
      } catch (error) {
        problems.push(`${file} does not parse: ${(error as Error).message.split("\n")[0]}`);
      }
    }
    if (found.length > 0) dropIns.set(handler.variant !== null ? handler.name : handler.shim, found);
  }
  return { dropIns, problems };
}

/** What the node's drop-ins of `handler` set `key` to, in Kata's order. */
export function setOnNode(
  dropIns: ReadonlyMap<string, NodeDropIn[]>,
  handler: string,
  key: string,
): Array<{ file: string; value: unknown; after: boolean }> {
  return (dropIns.get(handler) ?? []).flatMap((d) => {
    const value = valueAt(d.table, key);
    return value === undefined ? [] : [{ file: d.file, value, after: d.after }];
  });
}
