// `kata-install report`: a cluster's saved facts (or its nodes' annotations) compared on what
// changes a decision, each kind of node decided once, and an overrides file that makes them alike.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SUMMARY_ANNOTATION } from "../../src/kube/node-labels.js";
import { runCli, runCliAsync } from "../helpers/cli.js";
import { containerd2, editFacts, factsDir, withoutVirtiofs } from "../helpers/cluster.js";
import { node, startFakeKube } from "../helpers/kube-api.js";
import { amdSnpCrio, arm64Containerd20, gpuDistroQemuK3s, intelContainerd16 } from "../helpers/nodes.js";
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

  it("decides each kind of node once, and lists what it could not read (exit 1: the report is partial)", () => {
    const run = report("--json");
    expect(run.status, run.stderr).toBe(1);
    expect(run.stderr).toBe(
      `kata-install: 2 of 32 file(s) in ${dir} could not be read, and are left out (listed in the report)\n`,
    );
    const doc = JSON.parse(run.stdout);
    expect(doc.nodes).toHaveLength(30);
    // Two kinds: the 29 alike despite their noise (the host kernel's virtio-fs decides nothing:
    // virtiofsd and the guest serve it), and the one on containerd 2.
    expect(doc.decisions).toBe(2);
    expect(doc.skipped.map((s: { source: string }) => path.basename(s.source))).toEqual([
      "broken.json",
      "old.json",
    ]);
    expect(doc.skipped[1].reason).toBe("schemaVersion 0: not a facts document of schema version 1");
  });

  it("says what it left out of a file, and why, once: each problem of a document on its own line", () => {
    const bad = path.join(dir, "..", `${path.basename(dir)}-bad`);
    made.push(bad);
    fs.cpSync(dir, bad, { recursive: true });
    editFacts(bad, "n0001", (d) => {
      (d.cpu as Record<string, unknown>).vendor = 5;
      d.kvm = "yes";
    });
    editFacts(bad, "n0002", (d) => {
      delete d.kernel;
    });
    fs.writeFileSync(path.join(bad, "other.json"), JSON.stringify({ hello: 1 }));
    const run = runCli(["report", "--facts-dir", bad]);
    expect(run.status).toBe(1);
    expect(run.stdout).toMatch(/^29 node\(s\), from facts in \S+-bad; 4 left out; 1 read in part\.\n/);
    const file = path.join(bad, "n0001.json");
    expect(run.stdout).toContain(
      `  left out ${file}: not a valid facts document:\n      - cpu.vendor: Invalid input: expected string, received number\n      - kvm: Invalid input: expected object, received string\n`,
    );
    expect(run.stdout).not.toContain(`${file}: ${file}`);
    expect(run.stdout).toContain(
      `  left out ${path.join(bad, "other.json")}: no schemaVersion: not a saved \`facts --json\` document\n`,
    );
    // A document without a source is read, with what it lacks taken as unknown: said, not silent.
    expect(run.stdout).toContain(
      `  read in part ${path.join(bad, "n0002.json")}: no kernel facts in it (saved by an earlier kata-install, or cut): taken as unknown\n`,
    );
    expect(JSON.parse(runCli(["report", "--facts-dir", bad, "--json"]).stdout).partial).toEqual([
      { source: path.join(bad, "n0002.json"), reason: expect.stringMatching(/^no kernel facts in it/) },
    ]);
  });

  it("names the nodes that differ from the majority on what changes a decision, and nothing else", () => {
    const doc = JSON.parse(report("--json").stdout);
    const fields = Object.fromEntries(
      doc.disagreements.map((d: { field: string; majority: unknown; others: unknown }) => [d.field, d]),
    );
    // Compared on the facts the rules read, by path (the noise of each node is in none of them);
    // the host kernel's virtio-fs is still shown where nodes differ, though it changes no shim.
    expect(Object.keys(fields).sort()).toEqual([
      "kernel.modules.virtiofs.state",
      "runtime.version (containerd)",
    ]);
    expect(fields["kernel.modules.virtiofs.state"]).toEqual({
      field: "kernel.modules.virtiofs.state",
      majority: { value: "available", nodes: 28 },
      others: [{ value: "missing", nodes: ["n0003", "n0017"] }],
    });
    expect(fields["runtime.version (containerd)"].others).toEqual([{ value: "2.0.4", nodes: ["n0020"] }]);
    const n3 = doc.nodes.find((n: { name: string }) => n.name === "n0003");
    expect(n3.shims).toContain("clh");
    expect(doc.shimCounts.clh).toBe(30);
  });

  it("emits an overrides file that, given to every node, makes them decide alike", () => {
    const file = path.join(dir, "..", `${path.basename(dir)}-uniform.toml`);
    made.push(file, file.replace(/\.toml$/, ".x86_64-containerd.toml"));
    const run = report("--emit-overrides", file);
    expect(run.status, run.stderr).toBe(1); // broken.json and old.json
    expect(fs.existsSync(file)).toBe(true);
    // One pool (every node an Intel containerd node): its file beside the one for every node.
    expect(run.stdout).toContain(
      `Written: ${file}\nWritten: ${file.replace(/\.toml$/, ".x86_64-containerd.toml")}\n`,
    );
    const text = fs.readFileSync(file, "utf8");
    expect(text).toContain('shims = ["clh", "clh-runtime-rs", "dragonball", "qemu", "qemu-runtime-rs"]');
    // kata-deploy 4.1's default, which every node can run (the nodes themselves would pick qemu).
    expect(text).toContain('default_shim = "qemu-runtime-rs"');
    // The node without the host kernel's virtiofs pins nothing on the others (it used to pin 9p).
    expect(text).not.toContain("virtio-9p");
    expect(text).not.toContain("[config.qemu]");
    const after = JSON.parse(report("--overrides", file, "--json").stdout);
    const shimSets = new Set(after.nodes.map((n: { shims: string[] }) => n.shims.join(",")));
    expect([...shimSets]).toEqual(["clh,clh-runtime-rs,dragonball,qemu,qemu-runtime-rs"]);
    expect(after.overrides.config).toEqual({}); // nothing left that differs
    expect(after.disagreements.map((d: { field: string }) => d.field)).not.toContain("shims");
    // The report says whose decisions these are: the nodes' facts with the file given.
    expect(report("--overrides", file).stdout).toMatch(
      new RegExp(
        `^30 node\\(s\\), from facts in ${dir}, decided with the overrides in ${file}; 2 left out\\.\n`,
      ),
    );
  });

  it("prints a readable report", () => {
    const run = report();
    expect(run.stdout).toContain(`30 node(s), from facts in ${dir}; 2 left out.`);
    expect(run.stdout).toContain("  clh              every node\n");
    expect(run.stdout).toContain(
      "  kernel.modules.virtiofs.state: available on 28 node(s); but\n    missing on 2: n0003, n0017\n",
    );
  });

  it("needs exactly one source, and says so", () => {
    expect(runCli(["report"]).stderr).toContain("give --facts-dir DIR");
    expect(runCli(["report", "--facts-dir", dir, "--kubeconfig", "/k"]).stderr).toContain(
      "--facts-dir and --kubeconfig are two sources of nodes: give one",
    );
    expect(runCli(["report", "--facts-dir", "/nonexistent"]).stderr).toContain(
      "--facts-dir /nonexistent: no such directory",
    );
    expect(runCli(["report", "--facts-dir", path.join(dir, "broken.json")]).stderr).toContain(
      "broken.json: not a directory",
    );
  });

  it("no node read is an error with each file's reason; none there, one saying what to put there", () => {
    const empty = fs.mkdtempSync(path.join(path.dirname(dir), "kata-install-empty-facts-"));
    made.push(empty);
    const none = runCli(["report", "--facts-dir", empty]);
    expect(none.status).toBe(1);
    expect(none.stdout).toBe("");
    expect(none.stderr).toBe(
      `kata-install: facts in ${empty}: no node to report on (no <node>.json file there: save each node's \`kata-install facts --json\` as one)\n`,
    );
    fs.writeFileSync(path.join(empty, "cut.json"), '{"schemaVersion": 1, "arch"');
    const unread = runCli(["report", "--facts-dir", empty]);
    expect(unread.status).toBe(1);
    expect(unread.stderr).toBe(
      `kata-install: facts in ${empty}: no node's facts could be read:\n  ${path.join(empty, "cut.json")}: not JSON (Unexpected end of JSON input): not a saved \`facts --json\` document\n`,
    );
    // A file given by mistake is not quoted; a link is not followed (it may lead anywhere).
    fs.rmSync(path.join(empty, "cut.json"));
    fs.writeFileSync(path.join(empty, "secret.json"), "password=hunter2\n");
    const secret = path.join(path.dirname(dir), `${path.basename(empty)}-outside.json`);
    made.push(secret);
    fs.copyFileSync(path.join(dir, fs.readdirSync(dir).find((f) => f.endsWith(".json")) ?? ""), secret);
    fs.symlinkSync(secret, path.join(empty, "linked.json"));
    const refused = runCli(["report", "--facts-dir", empty]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).not.toContain("hunter2");
    expect(refused.stderr).toContain(
      `${path.join(empty, "secret.json")}: not JSON (an unexpected character): not a saved \`facts --json\` document\n`,
    );
    expect(refused.stderr).toContain(
      `${path.join(empty, "linked.json")}: a symbolic link: only the directory's regular files are read\n`,
    );
  });

  it("--emit-overrides makes the directory it writes in", () => {
    const pools = path.join(path.dirname(dir), `${path.basename(dir)}-pools`);
    made.push(pools);
    const run = report("--emit-overrides", path.join(pools, "overrides.toml"));
    expect(run.stdout).toContain(`Written: ${path.join(pools, "overrides.toml")}\n`);
    expect(fs.readdirSync(pools).sort()).toEqual(["overrides.toml", "overrides.x86_64-containerd.toml"]);
  });
});

