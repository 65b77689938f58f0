// Node labels and the summary annotation, written through @kubernetes/client-node to a small API
// server with Kubernetes' merge-patch semantics, and read back (and changed) by the real kubectl.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kubeApi } from "../../src/kube/api.js";
import {
  cleanupPatch,
  installedPatch,
  installingPatch,
  RUNTIME_LABEL,
  SUMMARY_ANNOTATION,
} from "../../src/kube/node-labels.js";
import { NodeSummary } from "../../src/kube/summary.js";
import { type FakeKube, node, startFakeKube } from "../helpers/kube-api.js";
import { SUMMARY } from "../helpers/summary.js";

describe("node labels through the Kubernetes API", () => {
  let kube: FakeKube;
  beforeAll(async () => {
    kube = await startFakeKube();
    kube.nodes.set("n1", node("n1", { team: "infra", "katacontainers.io/shim.fc": "true" }));
  });
  afterAll(() => kube.close());
  const kubectl = (...args: string[]) => kube.kubectl(...args);

  it("while installing: kata-runtime=false, no shim claimed, the admin's labels kept", async () => {
    const api = await kubeApi(kube.kubeconfig);
    const before = await api.getNode("n1");
    const after = await api.patchNode("n1", installingPatch(before.meta));
    expect(after.meta.labels).toEqual({ team: "infra", [RUNTIME_LABEL]: "false" });
    const patch = kube.requests.filter((r) => r.method === "PATCH");
    expect(patch.at(-1)?.contentType).toBe("application/merge-patch+json");
  });

  it("installed: true, one label per installed shim, and a summary kubectl reads back", async () => {
    const api = await kubeApi(kube.kubeconfig);
    await api.patchNode("n1", installedPatch((await api.getNode("n1")).meta, SUMMARY));
    const seen = JSON.parse(await kubectl("get", "node", "n1", "-o", "json"));
    expect(seen.metadata.labels).toEqual({
      team: "infra",
      [RUNTIME_LABEL]: "true",
      "katacontainers.io/shim.clh": "true",
      "katacontainers.io/shim.qemu": "true",
    });
    expect(NodeSummary.parse(JSON.parse(seen.metadata.annotations[SUMMARY_ANNOTATION]))).toEqual(SUMMARY);
  });

  it("a shim label someone else added is not left claiming a shim that is not installed", async () => {
    await kubectl("label", "node", "n1", "katacontainers.io/shim.fc=true");
    const api = await kubeApi(kube.kubeconfig);
    const after = await api.patchNode("n1", installedPatch((await api.getNode("n1")).meta, SUMMARY));
    expect(after.meta.labels?.["katacontainers.io/shim.fc"]).toBeUndefined();
  });

  it("after cleanup nothing of ours is left, and the rest is as it was", async () => {
    const api = await kubeApi(kube.kubeconfig);
    await api.patchNode("n1", cleanupPatch((await api.getNode("n1")).meta));
    const seen = JSON.parse(await kubectl("get", "node", "n1", "-o", "json"));
    expect(seen.metadata.labels).toEqual({ team: "infra" });
    expect(seen.metadata.annotations[SUMMARY_ANNOTATION]).toBeUndefined();
  });

  it("lists a large cluster page by page", async () => {
    for (let i = 0; i < 1234; i++) kube.nodes.set(`w${String(i).padStart(4, "0")}`, node(`w${i}`));
    const lists = () => kube.requests.filter((r) => r.method === "GET" && r.path === "/api/v1/nodes").length;
    const before = lists();
    const all = await (await kubeApi(kube.kubeconfig)).listNodes();
    expect(all).toHaveLength(1235);
    expect(lists() - before).toBe(3);
  });

  it("an unknown node is named in the error", async () => {
    await expect((await kubeApi(kube.kubeconfig)).getNode("nope")).rejects.toThrow(
      /get node nope: HTTP 404: nodes "nope" not found/,
    );
  });
});
