// The container's entrypoint, run as the DaemonSet runs it: kata-deploy's environment, the host at
// HOST_ROOT, a Kubernetes API (a small in-test server) for the node's labels and the DaemonSet.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { instanceLabel, RUNTIME_LABEL, SUMMARY_ANNOTATION } from "../../src/kube/node-labels.js";
import { artifactDir } from "../helpers/artifacts.js";
import { runCliAsync } from "../helpers/cli.js";
import { criStandIn, type StandIn } from "../helpers/cri-stand-in.js";
import { type Running, startEntrypoint } from "../helpers/entrypoint.js";
import { daemonSet, type FakeKube, node, startFakeKube } from "../helpers/kube-api.js";
import { intelContainerd16 } from "../helpers/nodes.js";
import { buildHost, removeTestHosts } from "../helpers/test-host.js";
import { snapshot } from "../helpers/tree.js";

const INSTANCE_MARK = instanceLabel(null);
afterAll(removeTestHosts);
const artifacts = artifactDir();
afterAll(() => fs.rmSync(artifacts, { recursive: true, force: true }));

describe("kata-install entrypoint install, in a cluster", () => {
  let kube: FakeKube;
  let socketServer: StandIn;
  const spec = intelContainerd16();
  spec.commands = { ...spec.commands, "/usr/bin/systemctl": "exit 0" };
  spec.files = { ...spec.files, "/run/lock/.keep": "" };
  const host = buildHost(spec);
  let original: Record<string, string>;
  beforeAll(async () => {
    kube = await startFakeKube();
    kube.nodes.set("n1", node("n1", { team: "infra" }));
    kube.daemonsets.set("kube-system/kata-deploy", daemonSet("kube-system", "kata-deploy"));
    const socket = path.join(host.root, "run/containerd/containerd.sock");
    fs.rmSync(socket);
    socketServer = await criStandIn(socket);
    original = snapshot(host.root);
  });
  afterAll(async () => {
    socketServer.close();
    await kube.close();
  });

  /** Start the entrypoint and wait until it says it is installed (or exits). */
  const start = (kubeconfig = kube.kubeconfig): Promise<Running> =>
    startEntrypoint({
      NODE_NAME: "n1",
      POD_NAMESPACE: "kube-system",
      DAEMONSET_NAME: "kata-deploy",
      KUBECONFIG: kubeconfig,
      HOST_ROOT: host.root,
      HOST_EXEC: "root-exec",
      ARTIFACTS: `dir:${artifacts}`,
      SHIMS_X86_64: "qemu clh",
      DEFAULT_SHIM_X86_64: "qemu",
    });
  /** Node n1's metadata, as the API server holds it now. */
  const meta = () =>
    (
      kube.nodes.get("n1") as {
        metadata: { labels: Record<string, string>; annotations: Record<string, string> };
      }
    ).metadata;
  const labels = () => meta().labels;

  it("labels the node false, prints the plan it applies, installs, labels it with its shims, and is ready", async () => {
    const run = await start();
    try {
      const patches = kube.requests.filter((r) => r.method === "PATCH").map((r) => r.body);
      expect(patches[0]).toEqual({
        metadata: { labels: { [RUNTIME_LABEL]: "false", [INSTANCE_MARK]: "false" } },
      });
      expect(run.stdout()).toContain("# modify /etc/containerd/config.toml");
      expect(run.stdout()).toContain("Files: 6 written, 0 removed.");
      expect(labels()).toEqual({
        team: "infra",
        [RUNTIME_LABEL]: "true",
        [INSTANCE_MARK]: "true",
        "katacontainers.io/shim.clh": "true",
        "katacontainers.io/shim.qemu": "true",
      });
      const annotations = meta().annotations;
      expect(JSON.parse(annotations[SUMMARY_ANNOTATION] as string)).toMatchObject({
        shims: ["clh", "qemu"],
        defaultShim: "qemu",
        runtime: { kind: "containerd" },
        sharedFs: { clh: "virtio-fs", qemu: "virtio-fs" },
        hypervisors: ["cloudHypervisor 3.9.0 (kata)", "qemu 3.9.0 (kata)", "virtiofsd 3.9.0 (kata)"],
      });
      const healthz = await fetch(`http://${run.health}/healthz`);
      expect(healthz.status).toBe(200);
      const readyz = await fetch(`http://${run.health}/readyz`);
      expect([readyz.status, await readyz.text()]).toEqual([200, "installed: clh, qemu\n"]);
    } finally {
      run.child.kill("SIGTERM");
      expect(await run.exited).toBe(0);
    }
    // The DaemonSet still selects the node: a restart or a rolling update, so nothing is removed.
    expect(run.stderr()).toContain("DaemonSet kube-system/kata-deploy still selects n1");
    expect(fs.existsSync(path.join(host.root, "opt/kata/.install/journal.json"))).toBe(true);
    expect(labels()[RUNTIME_LABEL]).toBe("true");
  });

  it("restarted, it finds nothing to do; once the DaemonSet no longer selects the node, SIGTERM cleans up", async () => {
    const run = await start();
    expect(run.stdout()).toContain("Nothing to do: the node is as the plan wants it.");
    kube.daemonsets.set("kube-system/kata-deploy", daemonSet("kube-system", "kata-deploy", { kata: "yes" }));
    run.child.kill("SIGTERM");
    expect(await run.exited).toBe(0);
    expect(run.stderr()).toContain(
      "no longer selects n1 (its nodeSelector wants kata=yes, the node has no such label): cleaning up.",
    );
    expect(snapshot(host.root)).toEqual(original);
    expect(labels()).toEqual({ team: "infra" });
  });

  it("SIGTERM when the API server cannot be asked: Kata stays, and it says how to remove it", async () => {
    const other = await startFakeKube();
    other.nodes.set("n1", node("n1"));
    other.daemonsets.set("kube-system/kata-deploy", daemonSet("kube-system", "kata-deploy", { kata: "yes" }));
    const run = await start(other.kubeconfig);
    await other.close();
    run.child.kill("SIGTERM");
    expect(await run.exited).toBe(0);
    expect(run.stderr()).toContain("SIGTERM: cannot ask the API whether the DaemonSet still selects n1");
    expect(run.stderr()).toContain('run "kata-install entrypoint cleanup" to remove it');
    expect(fs.existsSync(path.join(host.root, "opt/kata/.install/journal.json"))).toBe(true);
  });
});

