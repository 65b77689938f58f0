// Node labels and the summary annotation, written through @kubernetes/client-node to a small API
// server with Kubernetes' merge-patch semantics, and read back (and changed) by the real kubectl.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kubeApi } from "../../src/kube/api.js";
import { patchFresh } from "../../src/kube/fresh-patch.js";
import {
  cleanupPatch,
  type Install,
  installedPatch,
  installingPatch,
  type MergePatch,
  type NodeMeta,
  RUNTIME_LABEL,
  SUMMARY_ANNOTATION,
} from "../../src/kube/node-labels.js";
import { NodeSummary } from "../../src/kube/summary.js";
import { CHART_SHIMS } from "../../src/manifests/kata-deploy/chart.js";
import { changeAfterFirstRead, type FakeKube, mergePatch, node, startFakeKube } from "../helpers/kube-api.js";
import { SUMMARY } from "../helpers/summary.js";

const SHIMS = ["clh", "fc", "qemu", "qemu-runtime-rs", "qemu-snp"];
const DEFAULT: Install = { suffix: null, shims: SHIMS };
const MARK = "kata-deploy.katacontainers.io/default";

describe("node labels through the Kubernetes API", () => {
  let kube: FakeKube;
  beforeAll(async () => {
    kube = await startFakeKube();
    kube.nodes.set("n1", node("n1", { team: "infra", "katacontainers.io/shim.fc": "true" }));
  });
  afterAll(() => kube.close());
  const kubectl = (...args: string[]) => kube.kubectl(...args);

  it("a fresh node is claimed: kata-runtime=false and the mark false, the admin's labels kept", async () => {
    const api = await kubeApi(kube.kubeconfig);
    const before = await api.getNode("n1");
    const after = await api.patchNode("n1", installingPatch(before.meta, DEFAULT) as MergePatch);
    expect(after.meta.labels).toEqual({
      team: "infra",
      "katacontainers.io/shim.fc": "true",
      [RUNTIME_LABEL]: "false",
      [MARK]: "false",
    });
    const patch = kube.requests.filter((r) => r.method === "PATCH");
    expect(patch.at(-1)?.contentType).toBe("application/merge-patch+json");
  });

  it("installed: true, one label per installed shim, and a summary kubectl reads back", async () => {
    const api = await kubeApi(kube.kubeconfig);
    await api.patchNode("n1", installedPatch((await api.getNode("n1")).meta, DEFAULT, SUMMARY));
    const seen = JSON.parse(await kubectl("get", "node", "n1", "-o", "json"));
    expect(seen.metadata.labels).toEqual({
      team: "infra",
      [RUNTIME_LABEL]: "true",
      [MARK]: "true",
      "katacontainers.io/shim.clh": "true",
      "katacontainers.io/shim.qemu": "true",
    });
    expect(NodeSummary.parse(JSON.parse(seen.metadata.annotations[SUMMARY_ANNOTATION]))).toEqual(SUMMARY);
  });

  it("a shim label someone else added is not left claiming a shim that is not installed", async () => {
    await kubectl("label", "node", "n1", "katacontainers.io/shim.fc=true");
    const api = await kubeApi(kube.kubeconfig);
    const after = await api.patchNode("n1", installedPatch((await api.getNode("n1")).meta, DEFAULT, SUMMARY));
    expect(after.meta.labels?.["katacontainers.io/shim.fc"]).toBeUndefined();
  });

  it("after cleanup nothing of ours is left, and the rest is as it was", async () => {
    const api = await kubeApi(kube.kubeconfig);
    await api.patchNode("n1", cleanupPatch((await api.getNode("n1")).meta, DEFAULT));
    const seen = JSON.parse(await kubectl("get", "node", "n1", "-o", "json"));
    expect(seen.metadata.labels).toEqual({ team: "infra" });
    expect(seen.metadata.annotations[SUMMARY_ANNOTATION]).toBeUndefined();
  });

  it("a node another install changed between read and patch: the stale patch is refused, made again, nothing lost", async () => {
    kube.nodes.set("n2", node("n2", { [RUNTIME_LABEL]: "true", [MARK]: "true" }));
    (kube.nodes.get("n2") as { metadata: Record<string, unknown> }).metadata.resourceVersion = "1";
    const api = await kubeApi(kube.kubeconfig);
    // Right after our first read, the install "lts" claims the node.
    const reads = changeAfterFirstRead(api, kube, "n2", (n) => {
      (n.metadata as { labels: Record<string, string> }).labels["kata-deploy.katacontainers.io/lts"] = "true";
    });
    await patchFresh(api, "n2", (n) => cleanupPatch(n.meta, DEFAULT));
    expect(reads()).toBe(2);
    // Made from the fresh read: lts now serves here, so the shared label stays.
    expect((kube.nodes.get("n2") as { metadata: { labels: object } }).metadata.labels).toEqual({
      [RUNTIME_LABEL]: "true",
      "kata-deploy.katacontainers.io/lts": "true",
    });
    kube.nodes.delete("n2");
  });

  it("lists a large cluster page by page", async () => {
    for (let i = 0; i < 1234; i++) kube.nodes.set(`w${String(i).padStart(4, "0")}`, node(`w${i}`));
    const lists = () => kube.requests.filter((r) => r.method === "GET" && r.path === "/api/v1/nodes").length;
    const before = lists();
    const all = await (await kubeApi(kube.kubeconfig)).listNodes();
    expect(all).toHaveLength(1235);
    expect(lists() - before).toBe(3);
  });

  it("the API refuses what Kubernetes refuses (a label value it does not take); every shim label of every chart shim, with a suffix, it takes", async () => {
    kube.nodes.set("n3", node("n3"));
    const api = await kubeApi(kube.kubeconfig);
    await expect(
      api.patchNode("n3", { metadata: { labels: { [RUNTIME_LABEL]: "true, really" } } }),
    ).rejects.toThrow(
      /patch node n3: HTTP 422: Node "n3" is invalid: metadata.labels: Invalid value: "true, really"/,
    );
    const all: Install = { suffix: "lts", shims: [...CHART_SHIMS] };
    const patched = await api.patchNode(
      "n3",
      installedPatch((await api.getNode("n3")).meta, all, { ...SUMMARY, shims: [...CHART_SHIMS] }),
    );
    expect(Object.keys(patched.meta.labels ?? {})).toHaveLength(CHART_SHIMS.length + 2);
    kube.nodes.delete("n3");
  });

  it("an unknown node is named in the error", async () => {
    await expect((await kubeApi(kube.kubeconfig)).getNode("nope")).rejects.toThrow(
      /get node nope: HTTP 404: nodes "nope" not found/,
    );
  });
});