describe("kata-install report --facts-dir, with what the full path must read itself", async () => {
  // A mixed fleet, with an earlier kata-install's document (a source missing, the runtime without
  // its family), one not JSON, one of a newer schema.
  const dir = await factsDir(40, { 6: [containerd2], 9: [withoutVirtiofs] }, [
    intelContainerd16,
    amdSnpCrio,
    gpuDistroQemuK3s,
    arm64Containerd20,
  ]);
  made.push(dir);
  const edit = (name: string, change: (document: Record<string, unknown>) => void) =>
    editFacts(dir, name, change);
  edit("n0005", (d) => {
    delete d.iommu;
    delete (d.runtime as Record<string, unknown>).family;
  });
  edit("n0013", (d) => {
    d.schemaVersion = 99;
  });
  fs.writeFileSync(path.join(dir, "n0021.json"), "{ not json");

  it("reads the rest, says what each left-out file lacks, and exits 1", () => {
    const one = runCli(["report", "--facts-dir", dir, "--json"]);
    expect(one.status, one.stderr).toBe(1); // n0013 and n0021, left out
    const doc = JSON.parse(one.stdout);
    expect(doc.nodes).toHaveLength(38);
    expect(doc.skipped.map((s: { source: string }) => path.basename(s.source))).toEqual([
      "n0013.json",
      "n0021.json",
    ]);
    // The earlier kata-install's document is read, what it lacks said.
    expect(doc.partial).toEqual([
      { source: path.join(dir, "n0005.json"), reason: expect.stringMatching(/^no iommu facts in it/) },
    ]);
  });

  it("a run refused on its options ends at once, saying why", () => {
    for (const refused of [
      ["--kubeconfig", "/nowhere"],
      ["--overrides", path.join(dir, "nowhere.toml")],
    ]) {
      const run = runCli(["report", "--facts-dir", dir, ...refused]);
      expect(run.status, run.stderr).toBe(1);
      expect(run.stderr).toMatch(/two sources of nodes: give one|overrides file cannot be read/);
    }
  });
});

