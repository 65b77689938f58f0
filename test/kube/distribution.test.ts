// K8S_DISTRIBUTION against the node's runtime, as kata-deploy holds them: the distributions with a
// containerd directory of their own must match; every other value is the default layout; CRI-O is
// never refused.
import { describe, expect, it } from "vitest";
import { distributionMismatch, unknownDistribution } from "../../src/kube/distribution.js";

describe("K8S_DISTRIBUTION", () => {
  it("kubeadm, vanilla and k8s are the default layout: containerd and CRI-O fit, k3s does not", () => {
    for (const d of ["k8s", "kubeadm", "vanilla"]) {
      expect(distributionMismatch(d, "containerd")).toBeNull();
      expect(unknownDistribution(d)).toBeNull();
    }
    expect(distributionMismatch("kubeadm", "k3s")).toBe(
      "K8S_DISTRIBUTION=kubeadm, but this node runs k3s: set k8sDistribution (k8s_distribution) to k3s, or leave it unset (kata-install finds the runtime itself)",
    );
  });

  it("a value it does not know is read as the default layout, and said", () => {
    expect(distributionMismatch("openshift", "containerd")).toBeNull();
    expect(distributionMismatch("openshift", "rke2")).toMatch(/set k8sDistribution .* to rke2/);
    expect(unknownDistribution("openshift")).toMatch(
      /^K8S_DISTRIBUTION=openshift is not one of k8s, kubeadm/,
    );
  });

  it("a CRI-O node is never refused, whatever the distribution", () => {
    for (const d of ["k3s", "rke2", "k0s", "microk8s", "k8s"])
      expect(distributionMismatch(d, "crio")).toBeNull();
  });

  it("a distribution with its own directory: its runtime only", () => {
    expect(distributionMismatch("k3s", "k3s")).toBeNull();
    expect(distributionMismatch("k3s", "containerd")).toMatch(
      /runs containerd: set k8sDistribution .* to k8s/,
    );
    expect(distributionMismatch("microk8s", null)).toBeNull();
  });
});
