// Whether the DaemonSet still wants its pod on the node: what decides, on SIGTERM, between leaving
// Kata in place (a restart, a rolling update) and cleaning up (the node was deselected).
import { describe, expect, it } from "vitest";
import type { DaemonSetView, KubeNode } from "../../src/kube/api.js";
import { daemonSetSelects } from "../../src/kube/selects.js";

const node = (labels: Record<string, string>, taints: KubeNode["taints"] = []): KubeNode => ({
  name: "n1",
  meta: { labels },
  taints,
});
const ds = (view: Partial<DaemonSetView> = {}): DaemonSetView => ({
  deleting: false,
  nodeSelector: {},
  nodeAffinityTerms: [],
  tolerations: [],
  ...view,
});

describe("does the DaemonSet still select the node", () => {
  it("a DaemonSet with no constraints selects every node", () => {
    expect(daemonSetSelects(ds(), node({}))).toEqual({ selects: true });
  });

  it("gone or being deleted: no", () => {
    expect(daemonSetSelects(null, node({}))).toEqual({ selects: false, why: "the DaemonSet is gone" });
    expect(daemonSetSelects(ds({ deleting: true }), node({}))).toMatchObject({ selects: false });
  });

  it("nodeSelector: every label must match", () => {
    const view = ds({ nodeSelector: { kata: "yes", zone: "a" } });
    expect(daemonSetSelects(view, node({ kata: "yes", zone: "a", other: "x" }))).toEqual({ selects: true });
    expect(daemonSetSelects(view, node({ kata: "yes", zone: "b" }))).toEqual({
      selects: false,
      why: "its nodeSelector wants zone=a, the node has b",
    });
  });

  it("required node affinity: terms are ORed, expressions ANDed, every operator", () => {
    const view = ds({
      nodeAffinityTerms: [
        {
          matchExpressions: [
            { key: "kvm", operator: "Exists" },
            { key: "cpus", operator: "Gt", values: ["8"] },
            { key: "pool", operator: "NotIn", values: ["gpu"] },
          ],
        },
        { matchExpressions: [{ key: "kata", operator: "In", values: ["forced"] }] },
        { matchFields: [{ key: "metadata.name", operator: "In", values: ["n-special"] }] },
      ],
    });
    expect(daemonSetSelects(view, node({ kvm: "", cpus: "16", pool: "web" })).selects).toBe(true);
    expect(daemonSetSelects(view, node({ kvm: "", cpus: "4" })).selects).toBe(false);
    expect(daemonSetSelects(view, node({ kvm: "", cpus: "16", pool: "gpu" })).selects).toBe(false);
    expect(daemonSetSelects(view, node({ kata: "forced" })).selects).toBe(true);
    expect(daemonSetSelects(view, { ...node({}), name: "n-special" }).selects).toBe(true);
    expect(
      daemonSetSelects(
        ds({ nodeAffinityTerms: [{ matchExpressions: [{ key: "x", operator: "DoesNotExist" }] }] }),
        node({ x: "1" }),
      ).selects,
    ).toBe(false);
  });

  it("taints: NoSchedule and NoExecute must be tolerated; PreferNoSchedule and the node-condition taints do not count", () => {
    const tainted = node({}, [{ key: "dedicated", value: "db", effect: "NoSchedule" }]);
    expect(daemonSetSelects(ds(), tainted)).toEqual({
      selects: false,
      why: "it does not tolerate the node's taint dedicated:NoSchedule",
    });
    expect(
      daemonSetSelects(ds({ tolerations: [{ key: "dedicated", operator: "Equal", value: "db" }] }), tainted)
        .selects,
    ).toBe(true);
    expect(
      daemonSetSelects(ds({ tolerations: [{ key: "dedicated", operator: "Equal", value: "web" }] }), tainted)
        .selects,
    ).toBe(false);
    expect(daemonSetSelects(ds({ tolerations: [{ operator: "Exists" }] }), tainted).selects).toBe(true);
    expect(daemonSetSelects(ds(), node({}, [{ key: "soft", effect: "PreferNoSchedule" }])).selects).toBe(
      true,
    );
    expect(
      daemonSetSelects(ds(), node({}, [{ key: "node.kubernetes.io/not-ready", effect: "NoExecute" }]))
        .selects,
    ).toBe(true);
  });
});