describe("kata-install report --facts-dir, a mixed fleet", async () => {
  // Intel nodes on containerd 1.6 (one on 2.0), AMD SEV-SNP nodes on CRI-O, NVIDIA GPU nodes on k3s,
  // aarch64 nodes on containerd 2.0.
  const dir = await factsDir(12, { 6: [containerd2] }, [
    intelContainerd16,
    amdSnpCrio,
    gpuDistroQemuK3s,
    arm64Containerd20,
  ]);
  made.push(dir);

  it("a pool per kind of plan, each with its shims, its nodes' preflight errors, and its file with the term that selects it", () => {
    const file = path.join(dir, "..", `${path.basename(dir)}-pools.toml`);
    const run = runCli(["report", "--facts-dir", dir, "--emit-overrides", file]);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain(
      "  x86_64-k3s-gpu-nvidia: 3 node(s): n0002, n0006, n0010\n    x86_64, k3s, no TEE, GPU nvidia, Kata's qemu pulled\n",
    );
    // The GPU nodes' refusal, in the human output, under their pool.
    expect(run.stdout).toMatch(
      /x86_64-k3s-gpu-nvidia[\s\S]*?preflight: 1 error\(s\), 0 warning\(s\)\n {6}\[ERROR\] runtime-drop-in-dir on every node here: /,
    );
    // A node whose preflight has an error runs nothing until it is fixed: not counted as able to.
    expect(run.stdout).toMatch(
      /\n {2}qemu-nvidia-gpu +0 of 12 \(3 more once their preflight errors are fixed\)\n/,
    );
    expect(run.stdout).toMatch(/\n {2}qemu +9 of 12 \(3 more once their preflight errors are fixed\)\n/);
    // Versions compared within their kind: containerd's, never with CRI-O's or k3s's.
    expect(run.stdout).toContain("  runtime.version (containerd): ");
    expect(run.stdout).not.toMatch(/^ {2}runtime\.version: /m);
    const poolFiles = fs
      .readdirSync(path.dirname(file))
      .filter((f) => f.startsWith(path.basename(file, ".toml")) && f !== path.basename(file));
    made.push(file, ...poolFiles.map((f) => path.join(path.dirname(file), f)));
    expect(poolFiles.sort()).toEqual(
      [
        "aarch64-containerd",
        "x86_64-containerd",
        "x86_64-crio-sev-sev-es-sev-snp",
        "x86_64-k3s-gpu-nvidia",
      ].map((p) => `${path.basename(file, ".toml")}.${p}.toml`),
    );
    const snp = fs.readFileSync(file.replace(/\.toml$/, ".x86_64-crio-sev-sev-es-sev-snp.toml"), "utf8");
    expect(snp).toContain('"qemu-snp"');
    expect(snp).toContain(
      '#   - {key: kata.feature.node.kubernetes.io/confidential.sev-snp, operator: In, values: ["true"]}',
    );
    expect(snp).toContain(
      '#   - {key: kata.feature.node.kubernetes.io/runtime, operator: In, values: ["crio"]}',
    );
    // What every node shares does not take the SNP or GPU shims from their pools.
    const all = fs.readFileSync(file, "utf8");
    expect(all).not.toContain('qemu-snp"');
    expect(all).toContain("# qemu-nvidia-gpu left out: only 3 of 12 nodes can run it");
    // The same, as JSON: the pools, their checks by severity.
    const doc = JSON.parse(runCli(["report", "--facts-dir", dir, "--json"]).stdout);
    const gpu = doc.pools.find((p: { id: string }) => p.id === "x86_64-k3s-gpu-nvidia");
    expect(gpu.checks.map((c: { severity: string; id: string }) => [c.severity, c.id])).toEqual([
      ["error", "runtime-drop-in-dir"],
    ]);
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

describe("report --emit-overrides, on facts whose names are not names", async () => {
  it.each([
    [
      "a newline that would write live [config.all] keys",
      'x86_64\n[config.all]\n"runtime.enable_debug" = true',
    ],
    ["a slash that would write outside the directory", "../../x86_64"],
  ])("%s: refused, naming the node and the value; nothing written", async (_, arch) => {
    const dir = await factsDir(3, { 1: [(node) => Object.assign(node, { arch })] });
    made.push(dir);
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-pools-"));
    made.push(out);
    const run = runCli(["report", "--facts-dir", dir, "--emit-overrides", path.join(out, "overrides.toml")]);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`node n0001: its facts give arch ${JSON.stringify(arch)}, which is no name`);
    expect(fs.readdirSync(out)).toEqual([]);
  });
});
