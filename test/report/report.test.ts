// The report's comparisons on summaries alone: majorities (ties broken the same way every time),
// and the uniform overrides when nodes' facts decided a value differently.
import { describe, expect, it } from "vitest";
import { type NodeSummary, publishedFactPaths } from "../../src/kube/summary.js";
import { buildReport } from "../../src/report/report.js";
import { rules } from "../helpers/decide.js";
import { SUMMARY } from "../helpers/summary.js";

const nodeWith = (name: string, change: Partial<NodeSummary>) => ({
  name,
  summary: { ...SUMMARY, ...change },
});

describe("what nodes are compared on", () => {
  it("the facts the rules read, as the nodes published them, and the shims: nothing kept by hand", () => {
    const paths = publishedFactPaths(rules);
    // Read off the rules: one-value facts only (a list such as cpu.flags shows in what it decides).
    expect(paths).toEqual(expect.arrayContaining(["kvm.device", "cpu.virtualization", "runtime.version"]));
    expect(paths).not.toContain("cpu.flags");
    expect(paths.some((p) => p.startsWith("vars.") || p.startsWith("pci.devices"))).toBe(false);
    // And the host kernel's virtio-fs and 9p, shown though they decide nothing.
    expect(paths.slice(-2)).toEqual(["kernel.modules.virtiofs.state", "kernel.modules.9p.state"]);
    const facts = Object.fromEntries(paths.map((p) => [p, "same"]));
    const report = buildReport(
      [
        nodeWith("a", { facts }),
        nodeWith("b", { facts }),
        nodeWith("c", { facts: { ...facts, "kvm.device": false } }),
      ],
      [],
    );
    expect(report.disagreements).toEqual([
      {
        field: "kvm.device",
        majority: { value: "same", nodes: 2 },
        others: [{ value: "false", nodes: ["c"] }],
      },
    ]);
  });
});

describe("a cluster report", () => {
  it("a tie goes to the first value in sort order, so a report never flips between runs", () => {
    const report = buildReport(
      [
        nodeWith("b", { runtime: { kind: "containerd", version: "2.0.4" } }),
        nodeWith("a", { runtime: { kind: "containerd", version: "1.7.20" } }),
      ],
      [],
    );
    expect(report.disagreements).toEqual([
      {
        field: "runtime",
        majority: { value: "containerd 1.7.20", nodes: 1 },
        others: [{ value: "containerd 2.0.4", nodes: ["b"] }],
      },
    ]);
    expect(report.nodes.map((n) => n.name)).toEqual(["a", "b"]);
  });

  it("a value one kind of node decided from its facts is pinned for its pool: it contradicts no node", () => {
    const report = buildReport(
      [
        nodeWith("a", {}),
        nodeWith("b", {}),
        nodeWith("c", { ruled: { qemu: { "hypervisor.qemu.shared_fs": "virtio-9p" } } }),
      ],
      [],
    );
    expect(report.pools[0]?.overrides.config).toEqual({
      qemu: {
        "hypervisor.qemu.shared_fs": {
          value: "virtio-9p",
          note: "1 node(s) decided this from their facts; 2 took the default",
        },
      },
    });
    // Not in what every node shares: that is the pools' files' to say.
    expect(report.overrides.config).toEqual({});
  });

  it("values that facts decided differently on different nodes: the majority's, naming the nodes it goes against", () => {
    const ruled = (value: string) => ({ ruled: { qemu: { "hypervisor.qemu.default_memory": value } } });
    const report = buildReport(
      [nodeWith("a", ruled("2048")), nodeWith("b", ruled("2048")), nodeWith("c", ruled("4096"))],
      [],
    );
    expect(report.pools[0]?.overrides.config.qemu?.["hypervisor.qemu.default_memory"]).toEqual({
      value: "2048",
      note: 'nodes\' facts decided different values: "2048" on 2, "4096" on 1; this goes against the facts of c',
    });
  });

  it("only shims every node can run; a default among them", () => {
    const report = buildReport(
      [
        nodeWith("a", { shims: ["clh", "qemu"], defaultShim: "clh" }),
        nodeWith("b", { shims: ["qemu"], defaultShim: "qemu" }),
      ],
      [],
    );
    expect(report.overrides).toMatchObject({
      shims: ["qemu"],
      defaultShim: "qemu",
      notes: ["clh left out: only 1 of 2 nodes can run it"],
    });
  });
});
