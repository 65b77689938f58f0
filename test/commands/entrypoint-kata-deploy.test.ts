// What kata-deploy's entrypoint does on a node, done the same, against the tests' API server: a
// re-install on a node that serves Kata withdraws no label; the node must report the runtime
// serving the handlers before it is labelled; SIGTERM keeps Kata on a node the DaemonSet still
// selects whatever its taints; cleanup refuses while the DaemonSet wants the node; reset restarts
// the runtime and the kubelet; STARTUP_TAINTS by spaces; K8S_DISTRIBUTION=kubeadm, and a CRI-O node
// never cross-checked.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { instanceLabel, RUNTIME_LABEL } from "../../src/kube/node-labels.js";
import { answeringHost } from "../helpers/answering.js";
import { artifactDir } from "../helpers/artifacts.js";
import { runCliAsync } from "../helpers/cli.js";
import { loggingSystemctl, podEnv, startEntrypoint } from "../helpers/entrypoint.js";
import { daemonSet, type FakeKube, node, startFakeKube } from "../helpers/kube-api.js";
import { amdSnpCrio, intelContainerd16 } from "../helpers/nodes.js";
import { removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);
const artifacts = artifactDir();
afterAll(() => fs.rmSync(artifacts, { recursive: true, force: true }));

const MARK = instanceLabel(null);
const served = (...handlers: string[]) => ({
  status: {
    conditions: [{ type: "Ready", status: "True" }],
    runtimeHandlers: handlers.map((name) => ({ name })),
  },
});

async function cluster(extra: Record<string, unknown> = {}) {
  const kube = await startFakeKube();
  kube.nodes.set("n1", node("n1", { team: "infra" }, extra));
  kube.daemonsets.set("kube-system/kata-deploy", daemonSet("kube-system", "kata-deploy"));
  return kube;
}
const labelsOf = (kube: FakeKube) =>
  (kube.nodes.get("n1") as { metadata: { labels: Record<string, string> } }).metadata.labels;
/** The label changes the entrypoint asked for (merge patches), after the `from`th request. */
const labelPatches = (kube: FakeKube, from = 0) =>
  kube.requests
    .slice(from)
    .filter((r) => r.method === "PATCH")
    .map((r) => (r.body as { metadata?: { labels?: Record<string, string | null> } }).metadata?.labels ?? {});

const envFor = (kube: FakeKube, root: string, more: Record<string, string> = {}) =>
  podEnv(kube.kubeconfig, root, { ARTIFACTS: `dir:${artifacts}`, HANDLER_WAIT_SECONDS: "5", ...more });

/** A test host whose systemctl writes what it is asked to, and the file it writes to. */
async function loggingHost() {
  const log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-systemctl-")), "calls");
  const spec = intelContainerd16();
  spec.commands = { ...spec.commands, "/usr/bin/systemctl": loggingSystemctl(log) };
  return { host: await answeringHost(spec), log };
}

describe("a node that serves Kata, re-installed (a rolling update that changes its shims)", () => {
  it("no label is withdrawn first; the node's handlers are waited for; a maintenance taint keeps Kata on SIGTERM", async () => {
    const host = await answeringHost(intelContainerd16());
    const kube = await cluster(served("runc", "kata-qemu", "kata-clh"));
    try {
      // The first install, with the startup taints as a node provisioner writes them.
      (kube.nodes.get("n1") as { spec: object }).spec = {
        taints: [
          { key: "kata.io/not-ready", effect: "NoSchedule" },
          { key: "gpu", effect: "NoExecute" },
          { key: "dedicated", value: "db", effect: "NoSchedule" },
        ],
      };
      const first = await startEntrypoint(
        envFor(kube, host.root, {
          SHIMS_X86_64: "qemu clh",
          STARTUP_TAINTS: "kata.io/not-ready : NoSchedule gpu",
          K8S_DISTRIBUTION: "kubeadm",
        }),
      );
      expect(first.stderr()).toContain("Node n1: containerd serves kata-clh, kata-qemu.");
      expect(first.stderr()).toContain(
        "Node n1: startup taint(s) kata.io/not-ready:NoSchedule, gpu:NoExecute lifted.",
      );
      expect(first.stderr()).not.toContain("K8S_DISTRIBUTION=kubeadm is not one of");
      expect(labelsOf(kube)).toEqual({
        team: "infra",
        [RUNTIME_LABEL]: "true",
        [MARK]: "true",
        "katacontainers.io/shim.clh": "true",
        "katacontainers.io/shim.qemu": "true",
      });
      // A maintenance taint on the node, then the pod is restarted: the DaemonSet still selects it.
      (kube.nodes.get("n1") as { spec: { taints: unknown[] } }).spec.taints.push({
        key: "maintenance",
        effect: "NoSchedule",
      });
      first.child.kill("SIGTERM");
      expect(await first.exited).toBe(0);
      expect(first.stderr()).toContain("SIGTERM: DaemonSet kube-system/kata-deploy still selects n1");
      expect(fs.existsSync(path.join(host.root, "opt/kata/.install/journal.json"))).toBe(true);

      // The rolling update: a new pod, one shim fewer. Its runtime is restarted on the new handlers.
      const from = kube.requests.length;
      const second = await startEntrypoint(envFor(kube, host.root, { SHIMS_X86_64: "qemu" }));
      expect(second.stdout()).toContain("Runtime: restarted containerd, and it serves the Kata handlers.");
      expect(second.stderr()).toContain(
        "Node n1: already labelled: its labels stay as they are while installing.",
      );
      // Not one patch took the node out of scheduling on the way: only clh's label went, at the end.
      const patches = labelPatches(kube, from);
      expect(patches).toEqual([
        {
          [RUNTIME_LABEL]: "true",
          [MARK]: "true",
          "katacontainers.io/shim.clh": null,
          "katacontainers.io/shim.qemu": "true",
        },
      ]);
      expect(labelsOf(kube)["katacontainers.io/shim.qemu"]).toBe("true");
      second.child.kill("SIGTERM");
      expect(await second.exited).toBe(0);
    } finally {
      await kube.close();
    }
  });
});

