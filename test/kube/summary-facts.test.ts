// The half of a summary a node's facts alone give reads only the facts it says it reads: report
// shares one summary among the nodes that agree on those (src/report/scan.ts), so a read left out
// of SUMMARY_READS would give a node another's summary.
import { describe, expect, it } from "vitest";
import { SUMMARY_READS, summaryFacts } from "../../src/kube/summary-facts.js";
import { factsOf } from "../helpers/decide.js";
import { amdSnpCrio, arm64Containerd20, gpuDistroQemuK3s, intelContainerd16 } from "../helpers/nodes.js";

/** `document` behind a proxy that records the dotted path of every property read through it. */
function recording(document: object, read: Set<string>, at = ""): object {
  return new Proxy(document, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof key === "symbol") return value;
      const path = at ? `${at}.${key}` : key;
      read.add(path);
      return value !== null && typeof value === "object" ? recording(value, read, path) : value;
    },
  });
}

describe("summaryFacts' reads", () => {
  it.each([intelContainerd16, amdSnpCrio, gpuDistroQemuK3s, arm64Containerd20])(
    "are all in SUMMARY_READS, on %o",
    async (kind) => {
      const facts = await factsOf(kind());
      const read = new Set<string>();
      const summary = summaryFacts(recording(facts, read) as typeof facts);
      expect(summary).toEqual(summaryFacts(facts));
      // A path read is a step on the way to a listed one, or inside one listed whole.
      const outside = [...read].filter(
        (p) => !SUMMARY_READS.some((r) => r === p || p.startsWith(`${r}.`) || r.startsWith(`${p}.`)),
      );
      expect(read.size).toBeGreaterThan(SUMMARY_READS.length);
      expect(outside).toEqual([]);
    },
  );
});
