// A node let go by one install (cleanup, reset), against the tests' API server: the shared label
// goes only with the last install, and an older kata-deploy without marks keeps it while its
// DaemonSet still selects the node.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kubeApi } from "../../src/kube/api.js";
import { type Install, RUNTIME_LABEL } from "../../src/kube/node-labels.js";
import { releaseNode } from "../../src/kube/release.js";
import { daemonSet, type FakeKube, node, startFakeKube } from "../helpers/kube-api.js";

const OURS: Install = { suffix: null, shims: ["qemu", "clh"] };
const MARK = "kata-deploy.katacontainers.io/default";
const OWN = { namespace: "kube-system", name: "kata-deploy" };
const installed = { [RUNTIME_LABEL]: "true", [MARK]: "true", "katacontainers.io/shim.qemu": "true" };

describe("releasing a node", () => {
  let kube: FakeKube;
  beforeAll(async () => {
    kube = await startFakeKube();
    kube.daemonsets.set("kube-system/kata-deploy", daemonSet("kube-system", "kata-deploy"));
  });
  afterAll(() => kube.close());
  const labels = (name: string) =>
    (kube.nodes.get(name) as { metadata: { labels: Record<string, string> } }).metadata.labels;

  it("the last install: every label of ours goes, the shared one too; the admin's stay", async () => {
    kube.nodes.set("n1", node("n1", { ...installed, team: "infra" }));
    const log: string[] = [];
    expect(await releaseNode(await kubeApi(kube.kubeconfig), "n1", OURS, OWN, (l) => log.push(l))).toBe(
      "remove",
    );
    expect(labels("n1")).toEqual({ team: "infra" });
    expect(log).toEqual([]);
  });

  it("another install's mark serves: the shared label stays", async () => {
    kube.nodes.set("n2", node("n2", { ...installed, "kata-deploy.katacontainers.io/lts": "true" }));
    expect(await releaseNode(await kubeApi(kube.kubeconfig), "n2", OURS, OWN, () => {})).toBe("keep");
    expect(labels("n2")).toEqual({ [RUNTIME_LABEL]: "true", "kata-deploy.katacontainers.io/lts": "true" });
  });

  it("an older kata-deploy (no marks) whose DaemonSet still selects the node keeps the shared label", async () => {
    kube.nodes.set("n3", node("n3", { ...installed, pool: "old" }));
    kube.daemonsets.set("kata/kata-deploy", daemonSet("kata", "kata-deploy", { pool: "old" }));
    const log: string[] = [];
    expect(await releaseNode(await kubeApi(kube.kubeconfig), "n3", OURS, OWN, (l) => log.push(l))).toBe(
      "keep",
    );
    expect(labels("n3")).toEqual({ [RUNTIME_LABEL]: "true", pool: "old" });
    expect(log).toEqual([
      "Node n3: DaemonSet kata/kata-deploy (another kata-deploy) still selects it: katacontainers.io/kata-runtime stays.",
    ]);
    // One that selects other nodes is no evidence: the label goes.
    kube.nodes.set("n4", node("n4", { ...installed, pool: "new" }));
    expect(await releaseNode(await kubeApi(kube.kubeconfig), "n4", OURS, OWN, () => {})).toBe("remove");
    expect(labels("n4")).toEqual({ pool: "new" });
    kube.daemonsets.delete("kata/kata-deploy");
  });

  it("when the DaemonSets cannot be listed, the shared label is left, and said", async () => {
    kube.nodes.set("n5", node("n5", installed));
    const api = await kubeApi(kube.kubeconfig);
    api.listDaemonSets = () => Promise.reject(new Error("HTTP 403: forbidden"));
    const log: string[] = [];
    expect(await releaseNode(api, "n5", OURS, OWN, (l) => log.push(l))).toBe("keep");
    expect(labels("n5")).toEqual({ [RUNTIME_LABEL]: "true" });
    expect(log[0]).toMatch(/cannot ask whether another kata-deploy still serves it \(HTTP 403/);
  });
});
