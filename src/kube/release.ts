// A node let go by one install (cleanup, reset), as kata-deploy releases it: this install's mark,
// shim labels and summary go; the shared kata-runtime label stays while another install's mark
// serves, turns "false" while only unfinished ones are left, and goes with the last one. An older
// kata-deploy leaves no mark, so when ours is the last, a DaemonSet of another kata-deploy that
// still selects the node (its live pod is the evidence) keeps the label too.
import type { DaemonSetView, KubeApi, KubeNode } from "./api.js";
import { patchFresh } from "./fresh-patch.js";
import { cleanupPatch, type Install, sharedLabelAfter } from "./node-labels.js";
import { daemonSetSelects } from "./selects.js";

export type Release = "keep" | "demote" | "remove";

/** Another kata-deploy DaemonSet (not `own`, by uid) that selects the node. */
async function otherKataDeploy(
  kube: KubeApi,
  node: KubeNode,
  own: { namespace: string; name: string },
): Promise<DaemonSetView | undefined> {
  const ours = (await kube.getDaemonSet(own.namespace, own.name))?.uid;
  return (await kube.listDaemonSets()).find(
    (ds) =>
      (ours === undefined || ds.uid !== ours) &&
      !(ds.namespace === own.namespace && ds.name === own.name) &&
      ds.name.includes("kata-deploy") &&
      daemonSetSelects(ds, node).selects,
  );
}

/** Takes this install's labels off; says what became of the shared label. */
export async function releaseNode(
  kube: KubeApi,
  name: string,
  install: Install,
  own: { namespace: string; name: string },
  log: (line: string) => void,
): Promise<Release> {
  const node = await kube.getNode(name);
  let legacy = false;
  if (sharedLabelAfter(node.meta, install) === "remove") {
    try {
      const other = await otherKataDeploy(kube, node, own);
      if (other) {
        legacy = true;
        log(
          `Node ${name}: DaemonSet ${other.namespace}/${other.name} (another kata-deploy) still selects it: katacontainers.io/kata-runtime stays.`,
        );
      }
    } catch (error) {
      // Not knowing, the label is left: taking it from under another install is the worse mistake.
      legacy = true;
      log(
        `Node ${name}: cannot ask whether another kata-deploy still serves it (${(error as Error).message}): katacontainers.io/kata-runtime stays.`,
      );
    }
  }
  let verdict: Release = "remove";
  await patchFresh(kube, name, (n) => {
    const shared = sharedLabelAfter(n.meta, install);
    verdict = legacy && shared === "remove" ? "keep" : shared;
    const patch = cleanupPatch(n.meta, install, legacy);
    const empty =
      Object.keys(patch.metadata.labels ?? {}).length === 0 &&
      Object.keys(patch.metadata.annotations ?? {}).length === 0;
    return empty ? null : patch;
  });
  return verdict;
}
