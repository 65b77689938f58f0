// Switching a cluster from kata-deploy, as the README's "Switching a cluster from kata-deploy" says,
// against the tests' API server with kata-deploy's Helm release stored as Helm stores it and a node
// it installed, Helm's uninstall and kata-deploy's SIGTERM modelled from their code (helm.ts): Helm
// forgets its release (its Secrets relabelled: Helm finds them by label; no object goes); kubectl apply learns what the chart
// wrote; then one `kubectl apply` of `manifests` turns kata-deploy's DaemonSet into kata-install's,
// whole (nothing of the chart's pod left). The rollout SIGTERMs kata-deploy's pod, which asks
// whether its DaemonSet still selects the node: it does, so it leaves Kata in place; kata-install's
// pod takes the node over in place, and not one label the chart's RuntimeClasses select goes, or
// turns false, on the way. A second apply hands the RuntimeClasses over. The way back is the same
// rule the other way: Helm's labels back, one apply of the chart's objects, and kata-install's pods
// leave their nodes served for kata-deploy's to install over. Deleting the DaemonSet instead removes
// kata-install: each pod then cleans its node up.
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseAllDocuments, stringify } from "yaml";
import { kubeApi } from "../../src/kube/api.js";
import { instanceLabel, RUNTIME_LABEL } from "../../src/kube/node-labels.js";
import { daemonSetSelects } from "../../src/kube/selects.js";
import { answeringHost } from "../helpers/answering.js";
import { artifactDir } from "../helpers/artifacts.js";
import { runCli } from "../helpers/cli.js";
import { podEnv, startEntrypoint } from "../helpers/entrypoint.js";
import { helmList, helmUninstall, kataDeployOnSigterm, storeRelease } from "../helpers/helm.js";
import { deployHandler, kataDeployTree } from "../helpers/kata-deploy-node.js";
import { type FakeKube, node, startFakeKube } from "../helpers/kube-api.js";
import { daemonSetOf, type Obj, objects } from "../helpers/manifests.js";
import { CONTAINERD_V2_MAIN, intelContainerd16 } from "../helpers/nodes.js";
import { removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);
const artifacts = artifactDir();
afterAll(() => fs.rmSync(artifacts, { recursive: true, force: true }));

const RELEASE = path.resolve("test/fixtures/kata-deploy/helm-release");
const VALUES = path.join(RELEASE, "values.yaml");
const MANIFEST = path.join(RELEASE, "manifest.yaml");
const MARK = instanceLabel(null);
const DS = "/apis/apps/v1/namespaces/kube-system/daemonsets/kata-deploy";

type Json = Record<string, unknown>;
type DaemonSetObj = Obj & { spec: { template: { metadata: Json; spec: Json & { containers: Json[] } } } };

/**
 * One more RuntimeClass of the chart's, for a shim kata-install's manifests do not make here (the
 * chart makes one for each of its ~25 shims): what the switch's last step removes.
 */
const CHART_FC = `---
kind: RuntimeClass
apiVersion: node.k8s.io/v1
metadata:
  name: kata-fc
  labels:
    app.kubernetes.io/managed-by: kata-deploy
    kata-deploy/instance: "default"
handler: kata-fc
scheduling:
  nodeSelector:
    katacontainers.io/kata-runtime: "true"
    kata-deploy.katacontainers.io/default: "true"
`;
const CHART = `${fs.readFileSync(MANIFEST, "utf8")}${CHART_FC}`;

/** The chart's objects as Helm creates them: with the ownership metadata Helm adds to each. */
function asHelmCreatesThem(dir: string): string {
  const docs = parseAllDocuments(CHART)
    .map((d) => d.toJS() as Obj | null)
    .filter((d): d is Obj => d !== null);
  for (const doc of docs) {
    const meta = doc.metadata as Json & { labels?: Json; annotations?: Json };
    meta.labels = { ...meta.labels, "app.kubernetes.io/managed-by": "Helm" };
    meta.annotations = {
      ...meta.annotations,
      "meta.helm.sh/release-name": "kata-deploy",
      "meta.helm.sh/release-namespace": "kube-system",
    };
  }
  const file = path.join(dir, "helm-created.yaml");
  fs.writeFileSync(file, docs.map((d) => stringify(d)).join("---\n"));
  return file;
}

