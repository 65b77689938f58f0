// Waiting for the node's Ready condition after reset bounced the runtime and the kubelet.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kubeApi } from "../../src/kube/api.js";
import { waitUntilReady } from "../../src/kube/ready.js";
import { type FakeKube, node, startFakeKube } from "../helpers/kube-api.js";

const ready = (status: string) => ({ status: { conditions: [{ type: "Ready", status }] } });

describe("waiting until the node is Ready", () => {
  let kube: FakeKube;
  beforeAll(async () => {
    kube = await startFakeKube();
  });
  afterAll(() => kube.close());

  it("Ready again after a read that says otherwise", async () => {
    kube.nodes.set("n1", node("n1", {}, ready("False")));
    const api = await kubeApi(kube.kubeconfig);
    const getNode = api.getNode.bind(api);
    api.getNode = async (n) => {
      const seen = await getNode(n);
      Object.assign(kube.nodes.get("n1") as object, ready("True"));
      return seen;
    };
    await expect(waitUntilReady(api, "n1", 10_000)).resolves.toBeUndefined();
  });

  it("never Ready: the error says what the node's condition was", async () => {
    kube.nodes.set("n2", node("n2", {}, ready("False")));
    await expect(waitUntilReady(await kubeApi(kube.kubeconfig), "n2", 100)).rejects.toThrow(
      "node n2 is not Ready 0 s after the restart (its Ready condition: False)",
    );
  });
});
