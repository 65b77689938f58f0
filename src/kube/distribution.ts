// kata-deploy's k8sDistribution (K8S_DISTRIBUTION) held against the runtime the node runs, as
// kata-deploy holds it: its chart picks the containerd directory it mounts by the value, and its
// install refuses a node where the two disagree. The distributions that keep containerd's
// configuration somewhere of their own are k3s, rke2, k0s and microk8s; every other value (k8s,
// kubeadm, vanilla, ...) is the default directory, which containerd and CRI-O read. A CRI-O node is
// never refused: /etc/crio is where it is whatever the distribution. kata-install finds the
// runtime itself, so the value is only this check.
import { RUNTIME_LAYOUTS } from "../detect/runtime/layouts.js";
import type { RuntimeKind } from "../detect/runtime/schema.js";

const LAYOUTS = Object.values(RUNTIME_LAYOUTS);
/** Each distribution value with a directory of its own, and the runtime kinds it names (layouts.ts). */
const OWN_DIRECTORY: Record<string, readonly RuntimeKind[]> = {};
for (const { kind, distribution } of LAYOUTS)
  if (distribution !== "none") OWN_DIRECTORY[distribution] = [...(OWN_DIRECTORY[distribution] ?? []), kind];
/** The kinds that keep containerd's (or CRI-O's) default directory. */
const VANILLA: readonly RuntimeKind[] = LAYOUTS.filter((l) => l.distribution === "none").map((l) => l.kind);
/** The values that name the default directory; any other value is read as them too, as kata-deploy does. */
export const VANILLA_NAMES = ["k8s", "kubeadm", "vanilla"];
export const DISTRIBUTIONS = [...VANILLA_NAMES, ...Object.keys(OWN_DIRECTORY)];

/** Why the node does not run what the distribution says, or null (also when the runtime is unknown). */
export function distributionMismatch(distribution: string, runtime: RuntimeKind | null): string | null {
  if (runtime === null || runtime === "crio") return null;
  const expected = OWN_DIRECTORY[distribution] ?? VANILLA;
  if (expected.includes(runtime)) return null;
  const fits = Object.entries(OWN_DIRECTORY).find(([, kinds]) => kinds.includes(runtime))?.[0] ?? "k8s";
  return `K8S_DISTRIBUTION=${distribution}, but this node runs ${runtime}: set k8sDistribution (k8s_distribution) to ${fits}, or leave it unset (kata-install finds the runtime itself)`;
}

/** A value that is none of the known names: read as vanilla, said so. */
export function unknownDistribution(distribution: string): string | null {
  return DISTRIBUTIONS.includes(distribution)
    ? null
    : `K8S_DISTRIBUTION=${distribution} is not one of ${DISTRIBUTIONS.join(", ")}: read as the default layout (containerd's /etc/containerd), as kata-deploy reads it`;
}
