// `kata-install report`: a cluster's saved facts (or its nodes' annotations) compared on what
// changes a decision, each kind of node decided once, and an overrides file that makes them alike.
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SUMMARY_ANNOTATION } from "../../src/kube/node-labels.js";
import { runCli, runCliAsync } from "../helpers/cli.js";
import { containerd2, factsDir, withoutVirtiofs } from "../helpers/cluster.js";
import { node, startFakeKube } from "../helpers/kube-api.js";
import { SUMMARY } from "../helpers/summary.js";

const made: string[] = [];
afterAll(() => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});

describe("kata-install report --facts-dir", async () => {
  const dir = await factsDir(30, { 3: [withoutVirtiofs], 17: [withoutVirtiofs], 20: [containerd2] });
  made.push(dir);
  fs.writeFileSync(path.join(dir, "broken.json"), "{ not json");
  fs.writeFileSync(path.join(dir, "old.json"), JSON.stringify({ schemaVersion: 0 }));
  const report = (...args: string[]) => runCli(["report", "--facts-dir", dir, ...args]);

  it("decides each kind of node once, and lists what it could not read", () => {
    const run = report("--json");
    expect(run.status, run.stderr).toBe(0);
    const doc = JSON.parse(run.stdout);
    expect(doc.nodes).toHaveLength(30);
    // Two kinds: the 29 alike despite their noise (the host kernel's virtio-fs decides nothing:
    // virtiofsd and the guest serve it), and the one on containerd 2.
    expect(doc.decisions).toBe(2);
    expect(doc.skipped.map((s: { source: string }) => path.basename(s.source))).toEqual([
      "broken.json",
      "old.json",
    ]);
    expect(doc.skipped[1].reason).toBe("not a facts document of schema version 1");
  });

  it("names the nodes that differ from the majority on what changes a decision, and nothing else", () => {
    const doc = JSON.parse(report("--json").stdout);
    const fields = Object.fromEntries(
      doc.disagreements.map((d: { field: string; majority: unknown; others: unknown }) => [d.field, d]),
    );
    // Compared on the facts the rules read, by path (the noise of each node is in none of them);
    // the host kernel's virtio-fs is still shown where nodes differ, though it changes no shim.
    expect(Object.keys(fields).sort()).toEqual(["kernel.modules.virtiofs.state", "runtime.version"]);
    expect(fields["kernel.modules.virtiofs.state"]).toEqual({
      field: "kernel.modules.virtiofs.state",
      majority: { value: "available", nodes: 28 },
      others: [{ value: "missing", nodes: ["n0003", "n0017"] }],
    });
    expect(fields["runtime.version"].others).toEqual([{ value: "2.0.4", nodes: ["n0020"] }]);
    const n3 = doc.nodes.find((n: { name: string }) => n.name === "n0003");
    expect(n3.shims).toContain("clh");
    expect(doc.shimCounts.clh).toBe(30);
  });

  it("emits an overrides file that, given to every node, makes them decide alike", () => {
    const file = path.join(dir, "..", `${path.basename(dir)}-uniform.toml`);
    made.push(file);
    const run = report("--emit-overrides", file);
    expect(run.status, run.stderr).toBe(0);
    const text = fs.readFileSync(file, "utf8");
    expect(text).toContain('shims = ["clh", "clh-runtime-rs", "dragonball", "qemu", "qemu-runtime-rs"]');
    // The node without the host kernel's virtiofs pins nothing on the others (it used to pin 9p).
    expect(text).not.toContain("virtio-9p");
    expect(text).not.toContain("[config.qemu]");
    const after = JSON.parse(report("--overrides", file, "--json").stdout);
    const shimSets = new Set(after.nodes.map((n: { shims: string[] }) => n.shims.join(",")));
    expect([...shimSets]).toEqual(["clh,clh-runtime-rs,dragonball,qemu,qemu-runtime-rs"]);
    expect(after.overrides.config).toEqual({}); // nothing left that differs
    expect(after.disagreements.map((d: { field: string }) => d.field)).not.toContain("shims");
  });

  it("prints a readable report", () => {
    const run = report();
    expect(run.stdout).toContain("30 node(s), 2 left out.");
    expect(run.stdout).toContain("  clh              every node\n");
    expect(run.stdout).toContain(
      "  kernel.modules.virtiofs.state: available on 28 node(s); but\n    missing on 2: n0003, n0017\n",
    );
  });

  it("needs exactly one source, and says so", () => {
    expect(runCli(["report"]).stderr).toContain("give --facts-dir DIR");
    expect(runCli(["report", "--facts-dir", "/nonexistent"]).stderr).toContain(
      "--facts-dir /nonexistent: not a directory",
    );
  });
});

describe("kata-install report --kubeconfig", () => {
  it("reads the summaries nodes published, and names the nodes without one", async () => {
    const kube = await startFakeKube();
    try {
      const odd = { ...SUMMARY, modules: { ...SUMMARY.modules, vhost_vsock: false }, shims: ["qemu"] };
      for (const [name, summary] of [
        ["a", SUMMARY],
        ["b", SUMMARY],
        ["c", odd],
      ] as const) {
        const n = node(name);
        (n.metadata as { annotations: Record<string, string> }).annotations[SUMMARY_ANNOTATION] =
          JSON.stringify(summary);
        kube.nodes.set(name, n);
      }
      kube.nodes.set("d", node("d"));
      const run = await runCliAsync(["report", "--kubeconfig", kube.kubeconfig, "--json"]);
      expect(run.status, run.stderr).toBe(0);
      const doc = JSON.parse(run.stdout);
      expect(doc.nodes.map((n: { name: string }) => n.name)).toEqual(["a", "b", "c"]);
      expect(doc.skipped).toEqual([
        {
          source: "node d",
          reason: `no ${SUMMARY_ANNOTATION} annotation: kata-install has not installed it (yet)`,
        },
      ]);
      expect(
        doc.disagreements.find((d: { field: string }) => d.field === "kernel vhost_vsock").others,
      ).toEqual([{ value: "no", nodes: ["c"] }]);
      expect(doc.overrides.shims).toEqual(["qemu"]);
      // Another install's summaries (MULTI_INSTALL_SUFFIX=ci), read by its suffix, not mixed in.
      const ci = node("e");
      (ci.metadata as { annotations: Record<string, string> }).annotations[`${SUMMARY_ANNOTATION}-ci`] =
        JSON.stringify(odd);
      kube.nodes.set("e", ci);
      const other = JSON.parse(
        (await runCliAsync(["report", "--kubeconfig", kube.kubeconfig, "--install-suffix", "ci", "--json"]))
          .stdout,
      );
      expect(other.nodes.map((n: { name: string }) => n.name)).toEqual(["e"]);
      expect(other.skipped.map((s: { source: string }) => s.source)).toEqual([
        "node a",
        "node b",
        "node c",
        "node d",
      ]);
    } finally {
      await kube.close();
    }
  });
});
