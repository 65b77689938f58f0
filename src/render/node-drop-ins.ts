// The drop-ins of a shim's config.d/ on the node that are not kata-install's: an admin's own
// (Kata reads every entry there in the order of their names, a later file winning:
// src/release/drop-in-dir.ts). `explain` holds each decided value against them, so that a value
// an admin's later drop-in replaces is not shown as the one Kata uses; the plan warns of each.
import path from "node:path";
import type { Catalog } from "../decide/catalog.js";
import type { Check, Decision } from "../decide/decision.js";
import { DECIDED_DROP_IN, handlersFor } from "../decide/layout.js";
import { type Decided, describeSource } from "../decide/provenance.js";
import type { Host } from "../host/host.js";
import { shown } from "../json-text.js";
import { parseKataToml, valueAt } from "../release/config-file.js";
import { readDropIns } from "../release/drop-in-dir.js";

export interface NodeDropIn {
  /** Host path of the file. */
  file: string;
  /** Read after kata-install's own drop-in: its values are the ones Kata uses. */
  after: boolean;
  table: Record<string, unknown>;
}

/**
 * Each handler's (a shim's, or a variant's by its name) drop-ins of the node, in Kata's order, and
 * kata-install's own as `planned` has it (the plan's file, else the node's).
 */
export async function nodeDropIns(
  host: Host,
  decision: Decision,
  catalog: Catalog,
  planned: ReadonlyMap<string, string | null> = new Map(),
): Promise<{
  dropIns: Map<string, NodeDropIn[]>;
  ours: Map<string, Record<string, unknown>>;
  problems: string[];
}> {
  const dropIns = new Map<string, NodeDropIn[]>();
  const ours = new Map<string, Record<string, unknown>>();
  const problems: string[] = [];
  for (const handler of handlersFor(decision, catalog)) {
    const name = handler.variant !== null ? handler.name : handler.shim;
    const read = await readDropIns(host, `${path.posix.dirname(handler.configPath)}/config.d`, planned);
    problems.push(...read.problems);
    const found: NodeDropIn[] = [];
    for (const { file, name: entry, text } of read.dropIns) {
      if (entry === DECIDED_DROP_IN) {
        try {
          ours.set(name, parseKataToml(text));
        } catch {
          // kata-install's own, changed by hand so that it does not parse: the plan says so
        }
        continue;
      }
      try {
        found.push({
          file,
          after: Buffer.compare(Buffer.from(entry), Buffer.from(DECIDED_DROP_IN)) > 0,
          table: parseKataToml(text),
        });
      } catch (error) {
        problems.push(`${file} does not parse: ${(error as Error).message.split("\n")[0]}`);
      }
    }
    if (found.length > 0) dropIns.set(name, found);
  }
  return { dropIns, ours, problems };
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

/**
 * A warning naming each value kata-install decides that a drop-in of the node's, read after
 * kata-install's, replaces: Kata uses the drop-in's, which nothing here checked (the node's devices,
 * the release's values). Null when there is none.
 */
export function replacedCheck(
  decision: Decision,
  read: { dropIns: ReadonlyMap<string, NodeDropIn[]>; ours: ReadonlyMap<string, Record<string, unknown>> },
): Check | null {
  const replaced: string[] = [];
  const handlers: Array<[string, Record<string, Decided<unknown>>]> = [
    ...Object.entries(decision.config),
    ...decision.customRuntimes.map((c): [string, Record<string, Decided<unknown>>] => [c.handler, c.config]),
  ];
  for (const [handler, values] of handlers)
    for (const [key, decided] of Object.entries(values)) {
      const last = setOnNode(read.dropIns, handler, key)
        .filter((d) => d.after)
        .at(-1);
      // Held against what kata-install's drop-in says (a list it joined to the release's, say).
      const written = valueAt(read.ours.get(handler) ?? {}, key) ?? decided.value;
      if (last !== undefined && shown(last.value) !== shown(written))
        replaced.push(
          `${handler}: ${key} = ${shown(last.value)} (${last.file}) over ${shown(written)} (${describeSource(decided.source)})`,
        );
    }
  if (replaced.length === 0) return null;
  return {
    id: "config-replaced",
    severity: "warning",
    status: "fail",
    message: `a drop-in of the node's, read after kata-install's, replaces what it decides, and Kata uses the drop-in's: ${replaced.join("; ")}`,
    hint: "give the value in the overrides file ([config.<shim>]), where it is checked against the node and the release, and remove the drop-in; or remove the drop-in",
    rule: "install",
  };
}
