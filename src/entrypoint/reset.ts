// `entrypoint reset`, as kata-deploy resets a node: an install cut short is rolled back, the node's
// labels of this install go, and — unless another install still holds the node — the container
// runtime and (containerd, CRI-O) the kubelet are restarted, and the node waited for until Ready:
// what the runtime and the kubelet hold in memory is made what is on disk again.

import { installDirFromEnv } from "../decide/layout.js";
import { detectOptionsFromEnv } from "../detect/context.js";
import { detectFacts } from "../detect/facts.js";
import { RUNTIME_LAYOUTS, unreachable } from "../detect/runtime/layouts.js";
import type { RuntimeKind } from "../detect/runtime/schema.js";
import { UserError } from "../errors.js";
import type { Host } from "../host/host.js";
import { openHost } from "../host/open.js";
import { recover } from "../install/apply.js";
import { journalFor } from "../install/journal.js";
import { acquireLock } from "../install/lock.js";
import type { KubeApi } from "../kube/api.js";
import { waitUntilReady } from "../kube/ready.js";
import { releaseNode } from "../kube/release.js";
import { installOf, ownDaemonSet, type Settings } from "./settings.js";

/** The kinds the kubelet runs beside as a unit of its own (k3s, rke2, k0s, microk8s embed it). */
const OWN_KUBELET: readonly RuntimeKind[] = Object.values(RUNTIME_LAYOUTS)
  .filter((l) => l.kubelet === "own")
  .map((l) => l.kind);

async function systemctl(host: Host, args: string[]): Promise<void> {
  const run = await host.run("systemctl", args, { timeoutMs: 120_000 });
  if (!run.ok) throw new UserError(`reset: systemctl ${args.join(" ")} failed: ${run.reason}`);
}

/** The runtime's unit restarted (the first active one of its units), and the kubelet where it has one. */
async function restartRuntimeAndKubelet(host: Host, kind: RuntimeKind, log: (line: string) => void) {
  const restart = RUNTIME_LAYOUTS[kind].restart;
  let unit: string;
  switch (restart.kind) {
    case "none":
      return log(`Runtime: ${kind} reads its configuration by itself: nothing restarted.`);
    case "command": {
      const [command, ...args] = restart.argv;
      const run = await host.run(command, args, { timeoutMs: 120_000 });
      if (!run.ok) throw new UserError(`reset: ${restart.argv.join(" ")} failed: ${run.reason}`);
      unit = restart.target;
      break;
    }
    case "systemd": {
      unit = restart.units[0] ?? restart.target;
      for (const u of restart.units)
        if ((await host.run("systemctl", ["is-active", "--quiet", u])).ok) {
          unit = u;
          break;
        }
      await systemctl(host, ["daemon-reload"]);
      await systemctl(host, ["restart", unit]);
      break;
    }
    default:
      return unreachable(restart);
  }
  if (OWN_KUBELET.includes(kind)) await systemctl(host, ["restart", "kubelet"]);
  log(`Runtime: ${unit} restarted${OWN_KUBELET.includes(kind) ? ", and the kubelet" : ""}.`);
}

export async function reset(settings: Settings, kube: KubeApi | null, log: (line: string) => void) {
  const host = await openHost(settings.hostRoot, settings.hostExec);
  const lock = await acquireLock(host);
  try {
    const rolledBack = await recover(journalFor(host, installDirFromEnv(process.env)));
    log(rolledBack ? "An install cut short was rolled back." : "No install was cut short.");
  } finally {
    await lock.release();
  }
  const node = settings.nodeName;
  if (kube && node) {
    const shared = await releaseNode(kube, node, installOf(settings), ownDaemonSet(settings), log);
    log(`Node ${node}: kata-install's labels and annotation removed.`);
    // Nothing was removed from the disk, so nothing must be reloaded for the others' sake.
    if (shared !== "remove") {
      log("Another install still holds the node: the runtime and the kubelet are not restarted.");
      return 0;
    }
  }
  const facts = await detectFacts(host, detectOptionsFromEnv(process.env));
  if (facts.runtime.kind === null) {
    log("No container runtime found on the node: nothing restarted.");
    return 0;
  }
  const lockAgain = await acquireLock(host);
  try {
    await restartRuntimeAndKubelet(host, facts.runtime.kind, log);
  } finally {
    await lockAgain.release();
  }
  if (kube && node) {
    await waitUntilReady(kube, node, settings.readyWaitMs);
    log(`Node ${node}: Ready.`);
  }
  return 0;
}
