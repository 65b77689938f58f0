// The served-handlers check, against the tests' API server: the node's status.runtimeHandlers waited
// for as kata-deploy waits for them (the kubelet publishes them a status sync after the restart).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kubeApi } from "../../src/kube/api.js";
import { handlersServed } from "../../src/kube/served.js";
import { type FakeKube, node, startFakeKube } from "../helpers/kube-api.js";

const handlers = (...names: string[]) => ({ status: { runtimeHandlers: names.map((name) => ({ name })) } });

describe("does the runtime serve the handlers the install wrote", () => {
  let kube: FakeKube;
  beforeAll(async () => {
    kube = await startFakeKube();
  });
  afterAll(() => kube.close());

  it("listed: served, at the first read", async () => {
    kube.nodes.set("n1", node("n1", {}, handlers("runc", "kata-qemu", "kata-clh")));
    const api = await kubeApi(kube.kubeconfig);
    expect(await handlersServed(api, "n1", ["kata-qemu", "kata-clh"], 10_000)).toEqual({ kind: "served" });
  });

  it("not yet listed: waited for until the kubelet publishes them", async () => {
    kube.nodes.set("n2", node("n2", {}, handlers("runc")));
    const api = await kubeApi(kube.kubeconfig);
    const getNode = api.getNode.bind(api);
    let reads = 0;
    api.getNode = async (n) => {
      const seen = await getNode(n);
      // The kubelet's next status sync, after the first read.
      if (++reads === 1) Object.assign(kube.nodes.get("n2") as object, handlers("runc", "kata-qemu"));
      return seen;
    };
    expect(await handlersServed(api, "n2", ["kata-qemu"], 10_000)).toEqual({ kind: "served" });
    expect(reads).toBe(2);
  });

  it("never listed: missing, with what the node reports; another install's kata-qemu-tee is not ours", async () => {
    kube.nodes.set("n3", node("n3", {}, handlers("runc", "kata-qemu-tee")));
    const api = await kubeApi(kube.kubeconfig);
    const started = Date.now();
    expect(await handlersServed(api, "n3", ["kata-qemu", "kata-clh"], 300)).toEqual({
      kind: "missing",
      missing: ["kata-qemu", "kata-clh"],
      reported: ["runc", "kata-qemu-tee"],
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
  });

  it("a node that does not report its handlers cannot be judged: unknown, at once", async () => {
    kube.nodes.set("n4", node("n4"));
    const api = await kubeApi(kube.kubeconfig);
    expect(await handlersServed(api, "n4", ["kata-qemu"], 10_000)).toEqual({
      kind: "unknown",
      why: "the node does not report its runtime handlers",
    });
  });

  it("a node that cannot be read: unknown, not a failure", async () => {
    const api = await kubeApi(kube.kubeconfig);
    const report = await handlersServed(api, "gone", ["kata-qemu"], 100);
    expect(report.kind).toBe("unknown");
  });
});
