// Pools: nodes grouped by what decides their plan (architecture, runtime, TEE, GPU, distribution
// qemu), each with its own overrides, the term that selects it, and its nodes' preflight checks;
// what all share, and only that, for every node.
import { describe, expect, it } from "vitest";
import { nfdFeatureFile } from "../../src/kube/nfd-features.js";
import type { NodeSummary } from "../../src/kube/summary.js";
import { nodeFeatureRule } from "../../src/manifests/nfd.js";
import type { Requirement } from "../../src/report/pools.js";
import { buildReport } from "../../src/report/report.js";
import { SUMMARY } from "../helpers/summary.js";

const nodeWith = (name: string, change: Partial<NodeSummary>) => ({
  name,
  summary: { ...SUMMARY, ...change },
});
const GPU_VALUES = { "hypervisor.qemu.hot_plug_vfio": "root-port", "hypervisor.qemu.pcie_root_port": 1 };

/** A mixed fleet: plain Intel nodes, an SEV-SNP node on CRI-O, a GPU node, one with the distribution's qemu. */
const FLEET = [
  nodeWith("plain-1", { shims: ["clh", "qemu", "qemu-runtime-rs"] }),
  nodeWith("plain-2", { shims: ["clh", "qemu", "qemu-runtime-rs"] }),
  nodeWith("snp", {
    runtime: { kind: "crio", version: "1.30.3" },
    confidential: ["sev", "sevEs", "sevSnp"],
    shims: ["clh", "qemu", "qemu-runtime-rs", "qemu-snp"],
  }),
  nodeWith("gpu", {
    gpus: ["nvidia"],
    shims: ["clh", "qemu", "qemu-nvidia-gpu", "qemu-runtime-rs"],
    ruled: { "qemu-nvidia-gpu": GPU_VALUES, qemu: GPU_VALUES },
    failed: ["nvidia-driver"],
    checks: [
      {
        id: "nvidia-driver",
        severity: "error",
        message: "the GPU 0000:41:00.0 is bound to nvidia, not vfio-pci",
      },
    ],
  }),
  nodeWith("distro", { distro: ["qemu"], shims: ["qemu", "qemu-runtime-rs"] }),
];