describe("kata-install entrypoint cleanup and reset", () => {
  const spec = intelContainerd16();
  spec.commands = { ...spec.commands, "/usr/bin/systemctl": "exit 0" };
  spec.files = { ...spec.files, "/run/lock/.keep": "" };

  async function cluster(): Promise<{
    kube: FakeKube;
    host: ReturnType<typeof buildHost>;
    env: Record<string, string>;
    done: () => Promise<void>;
  }> {
    const kube = await startFakeKube();
    kube.nodes.set("n1", node("n1", { team: "infra" }));
    const host = buildHost(spec);
    const socket = path.join(host.root, "run/containerd/containerd.sock");
    fs.rmSync(socket);
    const server = await criStandIn(socket);
    const env = {
      NODE_NAME: "n1",
      KUBECONFIG: kube.kubeconfig,
      HOST_ROOT: host.root,
      HOST_EXEC: "root-exec",
    };
    return {
      kube,
      host,
      env,
      done: async () => {
        server.close();
        await kube.close();
      },
    };
  }
  const labelsOf = (kube: FakeKube) =>
    (kube.nodes.get("n1") as { metadata: { labels: Record<string, string> } }).metadata.labels;

  it("cleanup: uninstalls, then takes the labels off", async () => {
    const { kube, host, env, done } = await cluster();
    try {
      const original = snapshot(host.root);
      const installed = await runCliAsync([
        "install",
        "--host-root",
        host.root,
        "--artifacts",
        `dir:${artifacts}`,
      ]);
      expect(installed.status, installed.stderr).toBe(0);
      kube.nodes.set(
        "n1",
        node("n1", {
          team: "infra",
          [RUNTIME_LABEL]: "true",
          [INSTANCE_MARK]: "true",
          "katacontainers.io/shim.qemu": "true",
        }),
      );
      const run = await runCliAsync(["entrypoint", "cleanup"], { env });
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout).toContain("Restored 1 file(s), removed 12, and the artifacts.");
      expect(run.stderr).toContain("Node n1: kata-install's labels and annotation removed.");
      expect(snapshot(host.root)).toEqual(original);
      expect(labelsOf(kube)).toEqual({ team: "infra" });
    } finally {
      await done();
    }
  });

  it("reset: rolls back an install cut short (its switch too), takes the labels off", async () => {
    const { kube, host, env, done } = await cluster();
    try {
      const original = snapshot(host.root);
      const cut = await runCliAsync(
        ["install", "--host-root", host.root, "--artifacts", `dir:${artifacts}`],
        {
          env: { KATA_INSTALL_CRASH_AT: "step:0:after-write" },
        },
      );
      expect(cut.status).toBeNull(); // killed
      kube.nodes.set("n1", node("n1", { team: "infra", [RUNTIME_LABEL]: "false" }));
      const run = await runCliAsync(["entrypoint", "reset"], { env });
      expect(run.status, run.stderr).toBe(0);
      expect(run.stderr).toContain("An install cut short was rolled back.");
      expect(labelsOf(kube)).toEqual({ team: "infra" });
      // The cut-short run is undone whole: its files, and the artifacts it had switched in for
      // them (what an earlier, finished install left would stay).
      expect(snapshot(host.root)).toEqual(original);
      expect(fs.existsSync(path.join(host.root, "opt/kata/current"))).toBe(false);
    } finally {
      await done();
    }
  });
});
