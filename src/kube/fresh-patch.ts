// A node patch made from the node as it is now, with its resourceVersion as a precondition: two
// installs on one node (or a controller) changing it at once make the API refuse the stale patch
// (409) instead of one undoing the other, and the patch is made again from a fresh read.
import type { KubeApi, KubeNode } from "./api.js";
import type { MergePatch } from "./node-labels.js";

const ATTEMPTS = 3;

/** `build` gives the patch for the node read, or null when there is nothing to change. */
export async function patchFresh(
  kube: KubeApi,
  name: string,
  build: (node: KubeNode) => MergePatch | null,
): Promise<KubeNode | null> {
  for (let attempt = 1; ; attempt++) {
    const node = await kube.getNode(name);
    const patch = build(node);
    if (patch === null) return null;
    try {
      return await kube.patchNode(name, {
        ...patch,
        metadata: { ...patch.metadata, resourceVersion: node.resourceVersion },
      });
    } catch (error) {
      if (attempt >= ATTEMPTS || !(error as Error).message.includes("HTTP 409")) throw error;
    }
  }
}
