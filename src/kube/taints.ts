// Startup taints (kata-deploy's startupTaints, STARTUP_TAINTS): a node is provisioned with one to
// keep Kata pods off it until Kata is there; the install lifts it once the node is labelled, and
// only then. An entry is a taint key (any effect) or "key:effect"; entries are separated by commas
// or white space, as kata-deploy reads them, and spaces around the ':' are the entry's own.
import type { KubeApi, KubeNode } from "./api.js";
import { patchFresh } from "./fresh-patch.js";
import type { MergePatch } from "./node-labels.js";

export const EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"] as const;

export interface StartupTaint {
  key: string;
  effect?: string;
}

/** "a,b:NoSchedule c : NoExecute" → the entries; an entry that is not one is named. */
export function parseStartupTaints(text: string): StartupTaint[] | string {
  const out: StartupTaint[] = [];
  for (const entry of text
    .replace(/\s*:\s*/g, ":")
    .split(/[,\s]+/)
    .filter(Boolean)) {
    const [key, effect, extra] = entry.split(":");
    if (
      !key ||
      extra !== undefined ||
      (effect !== undefined && !(EFFECTS as readonly string[]).includes(effect))
    )
      return `"${entry}": expected a taint key, or key:effect with an effect of ${EFFECTS.join(", ")}`;
    out.push(effect === undefined ? { key } : { key, effect });
  }
  return out;
}

/** The patch that takes the startup taints off (the whole list: a merge patch replaces it), or null. */
export function liftTaintsPatch(
  node: KubeNode,
  startup: StartupTaint[],
): { patch: MergePatch; lifted: string[] } | null {
  const lifts = (t: KubeNode["taints"][number]) =>
    startup.some((s) => s.key === t.key && (s.effect === undefined || s.effect === t.effect));
  const lifted = node.taints.filter(lifts);
  if (lifted.length === 0) return null;
  return {
    patch: { metadata: {}, spec: { taints: node.taints.filter((t) => !lifts(t)) } },
    lifted: lifted.map((t) => `${t.key}:${t.effect}`),
  };
}

/**
 * Lift them, best-effort as kata-deploy does: a taint left in place only keeps pods away a while
 * longer, so a failure is said and the install stands. The node's resourceVersion guards the
 * patch (patchFresh): a taint another controller adds meanwhile is not lost.
 */
export async function liftStartupTaints(
  kube: KubeApi,
  name: string,
  startup: StartupTaint[],
  log: (line: string) => void,
): Promise<void> {
  let lifted: string[] = [];
  try {
    await patchFresh(kube, name, (node) => {
      const lift = liftTaintsPatch(node, startup);
      lifted = lift?.lifted ?? [];
      return lift?.patch ?? null;
    });
  } catch (error) {
    return log(`Node ${name}: the startup taints stay (${(error as Error).message}); Kata is installed.`);
  }
  log(
    lifted.length > 0
      ? `Node ${name}: startup taint(s) ${lifted.join(", ")} lifted.`
      : `Node ${name}: no startup taint to lift.`,
  );
}
