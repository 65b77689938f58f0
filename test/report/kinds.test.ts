// A report reads a summary once per kind of node (the nodes that share one summary object) and
// counts or names its nodes together: the same report, to the byte, as when every node has its own
// copy — majorities, the nodes named and their order, pools, checks and pinned values alike.
import { describe, expect, it } from "vitest";
import type { NodeSummary } from "../../src/kube/summary.js";
import type { NodeEntry } from "../../src/report/entry.js";
import { countOf, kindsOf, namesOf } from "../../src/report/kinds.js";
import { buildReport } from "../../src/report/report.js";
import { SUMMARY } from "../helpers/summary.js";

const memory = (value: string): Partial<NodeSummary> => ({
  ruled: { qemu: { "hypervisor.qemu.default_memory": value } },
});
// Three kinds, their nodes interleaved and out of name order; one kind's check named twice.
const kinds: NodeSummary[] = [
  { ...SUMMARY, ...memory("2048") },
  {
    ...SUMMARY,
    ...memory("4096"),
    runtime: { kind: "containerd", version: "2.0.4" },
    failed: ["kvm"],
    checks: [
      { id: "kvm", severity: "error", message: "no /dev/kvm" },
      { id: "kvm", severity: "error", message: "no /dev/kvm" },
    ],
  },
  { ...SUMMARY, ...memory("8192"), shims: ["qemu"], defaultShim: "qemu" },
];
const names = ["n07", "n01", "n05", "n03", "n02", "n08", "n04", "n06", "n09", "n00", "n10", "n11", "n12"];
const shared: NodeEntry[] = names.map((name, i) => ({
  name,
  summary: kinds[i % 3 === 2 ? 2 : i % 2] as NodeSummary,
}));
const copied: NodeEntry[] = shared.map((n) => ({ name: n.name, summary: structuredClone(n.summary) }));

describe("nodes that share a summary", () => {
  it("are one kind each, named in the list's order", () => {
    const of = kindsOf(shared);
    expect(of.map((k) => k.summary)).toEqual(kinds.slice(0, of.length));
    expect(of).toHaveLength(3);
    expect(countOf(of)).toBe(names.length);
    expect(namesOf(shared, of)).toEqual(names);
    expect(kindsOf(copied)).toHaveLength(names.length);
  });

  it("get the report they would get each with their own", () => {
    const report = buildReport(shared, []);
    expect(JSON.stringify(report)).toBe(JSON.stringify(buildReport(copied, [])));
    // It has something to say: a disagreement, a pinned value going against nodes, a repeated check.
    expect(report.disagreements.length).toBeGreaterThan(0);
    expect(JSON.stringify(report.pools)).toContain("goes against the facts of");
    expect(report.pools.flatMap((p) => p.checks).some((c) => new Set(c.nodes).size < c.nodes.length)).toBe(
      true,
    );
  });
});