describe("two installs on one node (MULTI_INSTALL_SUFFIX), and a node kata-deploy installed", () => {
  const LTS: Install = { suffix: "lts", shims: SHIMS };
  const apply = (meta: NodeMeta, patch: MergePatch): NodeMeta => mergePatch(meta, patch.metadata) as NodeMeta;
  const installed = (meta: NodeMeta, install: Install, shims: string[]) =>
    apply(meta, installedPatch(meta, install, { ...SUMMARY, shims }));

  it("each install labels its shims with its suffix, as its handlers are named", () => {
    let meta: NodeMeta = { labels: {} };
    meta = installed(meta, DEFAULT, ["qemu"]);
    meta = installed(meta, LTS, ["qemu", "clh"]);
    expect(meta.labels).toEqual({
      [RUNTIME_LABEL]: "true",
      [MARK]: "true",
      "kata-deploy.katacontainers.io/lts": "true",
      "katacontainers.io/shim.qemu": "true",
      "katacontainers.io/shim.qemu-lts": "true",
      "katacontainers.io/shim.clh-lts": "true",
    });
    // Each keeps its own summary.
    expect(Object.keys(meta.annotations ?? {}).sort()).toEqual([
      SUMMARY_ANNOTATION,
      `${SUMMARY_ANNOTATION}-lts`,
    ]);
  });

  it("a re-install on a node that serves Kata claims nothing: no label is taken out of scheduling first", () => {
    const meta = installed({ labels: { team: "infra" } }, DEFAULT, ["qemu", "clh"]);
    // A rolling update or a restarted pod: kata-runtime, the mark and the shim labels stay "true".
    expect(installingPatch(meta, DEFAULT)).toBeNull();
    // A node claimed but never finished keeps its "false" as it is: still nothing to write.
    const claimed = { labels: { [RUNTIME_LABEL]: "false", [MARK]: "false" } };
    expect(installingPatch(claimed, DEFAULT)).toBeNull();
  });

  it("an install never removes the other's labels, and the shared one stays while the other serves", () => {
    let meta = installed(installed({ labels: {} }, DEFAULT, ["qemu"]), LTS, ["clh"]);
    // lts re-installs: both serve, nothing is claimed anew.
    expect(installingPatch(meta, LTS)).toBeNull();
    // A third install claims its own mark only: the shared label stays "true".
    const dev = apply(meta, installingPatch(meta, { suffix: "dev", shims: SHIMS }) as MergePatch);
    expect(dev.labels?.[RUNTIME_LABEL]).toBe("true");
    expect(dev.labels?.["kata-deploy.katacontainers.io/dev"]).toBe("false");
    expect(dev.labels?.["katacontainers.io/shim.qemu"]).toBe("true");
    // The default install is cleaned up: lts's labels and the shared label stay.
    meta = apply(meta, cleanupPatch(meta, DEFAULT));
    expect(meta.labels).toEqual({
      [RUNTIME_LABEL]: "true",
      "kata-deploy.katacontainers.io/lts": "true",
      "katacontainers.io/shim.clh-lts": "true",
    });
    expect(Object.keys(meta.annotations ?? {})).toEqual([`${SUMMARY_ANNOTATION}-lts`]);
    // The last one takes the shared label with it.
    meta = apply(meta, cleanupPatch(meta, LTS));
    expect(meta.labels).toEqual({});
  });

  it("another install still unfinished: the shared label stays, as false", () => {
    const meta: NodeMeta = {
      labels: { [RUNTIME_LABEL]: "true", [MARK]: "true", "kata-deploy.katacontainers.io/lts": "false" },
    };
    expect(apply(meta, cleanupPatch(meta, DEFAULT)).labels).toEqual({
      [RUNTIME_LABEL]: "false",
      "kata-deploy.katacontainers.io/lts": "false",
    });
  });

  it("a node kata-deploy labelled keeps every label its chart's RuntimeClasses select, after the takeover", () => {
    // kata-deploy's chart selects kata-runtime=true and the install's mark.
    const chartSelects = { [RUNTIME_LABEL]: "true", [MARK]: "true" };
    const meta = installed({ labels: { ...chartSelects } }, DEFAULT, ["qemu"]);
    expect(meta.labels).toMatchObject(chartSelects);
  });
});
