// Whether the DaemonSet still wants its pod on the node: what decides, on SIGTERM, between leaving
// Kata in place (a restart, a rolling update, a maintenance taint) and cleaning up (the node was
// deselected). As kata-deploy decides it: the nodeSelector and the required node affinity only.
import { describe, expect, it } from "vitest";
import type { DaemonSetView, KubeNode } from "../../src/kube/api.js";
import { daemonSetSelects } from "../../src/kube/selects.js";

const node = (labels: Record<string, string>, taints: KubeNode["taints"] = []): KubeNode => ({
  name: "n1",
  meta: { labels },
  taints,
  runtimeHandlers: null,
  ready: "True",
});
const ds = (view: Partial<DaemonSetView> = {}): DaemonSetView => ({
  namespace: "kube-system",
  name: "kata-deploy",
  deleting: false,
  nodeSelector: {},
  nodeAffinityTerms: null,
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

  it("a required affinity that matches nothing selects no node: an empty term, or no terms at all", () => {
    // As Kubernetes reads them (and kata-deploy): `every` over nothing would hand it every node.
    expect(daemonSetSelects(ds({ nodeAffinityTerms: [{}] }), node({ pool: "kata" }))).toEqual({
      selects: false,
      why: "no term of its required node affinity matches the node",
    });
    expect(daemonSetSelects(ds({ nodeAffinityTerms: [] }), node({ pool: "kata" })).selects).toBe(false);
    expect(
      daemonSetSelects(
        ds({ nodeAffinityTerms: [{}, { matchExpressions: [{ key: "pool", operator: "Exists" }] }] }),
        node({ pool: "kata" }),
      ).selects,
    ).toBe(true);
  });

  it("taints decide nothing: a maintenance NoSchedule or NoExecute taint leaves the node selected", () => {
    const tainted = node({ pool: "kata" }, [
      { key: "maintenance", effect: "NoSchedule" },
      { key: "dedicated", value: "db", effect: "NoExecute" },
    ]);
    expect(daemonSetSelects(ds({ nodeSelector: { pool: "kata" } }), tainted)).toEqual({ selects: true });
  });
});
