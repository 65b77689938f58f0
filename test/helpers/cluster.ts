// A cluster's worth of saved facts: nodes of a few kinds detected from the test zoo, copied with the
// noise real nodes have (disk sizes, CPU counts, problems) and with chosen differences.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { detectFacts, type Facts } from "../../src/detect/facts.js";
import { intelContainerd16 } from "./nodes.js";
import { buildHost } from "./test-host.js";

export type Variant = (facts: Facts) => void;

export const withoutVirtiofs: Variant = (f) => {
  const module = f.kernel.modules.virtiofs;
  if (module) module.state = "missing";
};
export const containerd2: Variant = (f) => {
  f.runtime.version = "2.0.4";
};

let base: Facts | null = null;
/** The Intel/containerd 1.6 node's facts, detected once. */
export async function intelFacts(): Promise<Facts> {
  base ??= await detectFacts(buildHost(intelContainerd16()).host);
  return structuredClone(base);
}

/** `count` nodes named n0000…; `variants` maps node indexes to what makes them differ. */
export async function factsDir(count: number, variants: Record<number, Variant[]> = {}): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-facts-"));
  const facts = await intelFacts();
  for (let i = 0; i < count; i++) {
    const node = structuredClone(facts);
    // Noise that never changes a decision.
    node.cpu.count = 4 + (i % 13);
    for (const device of node.storage.blockDevices) device.sizeBytes = 1e11 + i * 4096;
    node.problems =
      i % 7 === 0 ? [{ source: "storage", reason: `sdb${i}: unreadable`, path: "/sys/block/sdb" }] : [];
    for (const variant of variants[i] ?? []) variant(node);
    fs.writeFileSync(path.join(dir, `n${String(i).padStart(4, "0")}.json`), JSON.stringify(node));
  }
  return dir;
}
