// kata-deploy's k8sDistribution (K8S_DISTRIBUTION) held against the runtime the node runs: the
// chart picks the containerd directory by it, and its install refuses a node where the two
// disagree; kata-install finds the runtime itself, and refuses the same way, naming both.
import type { RuntimeKind } from "../detect/runtime/schema.js";

const RUNTIMES: Record<string, readonly RuntimeKind[]> = {
  k8s: ["containerd", "crio"],
  k3s: ["k3s"],
  rke2: ["rke2"],
  k0s: ["k0s"],
  microk8s: ["microk8s"],
};

/** Why the node does not run what the distribution says, or null (also when the runtime is unknown). */
export function distributionMismatch(distribution: string, runtime: RuntimeKind | null): string | null {
  const expected = RUNTIMES[distribution];
  if (expected === undefined)
    return `K8S_DISTRIBUTION=${distribution}: expected one of ${Object.keys(RUNTIMES).join(", ")}`;
  if (runtime === null || expected.includes(runtime)) return null;
  const fits = Object.entries(RUNTIMES).find(([, kinds]) => kinds.includes(runtime))?.[0];
  return `K8S_DISTRIBUTION=${distribution}, but this node runs ${runtime}: set k8sDistribution (k8s_distribution) to ${fits}, or leave it unset (kata-install finds the runtime itself)`;
}