/** `kata-install manifests -f values.yaml [--set ...]`, written where kubectl reads it. */
function manifestsFile(dir: string, name: string, ...set: string[]): { file: string; docs: Obj[] } {
  const run = runCli(["manifests", "-f", VALUES, ...set.flatMap((s) => ["--set", s])]);
  expect(run.status, run.stderr).toBe(0);
  const file = path.join(dir, name);
  fs.writeFileSync(file, run.stdout);
  return { file, docs: objects(run.stdout) };
}

/**
 * Helm's release Secrets relabelled owner=`from` → owner=`to`: Helm finds them by that label, so
 * relabelled away it forgets the release (the switch's step 1), relabelled back it knows it again
 * (the way back's).
 */
const relabel = (kube: FakeKube, from: string, to: string) =>
  kube.kubectl(
    "label",
    "secret",
    "-n",
    "kube-system",
    "-l",
    `owner=${from},name=kata-deploy`,
    `owner=${to}`,
    "--overwrite",
  );
const forget = (kube: FakeKube) => relabel(kube, "helm", "kata-install-switch");
const remember = (kube: FakeKube) => relabel(kube, "kata-install-switch", "helm");

/** The variables with a value that the DaemonSet's container is given. */
const envOf = (ds: DaemonSetObj): Record<string, string> =>
  Object.fromEntries(
    ((ds.spec.template.spec.containers[0] as Json).env as Array<{ name: string; value?: string }>)
      .filter((e) => e.value !== undefined)
      .map((e) => [e.name, e.value as string]),
  );

/** A node kata-deploy installed (qemu and clh, containerd 1.6: its handlers in config.toml). */
const kataDeployNode = () =>
  answeringHost(intelContainerd16(), (root) => {
    kataDeployTree(artifacts, root, ["qemu", "clh"]);
    const config = path.join(root, "etc/containerd/config.toml");
    fs.writeFileSync(
      config,
      `${CONTAINERD_V2_MAIN}\n${deployHandler("io.containerd.grpc.v1.cri", "qemu")}\n${deployHandler("io.containerd.grpc.v1.cri", "clh")}`,
    );
    fs.writeFileSync(`${config}.bak`, CONTAINERD_V2_MAIN);
  });

/** ... labelled by kata-deploy (and with `labels`), its runtime serving kata-deploy's handlers. */
const servedNode = (labels: Record<string, string>) =>
  node(
    "n1",
    { ...labels, [RUNTIME_LABEL]: "true", [MARK]: "true" },
    {
      status: {
        conditions: [{ type: "Ready", status: "True" }],
        runtimeHandlers: [{ name: "runc" }, { name: "kata-qemu" }, { name: "kata-clh" }],
      },
    },
  );

const labelsOf = (kube: FakeKube) =>
  (kube.nodes.get("n1") as { metadata: { labels: Record<string, string> } }).metadata.labels;
const live = (kube: FakeKube, p: string) => kube.objects.get(p) as Json;

describe("the step an earlier README gave: annotate the live objects keep, then helm uninstall --no-hooks", () => {
  it("deletes the DaemonSet and the RuntimeClasses all the same (Helm reads keep from its stored manifest), and every kata-deploy pod then cleans its node up", async () => {
    const kube = await startFakeKube();
    try {
      kube.nodes.set("n1", node("n1", { [RUNTIME_LABEL]: "true", [MARK]: "true" }));
      await kube.kubectl(
        "create",
        "--validate=false",
        "-f",
        asHelmCreatesThem(path.dirname(kube.kubeconfig)),
      );
      storeRelease(kube, "kata-deploy", "kube-system", CHART);
      await kube.kubectl("annotate", "--overwrite", "-f", MANIFEST, "helm.sh/resource-policy=keep");
      const deleted = helmUninstall(kube, "kata-deploy", "kube-system");
      expect(deleted).toContain(DS);
      expect(deleted).toContain("/apis/node.k8s.io/v1/runtimeclasses/kata-qemu");
      expect(await kataDeployOnSigterm(kube, "n1")).toBe("cleanup");
    } finally {
      await kube.close();
    }
  });
});

