// Whether the runtime serves the handlers the install wrote, as the node reports them
// (status.runtimeHandlers), waited for as kata-deploy waits: restarting a runtime says it restarted,
// not that it read what was written, and a node labelled kata-runtime=true whose runtime ignored the
// handlers would take Kata pods it cannot run. The kubelet republishes the list on a status sync,
// so the answer trails the restart; a node that does not report the list, or that cannot be read
// three times running, cannot be judged here and is not held to it.
import type { KubeApi } from "./api.js";

export type HandlerReport =
  | { kind: "served" }
  | { kind: "missing"; missing: string[]; reported: string[] }
  | { kind: "unknown"; why: string };

const READ_FAILURES = 3;
export const POLL_MS = 2000;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function handlersServed(
  kube: KubeApi,
  name: string,
  expected: readonly string[],
  timeoutMs: number,
): Promise<HandlerReport> {
  if (expected.length === 0) return { kind: "unknown", why: "no handler to look for" };
  const deadline = Date.now() + timeoutMs;
  let last: HandlerReport | null = null;
  let failures = 0;
  for (;;) {
    try {
      const node = await kube.getNode(name);
      failures = 0;
      if (node.runtimeHandlers === null)
        return { kind: "unknown", why: "the node does not report its runtime handlers" };
      const missing = expected.filter((h) => !node.runtimeHandlers?.includes(h));
      if (missing.length === 0) return { kind: "served" };
      last = { kind: "missing", missing, reported: node.runtimeHandlers };
    } catch (error) {
      if (++failures >= READ_FAILURES)
        return { kind: "unknown", why: `the node cannot be read (${(error as Error).message})` };
    }
    const left = deadline - Date.now();
    if (left <= 0) return last ?? { kind: "unknown", why: "the node could not be read in time" };
    await sleep(Math.min(POLL_MS, left));
  }
}