describe("a cluster's pools", () => {
  const report = buildReport(FLEET, []);
  const pool = (id: string) => report.pools.find((p) => p.id === id);

  it("one pool per kind of plan; each shim goes to its own pool, not dropped for the lowest common one", () => {
    expect(report.pools.map((p) => [p.id, p.nodes])).toEqual([
      ["x86_64-containerd", ["plain-1", "plain-2"]],
      ["x86_64-containerd-distro-qemu", ["distro"]],
      ["x86_64-containerd-gpu-nvidia", ["gpu"]],
      ["x86_64-crio-sev-sev-es-sev-snp", ["snp"]],
    ]);
    expect(pool("x86_64-crio-sev-sev-es-sev-snp")?.overrides.shims).toContain("qemu-snp");
    expect(pool("x86_64-containerd-gpu-nvidia")?.overrides.shims).toContain("qemu-nvidia-gpu");
  });

  it("the GPU node's values stay its pool's: on no other node, and not in what every node shares", () => {
    // Every node of the GPU pool decided them alike: nothing to pin there either.
    for (const p of report.pools) expect(p.overrides.config).toEqual({});
    expect(report.overrides.config).toEqual({});
    const mixed = buildReport([...FLEET, nodeWith("gpu-2", { ...FLEET[3]?.summary, ruled: {} })], []);
    const gpu = mixed.pools.find((p) => p.id === "x86_64-containerd-gpu-nvidia");
    expect(Object.keys(gpu?.overrides.config.qemu ?? {}).sort()).toEqual([
      "hypervisor.qemu.hot_plug_vfio",
      "hypervisor.qemu.pcie_root_port",
    ]);
    expect(mixed.pools.find((p) => p.id === "x86_64-containerd")?.overrides.config).toEqual({});
    expect(mixed.overrides.config).toEqual({});
    expect(mixed.overrides.notes).toContain(
      "values some nodes decided differently are pinned in the pools' files, not here",
    );
  });

  it("the default is kata-deploy 4.1's, qemu-runtime-rs, where a pool's nodes can all run it", () => {
    for (const p of report.pools) expect(p.overrides.defaultShim, p.id).toBe("qemu-runtime-rs");
    expect(report.overrides.defaultShim).toBe("qemu-runtime-rs");
    const without = buildReport([nodeWith("a", { shims: ["clh", "qemu"], defaultShim: "qemu" })], []);
    expect(without.pools[0]?.overrides.defaultShim).toBe("qemu");
  });

  it("what every node shares: the shims all can run, and no more", () => {
    expect(report.overrides.shims).toEqual(["qemu", "qemu-runtime-rs"]);
    expect(report.overrides.notes).toContain("qemu-snp left out: only 1 of 5 nodes can run it");
  });

  it("each pool's term selects it and no other: its architecture, and each dimension where pools differ", () => {
    expect(pool("x86_64-containerd-gpu-nvidia")?.selector.matchExpressions).toEqual([
      { key: "kubernetes.io/arch", operator: "In", values: ["amd64"] },
      { key: "kata.feature.node.kubernetes.io/runtime", operator: "In", values: ["containerd"] },
      { key: "kata.feature.node.kubernetes.io/confidential.sev", operator: "DoesNotExist" },
      { key: "kata.feature.node.kubernetes.io/confidential.sev-es", operator: "DoesNotExist" },
      { key: "kata.feature.node.kubernetes.io/confidential.sev-snp", operator: "DoesNotExist" },
      { key: "kata.feature.node.kubernetes.io/gpu.nvidia", operator: "In", values: ["true"] },
      { key: "kata.feature.node.kubernetes.io/distro.qemu", operator: "DoesNotExist" },
    ]);
    // The GPU label is one name wherever it is made: NFD's rule (manifests) and the feature file.
    const rule = nodeFeatureRule(null) as {
      spec: { rules: Array<{ name: string; labels: Record<string, string> }> };
    };
    expect(Object.keys(rule.spec.rules.find((r) => r.name === "nvidia.gpu")?.labels ?? {})).toEqual([
      "kata.feature.node.kubernetes.io/gpu.nvidia",
    ]);
    expect(nfdFeatureFile({ ...SUMMARY, gpus: ["nvidia"] }, "test")).toContain(
      "\nkata.feature.node.kubernetes.io/gpu.nvidia=true\n",
    );
    // A cluster of one kind of node: its architecture alone.
    expect(buildReport([nodeWith("a", {}), nodeWith("b", {})], []).pools[0]?.selector).toEqual({
      matchExpressions: [{ key: "kubernetes.io/arch", operator: "In", values: ["amd64"] }],
    });
  });

  it("a pool with no runtime, or no architecture, is selected by what its nodes lack: no other pool's node matches", () => {
    const nodes = [
      nodeWith("plain", {}),
      nodeWith("crio", { runtime: { kind: "crio", version: "1.30.3" } }),
      nodeWith("bare", { runtime: { kind: null, version: null } }),
      nodeWith("arm", { arch: "aarch64" }),
      nodeWith("odd", { arch: null }),
    ];
    const fleet = buildReport(nodes, []);
    const terms = Object.fromEntries(fleet.pools.map((p) => [p.id, p.selector.matchExpressions]));
    expect(terms["x86_64-no-runtime"]).toEqual([
      { key: "kubernetes.io/arch", operator: "In", values: ["amd64"] },
      { key: "kata.feature.node.kubernetes.io/runtime", operator: "DoesNotExist" },
    ]);
    // Every node has kubernetes.io/arch: the one whose facts name none is not any other pool's.
    expect(terms["unknown-arch-containerd"]).toEqual([
      { key: "kubernetes.io/arch", operator: "NotIn", values: ["amd64", "arm64"] },
      { key: "kata.feature.node.kubernetes.io/runtime", operator: "In", values: ["containerd"] },
    ]);
    // A node's labels (its feature file's, and the kubelet's arch) match its own pool's term only.
    const KUBE: Record<string, string> = { x86_64: "amd64", aarch64: "arm64" };
    const labelsOf = (summary: NodeSummary) => {
      const lines = nfdFeatureFile(summary, "test").split("\n");
      const labels = new Map(
        lines.filter((l) => l.includes("=")).map((l) => l.split("=") as [string, string]),
      );
      labels.set(
        "kubernetes.io/arch",
        summary.arch === null ? "riscv64" : (KUBE[summary.arch] ?? summary.arch),
      );
      return labels;
    };
    const selects = (term: Requirement[], labels: Map<string, string>) =>
      term.every((r) =>
        r.operator === "DoesNotExist"
          ? !labels.has(r.key)
          : (r.values ?? []).includes(labels.get(r.key) ?? "") === (r.operator === "In"),
      );
    for (const p of fleet.pools)
      expect(
        nodes.filter((n) => selects(p.selector.matchExpressions, labelsOf(n.summary))).map((n) => n.name),
      ).toEqual(p.nodes);
  });

  it("each pool's preflight errors and warnings, with what they say and on which nodes", () => {
    // The GPU node's error stops its install: it runs no shim until it is fixed, and is counted so.
    expect(report.shimCounts).toEqual({ clh: 3, qemu: 4, "qemu-runtime-rs": 4, "qemu-snp": 1 });
    expect(report.blockedShimCounts).toEqual({ clh: 1, qemu: 1, "qemu-nvidia-gpu": 1, "qemu-runtime-rs": 1 });
    expect(pool("x86_64-containerd-gpu-nvidia")?.checks).toEqual([
      {
        id: "nvidia-driver",
        severity: "error",
        message: "the GPU 0000:41:00.0 is bound to nvidia, not vfio-pci",
        nodes: ["gpu"],
      },
    ]);
    expect(pool("x86_64-containerd")?.checks).toEqual([]);
    // An earlier kata-install's summary names the check only.
    const old = buildReport([nodeWith("o", { failed: ["kvm"] })], []);
    expect(old.pools[0]?.checks).toEqual([
      { id: "kvm", severity: "unknown", message: "(not published)", nodes: ["o"] },
    ]);
  });
});

describe("versions, by what they are the version of", () => {
  it("containerd's versions compared with containerd's, CRI-O's with CRI-O's", () => {
    const facts = (kind: string, version: string) => ({
      facts: { "runtime.kind": kind, "runtime.version": version },
    });
    const report = buildReport(
      [
        nodeWith("a", facts("containerd", "1.7.20")),
        nodeWith("b", facts("containerd", "1.7.20")),
        nodeWith("c", facts("containerd", "2.0.4")),
        nodeWith("d", facts("crio", "1.30.3")),
        nodeWith("e", facts("crio", "1.30.3")),
      ],
      [],
    );
    const fields = Object.fromEntries(report.disagreements.map((d) => [d.field, d]));
    expect(fields["runtime.version (containerd)"]).toEqual({
      field: "runtime.version (containerd)",
      majority: { value: "1.7.20", nodes: 2 },
      others: [{ value: "2.0.4", nodes: ["c"] }],
    });
    // Every CRI-O node agrees: nothing to show for them, and no "runtime.version" mixing the two.
    expect(fields["runtime.version (crio)"]).toBeUndefined();
    expect(fields["runtime.version"]).toBeUndefined();
  });
});
