// A cluster's worth of saved facts: nodes of a few kinds detected from the test zoo, copied with the
// noise real nodes have (disk sizes, CPU counts, problems) and with chosen differences.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Facts } from "../../src/detect/facts.js";
import { factsOf } from "./decide.js";
import { intelContainerd16 } from "./nodes.js";
import type { NodeSpec } from "./test-host.js";

export type Variant = (facts: Facts) => void;

export const withoutVirtiofs: Variant = (f) => {
  const module = f.kernel.modules.virtiofs;
  if (module) module.state = "missing";
};
export const containerd2: Variant = (f) => {
  f.runtime.version = "2.0.4";
};

const detected = new Map<() => NodeSpec, Promise<Facts>>();
/** A kind of test node's facts, detected once for all the copies made of it. */
function factsOfKind(kind: () => NodeSpec): Promise<Facts> {
  let facts = detected.get(kind);
  if (facts === undefined) {
    facts = factsOf(kind());
    detected.set(kind, facts);
  }
  return facts;
}

/**
 * `count` nodes named n0000…, of the kinds given (in turn: node i is of kind i mod kinds.length),
 * saved as `facts --json` saves them; `variants` maps node indexes to what makes them differ.
 */
export async function factsDir(
  count: number,
  variants: Record<number, Variant[]> = {},
  kinds: Array<() => NodeSpec> = [intelContainerd16],
): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-facts-"));
  const bases = await Promise.all(kinds.map(factsOfKind));
  for (let i = 0; i < count; i++) {
    const node = structuredClone(bases[i % bases.length] as Facts);
    // Noise that never changes a decision.
    node.cpu.count = 4 + (i % 13);
    for (const device of node.storage.blockDevices) device.sizeBytes = 1e11 + i * 4096;
    node.problems =
      i % 7 === 0 ? [{ source: "storage", reason: `sdb${i}: unreadable`, path: "/sys/block/sdb" }] : [];
    for (const variant of variants[i] ?? []) variant(node);
    fs.writeFileSync(
      path.join(dir, `n${String(i).padStart(4, "0")}.json`),
      `${JSON.stringify(node, null, 2)}\n`,
    );
  }
  return dir;
}

/** Rewrite one node's saved facts in `dir` (`<name>.json`): what an older or a damaged document has. */
export function editFacts(
  dir: string,
  name: string,
  change: (document: Record<string, unknown>) => void,
): void {
  const file = path.join(dir, `${name}.json`);
  const document = JSON.parse(fs.readFileSync(file, "utf8"));
  change(document);
  fs.writeFileSync(file, JSON.stringify(document));
}
