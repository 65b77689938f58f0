// Startup taints: which a node's install lifts, and that it lifts them through the API without
// losing a taint another controller added meanwhile.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kubeApi } from "../../src/kube/api.js";
import { liftStartupTaints, liftTaintsPatch, parseStartupTaints } from "../../src/kube/taints.js";
import { changeAfterFirstRead, type FakeKube, node, startFakeKube } from "../helpers/kube-api.js";

describe("startup taints", () => {
  it("entries: a key (any effect) or key:effect, by commas or spaces, spaces around ':' allowed; anything else is named", () => {
    expect(parseStartupTaints("a, b:NoSchedule")).toEqual([{ key: "a" }, { key: "b", effect: "NoSchedule" }]);
    // As kata-deploy splits STARTUP_TAINTS (commas, spaces, tabs, newlines) and trims around ':'.
    expect(parseStartupTaints("kata.io/not-ready : NoSchedule  gpu\tx:NoExecute\n")).toEqual([
      { key: "kata.io/not-ready", effect: "NoSchedule" },
      { key: "gpu" },
      { key: "x", effect: "NoExecute" },
    ]);
    expect(parseStartupTaints(" , ")).toEqual([]);
    expect(parseStartupTaints("a:")).toBe(
      '"a:": expected a taint key, or key:effect with an effect of NoSchedule, PreferNoSchedule, NoExecute',
    );
    expect(parseStartupTaints("b:Sometimes")).toBe(
      '"b:Sometimes": expected a taint key, or key:effect with an effect of NoSchedule, PreferNoSchedule, NoExecute',
    );
  });

  it("only the listed taints go, by key or by key and effect; none there, no patch", () => {
    const n = {
      name: "n1",
      resourceVersion: "7",
      meta: {},
      runtimeHandlers: null,
      ready: "True",
      taints: [
        { key: "kata", effect: "NoSchedule" },
        { key: "kata", effect: "NoExecute" },
        { key: "gpu", effect: "NoSchedule" },
        { key: "dedicated", value: "db", effect: "NoSchedule" },
      ],
    };
    expect(liftTaintsPatch(n, [{ key: "kata", effect: "NoExecute" }, { key: "gpu" }])).toEqual({
      patch: {
        metadata: {},
        spec: {
          taints: [
            { key: "kata", effect: "NoSchedule" },
            { key: "dedicated", value: "db", effect: "NoSchedule" },
          ],
        },
      },
      lifted: ["kata:NoExecute", "gpu:NoSchedule"],
    });
    expect(liftTaintsPatch(n, [{ key: "other" }])).toBeNull();
  });

  describe("through the API", () => {
    let kube: FakeKube;
    beforeAll(async () => {
      kube = await startFakeKube();
    });
    afterAll(() => kube.close());
    const taintsOf = () => (kube.nodes.get("n1") as { spec: { taints: unknown[] } }).spec.taints;

    it("lifted, the other taints kept; a node changed between read and patch is read again", async () => {
      kube.nodes.set(
        "n1",
        node(
          "n1",
          {},
          {
            spec: {
              taints: [
                { key: "kata", effect: "NoSchedule" },
                { key: "x", effect: "NoSchedule" },
              ],
            },
          },
        ),
      );
      (kube.nodes.get("n1") as { metadata: Record<string, unknown> }).metadata.resourceVersion = "1";
      const api = await kubeApi(kube.kubeconfig);
      // Another controller adds a taint right after the first read: the first patch is refused (409).
      const reads = changeAfterFirstRead(api, kube, "n1", (n) => {
        const spec = n.spec as { taints: unknown[] };
        spec.taints = [...spec.taints, { key: "late", effect: "NoExecute" }];
      });
      const log: string[] = [];
      await liftStartupTaints(api, "n1", [{ key: "kata" }], (l) => log.push(l));
      expect(taintsOf()).toEqual([
        { key: "x", effect: "NoSchedule" },
        { key: "late", effect: "NoExecute" },
      ]);
      expect(reads()).toBe(2);
      expect(log).toEqual(["Node n1: startup taint(s) kata:NoSchedule lifted."]);
    });

    it("a failure is said, and the install stands", async () => {
      const log: string[] = [];
      await liftStartupTaints(await kubeApi(kube.kubeconfig), "gone", [{ key: "kata" }], (l) => log.push(l));
      expect(log[0]).toMatch(/^Node gone: the startup taints stay \(.*HTTP 404.*\); Kata is installed\.$/);
    });
  });
});
