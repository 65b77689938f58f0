// Wait until the node's Ready condition is True again, as kata-deploy waits after it bounced the
// runtime and the kubelet: a read that fails counts as not ready yet.
import type { KubeApi } from "./api.js";
import { POLL_MS, sleep } from "./served.js";

export async function waitUntilReady(kube: KubeApi, name: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let seen = "Unknown";
  for (;;) {
    try {
      seen = (await kube.getNode(name)).ready;
      if (seen === "True") return;
    } catch (error) {
      seen = `unreadable: ${(error as Error).message}`;
    }
    const left = deadline - Date.now();
    if (left <= 0)
      throw new Error(
        `node ${name} is not Ready ${Math.round(timeoutMs / 1000)} s after the restart (its Ready condition: ${seen})`,
      );
    await sleep(Math.min(POLL_MS, left));
  }
}
