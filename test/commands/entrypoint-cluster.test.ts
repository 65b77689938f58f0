// The DaemonSet `manifests` prints, from a kata-deploy values file, run as Kubernetes would run it:
// its environment and its overrides ConfigMap given to the entrypoint on a test host. The values'
// drop-in reaches Kata's configuration, the labels carry the install's suffix beside another
// install's, the startup taint is lifted, NFD gets the node's feature file; and a wrong
// k8sDistribution is refused.
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { RUNTIME_LABEL } from "../../src/kube/node-labels.js";
import { artifactDir } from "../helpers/artifacts.js";
import { runCli, runCliAsync } from "../helpers/cli.js";
import { criStandIn, type StandIn } from "../helpers/cri-stand-in.js";
import { podEnv, type Running, startEntrypoint } from "../helpers/entrypoint.js";
import { daemonSet, node, startFakeKube } from "../helpers/kube-api.js";
import { daemonSetOf, type Obj, objects, removeValuesFiles, valuesFile } from "../helpers/manifests.js";
import { parseFeatureFile } from "../helpers/nfd.js";
import { intelContainerd16 } from "../helpers/nodes.js";
import { buildHost, removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);
afterAll(removeValuesFiles);
const artifacts = artifactDir();
afterAll(() => fs.rmSync(artifacts, { recursive: true, force: true }));

function testHost() {
  const spec = intelContainerd16();
  spec.commands = { ...spec.commands, "/usr/bin/systemctl": "exit 0" };
  spec.files = { ...spec.files, "/run/lock/.keep": "" };
  const host = buildHost(spec);
  const socket = path.join(host.root, "run/containerd/containerd.sock");
  fs.rmSync(socket);
  let server: StandIn | null = null;
  return {
    host,
    listen: async () => {
      server = await criStandIn(socket);
    },
    server: { close: () => server?.close() },
  };
}

/** Every file under `dir` whose text contains `text`. */
function filesWith(dir: string, text: string): string[] {
  return (fs.readdirSync(dir, { recursive: true }) as string[])
    .map((f) => path.join(dir, f))
    .filter((f) => fs.lstatSync(f).isFile() && fs.readFileSync(f, "utf8").includes(text));
}

const VALUES = `
env:
  multiInstallSuffix: lts
startupTaints: ["kata-lts:NoSchedule"]
shims:
  disableAll: true
  qemu:
    enabled: true
    dropIn: |
      [hypervisor.qemu]
      default_memory = 4096
`;

describe("the DaemonSet from kata-deploy's values, on a node", () => {
  it("installs with the values' drop-in, labels with its suffix beside another install's, writes NFD's file; cleans up its own", async () => {
    const out = runCli([
      "manifests",
      "-f",
      valuesFile(VALUES, "values.yaml"),
      "--set",
      "nfd.feature_file=true",
      // The chart's nydus kept, for an image said to carry its binaries (the node here has none to use).
      "--set",
      "nydus_in_image=true",
    ]);
    expect(out.status, out.stderr).toBe(0);
    const docs = objects(out.stdout);
    const { ds, env } = daemonSetOf(docs);
    const cm = docs.find((d) => d.kind === "ConfigMap") as Obj & { data: Record<string, string> };
    const { host, listen, server } = testHost();
    await listen();
    const kube = await startFakeKube();
    // Another install (suffix "dev") already serves Kata on the node.
    const theirs = {
      [RUNTIME_LABEL]: "true",
      "kata-deploy.katacontainers.io/dev": "true",
      "katacontainers.io/shim.qemu-dev": "true",
    };
    const taints = [
      { key: "kata-lts", effect: "NoSchedule" },
      { key: "dedicated", value: "vm", effect: "NoSchedule" },
    ];
    kube.nodes.set("n1", node("n1", theirs, { spec: { taints } }));
    kube.daemonsets.set(`kube-system/${ds.metadata.name}`, daemonSet("kube-system", ds.metadata.name));
    // The ConfigMap, mounted where the DaemonSet mounts it (here: a directory of the test's).
    const overrides = path.join(path.dirname(kube.kubeconfig), "kata-install.toml");
    fs.writeFileSync(overrides, cm.data["kata-install.toml"] as string);
    let run: Running | undefined;
    try {
      run = await startEntrypoint(
        podEnv(kube.kubeconfig, host.root, {
          ...env,
          ARTIFACTS: `dir:${artifacts}`, // the default registry is not reachable from a test
          KATA_INSTALL_OVERRIDES: overrides,
        }),
      );
      const child = run.child;
      const stderr = run.stderr;
      // The drop-in's value is in Kata's configuration for qemu, under the suffix's prefix.
      expect(filesWith(path.join(host.root, "opt/kata-lts"), "default_memory = 4096").length).toBeGreaterThan(
        0,
      );
      const labels = (kube.nodes.get("n1") as { metadata: { labels: Record<string, string> } }).metadata
        .labels;
      expect(labels).toEqual({
        ...theirs,
        "kata-deploy.katacontainers.io/lts": "true",
        "katacontainers.io/shim.qemu-lts": "true",
      });
      const features = parseFeatureFile(
        fs.readFileSync(
          path.join(host.root, "etc/kubernetes/node-feature-discovery/features.d/kata-install-lts"),
          "utf8",
        ),
      );
      expect(features["kata.feature.node.kubernetes.io/kvm"]).toBe("true");
      expect(stderr()).toContain(
        "NFD: the node's Kata features in /etc/kubernetes/node-feature-discovery/features.d/kata-install-lts.",
      );

      // The startup taint is lifted once the node is labelled; the other stays.
      expect((kube.nodes.get("n1") as { spec: { taints: unknown[] } }).spec.taints).toEqual([taints[1]]);
      expect(stderr()).toContain("Node n1: startup taint(s) kata-lts:NoSchedule lifted.");

      // Deselected: SIGTERM cleans up this install only; the other's labels and the shared label stay.
      kube.daemonsets.delete(`kube-system/${ds.metadata.name}`);
      child.kill("SIGTERM");
      expect(await run.exited, stderr()).toBe(0);
      expect(
        (kube.nodes.get("n1") as { metadata: { labels: Record<string, string> } }).metadata.labels,
      ).toEqual(theirs);
      expect(
        fs.existsSync(
          path.join(host.root, "etc/kubernetes/node-feature-discovery/features.d/kata-install-lts"),
        ),
      ).toBe(false);
    } finally {
      run?.child.kill("SIGKILL");
      server.close();
      await kube.close();
    }
  });

  it("a k8sDistribution the node's runtime contradicts is refused before anything is labelled or written", async () => {
    const { host, listen, server } = testHost();
    await listen();
    const kube = await startFakeKube();
    kube.nodes.set("n1", node("n1", { team: "infra" }));
    try {
      const run = await runCliAsync(["entrypoint", "install"], {
        env: {
          NODE_NAME: "n1",
          KUBECONFIG: kube.kubeconfig,
          HOST_ROOT: host.root,
          HOST_EXEC: "root-exec",
          HEALTH_ADDRESS: "127.0.0.1",
          HEALTH_PORT: "0",
          K8S_DISTRIBUTION: "k3s",
        },
      });
      expect(run.status).toBe(1);
      expect(run.stderr).toContain(
        "Refused: K8S_DISTRIBUTION=k3s, but this node runs containerd: set k8sDistribution (k8s_distribution) to k8s",
      );
      expect(kube.requests.filter((r) => r.method === "PATCH")).toEqual([]);
      expect(fs.existsSync(path.join(host.root, "opt/kata/.install"))).toBe(false);
    } finally {
      server.close();
      await kube.close();
    }
  });
});