describe("switching a cluster from kata-deploy to kata-install", () => {
  it("one apply turns the DaemonSet into kata-install's; its pod takes the node over without a label lost; the RuntimeClasses follow", async () => {
    // A node kata-deploy installed (qemu and clh, containerd 1.6: its handlers in config.toml).
    const host = await kataDeployNode();
    const kube = await startFakeKube();
    const dir = path.dirname(kube.kubeconfig);
    try {
      // ... labelled by kata-deploy, its runtime serving its handlers; kata-deploy's Helm release.
      kube.nodes.set("n1", servedNode({ team: "infra" }));
      await kube.kubectl("create", "--validate=false", "-f", asHelmCreatesThem(dir));
      storeRelease(kube, "kata-deploy", "kube-system", CHART);
      const chartPod = (live(kube, DS) as DaemonSetObj).spec.template.spec;
      expect(chartPod.containers.map((c) => c.name)).toEqual(["kube-kata"]);
      // At every step from here, were kata-deploy's pod SIGTERMed (a rollout, an eviction), it would
      // leave its node as it is: its DaemonSet still selects it.
      const keepsKata = async (step: string) =>
        expect(await kataDeployOnSigterm(kube, "n1"), step).toBe("skip");
      await keepsKata("before");

      // 1. Helm forgets its release: its Secrets, relabelled, are no longer Helm's to find; not one
      // object goes, and the record stays for the way back.
      const before = [...kube.objects.keys()].sort();
      await forget(kube);
      expect(helmList(kube, "kube-system")).toEqual([]);
      expect([...kube.objects.keys()].sort()).toEqual(before);
      // A helm uninstall now, by mistake, finds nothing to delete.
      expect(helmUninstall(kube, "kata-deploy", "kube-system")).toEqual([]);
      await keepsKata("after step 1");
      // 2. kubectl apply learns what the chart wrote, so that what kata-install does not write goes.
      await kube.kubectl("apply", "set-last-applied", "--create-annotation", "-f", MANIFEST);
      await keepsKata("after step 2");
      // 3. The switch: one apply, the RuntimeClasses left as the chart made them for now.
      const phase1 = manifestsFile(dir, "switch.yaml", "runtime_classes.create=false");
      await kube.kubectl("apply", "--validate=false", "-f", phase1.file);
      await keepsKata("after step 3");

      // The DaemonSet is kata-install's, whole: nothing of the chart's pod is left in it.
      const ours = daemonSetOf(phase1.docs).ds as DaemonSetObj;
      const switched = live(kube, DS) as DaemonSetObj;
      expect(switched.spec.template.spec.containers).toEqual(ours.spec.template.spec.containers);
      expect(switched.spec.template.spec.volumes).toEqual(ours.spec.template.spec.volumes);
      expect(switched.spec.template.spec.serviceAccountName).toBe("kata-deploy-sa");
      expect(switched.spec.template.spec.terminationGracePeriodSeconds).toBe(600);
      expect((switched.metadata as unknown as { labels: Json }).labels).toMatchObject({
        "app.kubernetes.io/managed-by": "kata-install",
      });
      // Its ServiceAccount and RBAC are the chart's objects, with kata-install's rules.
      expect(
        (live(kube, "/apis/rbac.authorization.k8s.io/v1/clusterroles/kata-deploy-role") as { rules: unknown })
          .rules,
      ).toEqual((phase1.docs.find((d) => d.kind === "ClusterRole") as Obj & { rules: unknown }).rules);
      // The chart's RuntimeClasses, untouched: they select kata-runtime=true and the mark.
      const rc = (name: string) =>
        live(kube, `/apis/node.k8s.io/v1/runtimeclasses/${name}`) as Obj & {
          scheduling: { nodeSelector: Record<string, string> };
        };
      expect(rc("kata-qemu").scheduling.nodeSelector).toEqual({ [RUNTIME_LABEL]: "true", [MARK]: "true" });

      // The rollout SIGTERMs kata-deploy's pod on n1. It cleans up only if its DaemonSet (kata-deploy,
      // in its namespace) no longer selects the node, by nodeSelector and required affinity — the
      // rule selects.ts holds as kata-deploy's own: the DaemonSet is kata-install's now, and selects it.
      const api = await kubeApi(kube.kubeconfig);
      expect(
        daemonSetSelects(await api.getDaemonSet("kube-system", "kata-deploy"), await api.getNode("n1")),
      ).toEqual({ selects: true });

      // kata-install's pod starts on n1, as the DaemonSet now runs it.
      const from = kube.requests.length;
      const env = envOf(switched);
      // (Its artifacts from a directory: the default registry is not reachable from a test.)
      const start = () =>
        startEntrypoint(podEnv(kube.kubeconfig, host.root, { ...env, ARTIFACTS: `dir:${artifacts}` }));
      const pod = await start();
      // The node taken over in place, kata-deploy's handlers kept by name: one definition each.
      expect(pod.stdout()).toMatch(/take-over \/opt\/kata: kata-deploy's install/);
      const config = fs.readFileSync(path.join(host.root, "etc/containerd/config.toml"), "utf8");
      expect(config.match(/runtimes\.kata-qemu\]/g)).toHaveLength(1);
      expect(config.match(/runtimes\.kata-clh\]/g)).toHaveLength(1);
      expect(fs.readlinkSync(path.join(host.root, "opt/kata/bin"))).toBe("current/bin");
      // Not one write took the node out of the chart's RuntimeClasses on the way.
      for (const r of kube.requests.slice(from).filter((q) => q.method === "PATCH")) {
        const labels = (r.body as { metadata?: { labels?: Json } }).metadata?.labels ?? {};
        for (const key of [RUNTIME_LABEL, MARK]) expect([undefined, "true"], key).toContain(labels[key]);
      }
      expect(labelsOf(kube)).toEqual({
        team: "infra",
        [RUNTIME_LABEL]: "true",
        [MARK]: "true",
        "katacontainers.io/shim.clh": "true",
        "katacontainers.io/shim.qemu": "true",
      });
      for (const name of ["kata-qemu", "kata-clh"])
        for (const [k, v] of Object.entries(rc(name).scheduling.nodeSelector))
          expect(labelsOf(kube)[k]).toBe(v);

      // 4. The RuntimeClasses handed over: they select the shim labels every switched node has; the
      // DaemonSet is as it was (no second rollout).
      const template = JSON.stringify(live(kube, DS).spec);
      const phase2 = manifestsFile(dir, "all.yaml");
      await kube.kubectl("apply", "--validate=false", "-f", phase2.file);
      expect(JSON.stringify(live(kube, DS).spec)).toBe(template);
      expect(rc("kata-qemu").scheduling.nodeSelector).toEqual({ "katacontainers.io/shim.qemu": "true" });
      expect(rc("kata-clh").scheduling.nodeSelector).toEqual({ "katacontainers.io/shim.clh": "true" });
      expect(rc("kata-qemu").metadata).toMatchObject({
        labels: { "app.kubernetes.io/managed-by": "kata-install", "kata-deploy/instance": "default" },
      });
      expect(labelsOf(kube)["katacontainers.io/shim.qemu"]).toBe("true");
      // 5. What the chart made and kata-install does not (RuntimeClasses of shims no node installs
      // now, selecting labels every node has): removed, by what Helm's labels say of them.
      expect(kube.objects.has("/apis/node.k8s.io/v1/runtimeclasses/kata-fc")).toBe(true);
      await kube.kubectl("delete", "runtimeclass", "-l", "app.kubernetes.io/managed-by=Helm");
      expect(kube.objects.has("/apis/node.k8s.io/v1/runtimeclasses/kata-fc")).toBe(false);
      for (const name of ["kata-qemu", "kata-clh"]) expect(rc(name)).toBeDefined();
      await keepsKata("after step 5");

      // A restart of kata-install's pod leaves everything in place.
      pod.child.kill("SIGTERM");
      expect(await pod.exited).toBe(0);
      expect(pod.stderr()).toContain("SIGTERM: DaemonSet kube-system/kata-deploy still selects n1");

      // Removing kata-install altogether: the DaemonSet deleted, its pod cleans its node up (labels first).
      const again = await start();
      await kube.kubectl("delete", "daemonset", "-n", "kube-system", "kata-deploy");
      again.child.kill("SIGTERM");
      expect(await again.exited).toBe(0);
      expect(again.stderr()).toContain("no longer selects n1 (the DaemonSet is gone): cleaning up.");
      expect(labelsOf(kube)).toEqual({ team: "infra" });
      // The admin's file as kata-deploy backed it up before its install, byte for byte.
      expect(fs.readFileSync(path.join(host.root, "etc/containerd/config.toml"), "utf8")).toBe(
        CONTAINERD_V2_MAIN,
      );
    } finally {
      await kube.close();
    }
  });

  it("the way back: Helm knows its release again, one apply makes the DaemonSet kata-deploy's; kata-install's pod leaves the node served, and kata-deploy's files land through its links", async () => {
    const host = await kataDeployNode();
    const kube = await startFakeKube();
    const dir = path.dirname(kube.kubeconfig);
    try {
      kube.nodes.set("n1", servedNode({}));
      await kube.kubectl("create", "--validate=false", "-f", asHelmCreatesThem(dir));
      storeRelease(kube, "kata-deploy", "kube-system", CHART);
      // The switch, as the test above takes it.
      await forget(kube);
      await kube.kubectl("apply", "set-last-applied", "--create-annotation", "-f", MANIFEST);
      await kube.kubectl(
        "apply",
        "--validate=false",
        "-f",
        manifestsFile(dir, "switch.yaml", "runtime_classes.create=false").file,
      );
      const env = envOf(live(kube, DS) as DaemonSetObj);
      const pod = await startEntrypoint(
        podEnv(kube.kubeconfig, host.root, { ...env, ARTIFACTS: `dir:${artifacts}` }),
      );
      await kube.kubectl("apply", "--validate=false", "-f", manifestsFile(dir, "all.yaml").file);
      const served = labelsOf(kube);
      expect(served["katacontainers.io/shim.qemu"]).toBe("true");
      const configFile = path.join(host.root, "etc/containerd/config.toml");
      const config = fs.readFileSync(configFile, "utf8");
      const keepsKata = async (step: string) =>
        expect(await kataDeployOnSigterm(kube, "n1"), step).toBe("skip");

      // Back, 1: Helm knows its release again (its Secrets labelled its own); nothing else changes.
      const objects = JSON.stringify([...kube.objects.entries()].filter(([p]) => !p.includes("/secrets/")));
      await remember(kube);
      expect(helmList(kube, "kube-system")).toEqual(["kata-deploy"]);
      expect(JSON.stringify([...kube.objects.entries()].filter(([p]) => !p.includes("/secrets/")))).toBe(
        objects,
      );
      await keepsKata("way back, step 1");
      // 2. The chart's objects as Helm stored them (helm get manifest, saved before the switch): one
      // apply, whose last-applied is kata-install's, so that nothing of kata-install's stays in them.
      await kube.kubectl("apply", "--validate=false", "-f", MANIFEST);
      await keepsKata("way back, step 2");
      const back = live(kube, DS) as DaemonSetObj;
      expect(back.spec.template.spec.containers.map((c) => c.name)).toEqual(["kube-kata"]);
      expect(back.spec.template.spec.volumes).toEqual(
        (
          parseAllDocuments(CHART)
            .map((d) => d.toJS())
            .find((d) => d?.kind === "DaemonSet") as DaemonSetObj
        ).spec.template.spec.volumes,
      );
      const rc = (name: string) =>
        live(kube, `/apis/node.k8s.io/v1/runtimeclasses/${name}`) as Obj & {
          scheduling: { nodeSelector: Record<string, string> };
        };
      expect(rc("kata-qemu").scheduling.nodeSelector).toEqual({ [RUNTIME_LABEL]: "true", [MARK]: "true" });

      // The rollout SIGTERMs kata-install's pod: the DaemonSet of its name still selects n1, so it
      // leaves the node as it is — its Kata, its handlers, every label the chart's classes select.
      pod.child.kill("SIGTERM");
      expect(await pod.exited).toBe(0);
      expect(pod.stderr()).toContain("SIGTERM: DaemonSet kube-system/kata-deploy still selects n1");
      expect(labelsOf(kube)).toEqual(served);
      for (const [k, v] of Object.entries(rc("kata-qemu").scheduling.nodeSelector))
        expect(labelsOf(kube)[k]).toBe(v);
      expect(fs.readFileSync(configFile, "utf8")).toBe(config);

      // kata-deploy's pod then installs over it. Its extraction (binary/src/artifacts/install.rs:
      // extract_tarball @ 4.1.0, :857-860 and :928-940) makes each directory with create_dir_all,
      // which follows kata-install's links (bin -> current/bin), and each file by removing what is
      // at its path, then unpacking: its files land in the version the links lead to, and a running
      // VM's open binary keeps its bytes.
      const shim = path.join(host.root, "opt/kata/bin/containerd-shim-kata-v2");
      const running = fs.openSync(shim, "r");
      const before = fs.readFileSync(shim);
      try {
        fs.mkdirSync(path.join(host.root, "opt/kata/bin"), { recursive: true });
        fs.rmSync(shim);
        fs.writeFileSync(shim, "kata-deploy 4.1.0's shim\n");
        expect(fs.realpathSync(shim)).toMatch(/\/opt\/kata\/versions\/[^/]+\/bin\/containerd-shim-kata-v2$/);
        expect(fs.readFileSync(shim, "utf8")).toBe("kata-deploy 4.1.0's shim\n");
        expect(Buffer.compare(fs.readFileSync(running), before)).toBe(0);
      } finally {
        fs.closeSync(running);
      }
    } finally {
      await kube.close();
    }
  });
});