describe("the served-handlers check", () => {
  it("a runtime that never lists the handlers written: the install fails, the node is not labelled kata-runtime=true", async () => {
    const host = await answeringHost(intelContainerd16());
    const kube = await cluster(served("runc"));
    try {
      const run = await runCliAsync(["entrypoint", "install"], {
        env: {
          ...envFor(kube, host.root, { SHIMS_X86_64: "qemu clh", HANDLER_WAIT_SECONDS: "1" }),
          HEALTH_ADDRESS: "127.0.0.1",
          HEALTH_PORT: "0",
        },
      });
      expect(run.status).toBe(1);
      expect(run.stderr).toContain(
        "Node n1: the node reports none of kata-clh, kata-qemu among its runtime handlers (runc) after 1 s: containerd does not serve the configuration written. Not labelled;",
      );
      // Claimed, as a half-installed node is, so a cleanup finds it; no shim advertised.
      expect(labelsOf(kube)).toEqual({ team: "infra", [RUNTIME_LABEL]: "false", [MARK]: "false" });
    } finally {
      await kube.close();
    }
  });
});

describe("cleanup and reset, as kata-deploy's", () => {
  it("cleanup while the DaemonSet still selects the node removes nothing, and says what to do", async () => {
    const host = await answeringHost(intelContainerd16());
    const kube = await cluster();
    try {
      const installed = await runCliAsync([
        "install",
        "--host-root",
        host.root,
        "--artifacts",
        `dir:${artifacts}`,
      ]);
      expect(installed.status, installed.stderr).toBe(0);
      kube.nodes.set("n1", node("n1", { [RUNTIME_LABEL]: "true", [MARK]: "true" }));
      const run = await runCliAsync(["entrypoint", "cleanup"], { env: envFor(kube, host.root) });
      expect(run.status).toBe(0);
      expect(run.stderr).toContain(
        "Nothing removed: DaemonSet kube-system/kata-deploy still selects n1, and its pods would lose Kata.",
      );
      expect(fs.existsSync(path.join(host.root, "opt/kata/.install/journal.json"))).toBe(true);
      expect(labelsOf(kube)).toEqual({ [RUNTIME_LABEL]: "true", [MARK]: "true" });
      expect(kube.requests.filter((r) => r.method === "PATCH")).toEqual([]);
    } finally {
      await kube.close();
    }
  });

  it("reset: labels off, then containerd and the kubelet restarted, and the node waited for until Ready", async () => {
    const { host, log } = await loggingHost();
    const kube = await cluster();
    try {
      kube.nodes.set("n1", node("n1", { [RUNTIME_LABEL]: "false", [MARK]: "false" }));
      const run = await runCliAsync(["entrypoint", "reset"], { env: envFor(kube, host.root) });
      expect(run.status, run.stderr).toBe(0);
      expect(labelsOf(kube)).toEqual({});
      const calls = fs.readFileSync(log, "utf8").trim().split("\n");
      expect(calls.filter((c) => !c.startsWith("is-active"))).toEqual([
        "daemon-reload",
        "restart containerd",
        "restart kubelet",
      ]);
      expect(run.stderr).toContain("Runtime: containerd restarted, and the kubelet.");
      expect(run.stderr).toContain("Node n1: Ready.");
    } finally {
      await kube.close();
    }
  });

  it("reset while another install serves the node: its labels only; nothing is restarted", async () => {
    const { host, log } = await loggingHost();
    const kube = await cluster();
    try {
      const lts = "kata-deploy.katacontainers.io/lts";
      kube.nodes.set("n1", node("n1", { [RUNTIME_LABEL]: "true", [MARK]: "false", [lts]: "true" }));
      const run = await runCliAsync(["entrypoint", "reset"], { env: envFor(kube, host.root) });
      expect(run.status, run.stderr).toBe(0);
      expect(labelsOf(kube)).toEqual({ [RUNTIME_LABEL]: "true", [lts]: "true" });
      expect(run.stderr).toContain(
        "Another install still holds the node: the runtime and the kubelet are not restarted.",
      );
      expect(fs.existsSync(log)).toBe(false);
    } finally {
      await kube.close();
    }
  });
});

describe("K8S_DISTRIBUTION, as kata-deploy holds it", () => {
  it("a CRI-O node is never refused, whatever the distribution says", async () => {
    const host = await answeringHost(amdSnpCrio());
    const kube = await cluster();
    try {
      const run = await runCliAsync(["entrypoint", "install"], {
        env: {
          ...envFor(kube, host.root, { K8S_DISTRIBUTION: "k3s", ARTIFACTS: "" }),
          HEALTH_ADDRESS: "127.0.0.1",
          HEALTH_PORT: "0",
        },
      });
      expect(run.stderr).not.toContain("Refused:");
      // It went on to claim the node and plan (and stops there: this test gives no artifacts).
      expect(run.stderr).toContain("Node n1: claimed");
    } finally {
      await kube.close();
    }
  });
});
