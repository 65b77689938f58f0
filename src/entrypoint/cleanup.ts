// Cleaning a node up, in kata-deploy's order: first ask whether this install's DaemonSet still
// selects the node (then nothing is removed: a rolling update, a restart, a cleanup run by mistake);
// then take the labels off, so no Kata pod lands on files about to go; then uninstall (the runtime
// restarted on its configuration without Kata); then the NFD feature file.

import { runUninstall } from "../commands/install.js";
import { openHost } from "../host/open.js";
import type { KubeApi } from "../kube/api.js";
import { releaseNode } from "../kube/release.js";
import { daemonSetSelects, type Selection } from "../kube/selects.js";
import { removeFeatureFile } from "./feature-file.js";
import { installOf, ownDaemonSet, type Settings } from "./settings.js";

/** Whether the DaemonSet still wants the node, as the API says now. */
export async function stillSelected(kube: KubeApi, settings: Settings, node: string): Promise<Selection> {
  const [ds, current] = await Promise.all([
    kube.getDaemonSet(settings.namespace, settings.daemonSet),
    kube.getNode(node),
  ]);
  return daemonSetSelects(ds, current);
}

/** Labels, then the node's files; the DaemonSet is asked first unless the caller already did. */
export async function cleanup(
  settings: Settings,
  kube: KubeApi | null,
  out: (text: string) => void,
  log: (line: string) => void,
  asked = false,
): Promise<number> {
  const node = settings.nodeName;
  const ds = `${settings.namespace}/${settings.daemonSet}`;
  if (kube && node && !asked) {
    let verdict: Selection;
    try {
      verdict = await stillSelected(kube, settings, node);
    } catch (error) {
      log(
        `Cleanup refused: cannot ask whether DaemonSet ${ds} still selects ${node} (${(error as Error).message}); run "kata-install uninstall" on the node to remove Kata regardless.`,
      );
      return 1;
    }
    if (verdict.selects) {
      log(
        `Nothing removed: DaemonSet ${ds} still selects ${node}, and its pods would lose Kata. Delete the DaemonSet (or narrow its nodeSelector) and its pods clean up; or run "kata-install uninstall" on the node.`,
      );
      return 0;
    }
  }
  if (kube && node) {
    const shared = await releaseNode(kube, node, installOf(settings), ownDaemonSet(settings), log);
    log(
      `Node ${node}: kata-install's labels and annotation removed${shared === "remove" ? "" : ` (katacontainers.io/kata-runtime stays${shared === "demote" ? ', "false"' : ""}: another install holds the node)`}.`,
    );
  }
  const status = await runUninstall({ hostRoot: settings.hostRoot, hostExec: settings.hostExec }, out);
  if (
    status === 0 &&
    (await removeFeatureFile(await openHost(settings.hostRoot, settings.hostExec), settings.suffix))
  )
    log("NFD: the node's Kata feature file removed.");
  return status;
}
