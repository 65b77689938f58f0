// `kata-install entrypoint install|cleanup|reset`: the kata-deploy container's entrypoint. It reads
// kata-deploy's environment, works on the host mounted at /host (host commands through chroot or
// nsenter), labels its node through the Kubernetes API, and serves /healthz and /readyz.
//
//   install   claim the node (kata-runtime=false where no install serves it yet); plan, print the
//             plan, apply it (or a saved plan, if it still holds); wait until the node reports the
//             runtime serving the handlers written; label the node with what is installed; then
//             wait. On SIGTERM, clean up only if the DaemonSet no longer selects the node: a
//             rolling update or a restarted pod leaves Kata in place.
//   cleanup   if the DaemonSet no longer selects the node: remove the labels, then uninstall.
//   reset     roll back an install that was cut short and remove the labels, leaving what is
//             installed; restart the runtime and the kubelet unless another install holds the node.

import { handlerName, installDirFromEnv } from "../decide/layout.js";
import { detectOptionsFromEnv } from "../detect/context.js";
import { detectFacts } from "../detect/facts.js";
import { ProbeCache } from "../detect/probe-cache.js";
import { cleanup, stillSelected } from "../entrypoint/cleanup.js";
import { writeFeatureFile } from "../entrypoint/feature-file.js";
import { reset } from "../entrypoint/reset.js";
import { type EntrypointOptions, installOf, type Settings, settingsFrom } from "../entrypoint/settings.js";
import { UserError } from "../errors.js";
import { openHost } from "../host/open.js";
import type { KubeApi } from "../kube/api.js";
import { distributionMismatch, unknownDistribution } from "../kube/distribution.js";
import { patchFresh } from "../kube/fresh-patch.js";
import { installedPatch, installingPatch } from "../kube/node-labels.js";
import type { Selection } from "../kube/selects.js";
import { handlersServed } from "../kube/served.js";
import { publishedFactPaths, summarize } from "../kube/summary.js";
import { liftStartupTaints } from "../kube/taints.js";
import type { Planned } from "../pipeline/pipeline.js";
import { defaultSharedFs } from "../render/kata-config.js";
import { nfdFeatures } from "./facts.js";
import { runInstall } from "./install.js";

export type { EntrypointOptions } from "../entrypoint/settings.js";

export const ACTIONS = ["install", "cleanup", "reset"] as const;
export type Action = (typeof ACTIONS)[number];

/** The API client for labelling this node; null outside a cluster (no NODE_NAME), said so. */
async function clusterFor(settings: Settings, log: (line: string) => void): Promise<KubeApi | null> {
  if (settings.nodeName === null) {
    log("NODE_NAME is not set: not in a cluster, so no node labels are written");
    return null;
  }
  const { kubeApi } = await import("../kube/api.js");
  return kubeApi(settings.kubeconfig);
}

/**
 * SIGTERM and SIGINT caught from the start: one that comes while installing lets the install finish
 * (the journal would recover a kill, but a finished install is better), and is answered after it.
 */
function trapSignals(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals) => {
      process.off("SIGTERM", on);
      process.off("SIGINT", on);
      resolve(signal);
    };
    process.on("SIGTERM", on);
    process.on("SIGINT", on);
  });
}

/**
 * Claim the node before anything is written, best-effort as kata-deploy: a failed label write
 * must not fail the install (a rare orphan against a common outage).
 */
async function claim(kube: KubeApi, settings: Settings, node: string, log: (line: string) => void) {
  try {
    const patched = await patchFresh(kube, node, (n) => installingPatch(n.meta, installOf(settings)));
    log(
      patched
        ? `Node ${node}: claimed (katacontainers.io/kata-runtime=false where no install serves it yet) while installing.`
        : `Node ${node}: already labelled: its labels stay as they are while installing.`,
    );
  } catch (error) {
    log(
      `Node ${node}: not claimed (${(error as Error).message}): should the install fail before it labels the node, a cleanup will not find it by its labels.`,
    );
  }
}

/**
 * Whether the runtime serves what was written, as the node reports it: none of the handlers is a
 * failure (the runtime ignored its configuration); some missing, a warning.
 */
async function served(
  kube: KubeApi,
  settings: Settings,
  node: string,
  planned: Planned,
  runtime: string,
  log: (line: string) => void,
): Promise<boolean> {
  const expected = planned.decision.shims.map((s) => handlerName(planned.decision, s.name));
  const report = await handlersServed(kube, node, expected, settings.handlerWaitMs);
  if (report.kind === "served") log(`Node ${node}: ${runtime} serves ${expected.join(", ")}.`);
  else if (report.kind === "unknown")
    log(`Node ${node}: whether ${runtime} serves ${expected.join(", ")} cannot be told (${report.why}).`);
  else if (report.missing.length === expected.length) {
    log(
      `Node ${node}: the node reports none of ${expected.join(", ")} among its runtime handlers (${report.reported.join(", ") || "none"}) after ${Math.round(settings.handlerWaitMs / 1000)} s: ${runtime} does not serve the configuration written. Not labelled; check ${runtime}'s log for a configuration it refused or did not read.`,
    );
    return false;
  } else
    log(
      `Node ${node}: ${runtime} serves Kata, but not ${report.missing.join(", ")}: the RuntimeClasses of those handlers will not run here.`,
    );
  return true;
}

export async function runEntrypoint(
  action: string,
  options: EntrypointOptions,
  out: (text: string) => void,
  log: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<number> {
  if (!(ACTIONS as readonly string[]).includes(action))
    throw new UserError(`entrypoint ${action}: expected one of ${ACTIONS.join(", ")}`);
  const settings = settingsFrom(options, process.env);
  const node = settings.nodeName;
  if (action === "cleanup") return cleanup(settings, await clusterFor(settings, log), out, log);
  if (action === "reset") return reset(settings, await clusterFor(settings, log), log);

  const stopped = trapSignals();
  const { startHealth } = await import("../entrypoint/health.js");
  const health = await startHealth(settings.healthAddress, settings.healthPort);
  log(`Health: /healthz and /readyz on ${health.address}`);
  try {
    if (settings.distribution !== undefined) {
      const unknown = unknownDistribution(settings.distribution);
      if (unknown) log(`${unknown}.`);
      const host = await openHost(settings.hostRoot, settings.hostExec);
      const facts = await detectFacts(host, detectOptionsFromEnv(process.env));
      const mismatch = distributionMismatch(settings.distribution, facts.runtime.kind);
      if (mismatch !== null) {
        log(`Refused: ${mismatch}.`);
        health.setReady(false, "wrong K8S_DISTRIBUTION");
        return 1;
      }
    }
    const kube = await clusterFor(settings, log);
    if (kube && node) await claim(kube, settings, node, log);
    health.setReady(false, "installing");
    if (settings.plan)
      log(
        `Applying the saved plan ${settings.plan} (refused if the node or the inputs changed since it was made).`,
      );
    let planned: Planned | null = null;
    const status = await runInstall(
      {
        hostRoot: settings.hostRoot,
        hostExec: settings.hostExec,
        artifacts: settings.artifacts,
        artifactsTag: settings.artifactsTag,
        plan: settings.plan,
        overrides: settings.overrides,
      },
      out,
      {
        showPlan: true,
        installed: (p) => (planned = p),
        // The pod's /host is the node's /, and its plan file comes from where the admin put it.
        remake: {
          hostRoot: "/",
          where: " on the node",
          next: "review it, put it where this pod reads it (the plans ConfigMap), and delete the pod to apply it",
        },
      },
    );
    if (status !== 0 || planned === null) {
      health.setReady(false, "install failed");
      return status === 0 ? 1 : status;
    }
    // The node as it is now, installed (the Kata version, its hypervisors), with the decision applied.
    const host = await openHost(settings.hostRoot, settings.hostExec);
    const probes = await ProbeCache.load(host, installDirFromEnv(process.env));
    const after = await detectFacts(host, { probes, ...detectOptionsFromEnv(process.env) });
    const { decision, prepared, catalog } = planned as Planned;
    const summary = summarize(
      after,
      decision,
      (shim) => defaultSharedFs(catalog, shim),
      publishedFactPaths(prepared.rules),
    );
    if (kube && node) {
      if (!(await served(kube, settings, node, planned, after.runtime.kind ?? "the runtime", log))) {
        health.setReady(false, "the runtime does not serve the handlers");
        return 1;
      }
      await patchFresh(kube, node, (n) => installedPatch(n.meta, installOf(settings), summary));
      log(
        `Node ${node}: katacontainers.io/kata-runtime=true, shims ${summary.shims.join(", ") || "(none)"}.`,
      );
      if (settings.startupTaints.length > 0) await liftStartupTaints(kube, node, settings.startupTaints, log);
    }
    if (settings.nfdFeatureFile) {
      const text = await nfdFeatures(after, settings.hostRoot, "the kata-install entrypoint");
      log(`NFD: the node's Kata features in ${await writeFeatureFile(host, settings.suffix, text)}.`);
    }
    health.setReady(true, `installed: ${summary.shims.join(", ") || "no shim"}`);
    log("Installed. Waiting for SIGTERM.");
    const signal = await stopped;
    health.setReady(false, "stopping");
    if (!kube || !node) {
      log(`${signal}: no cluster to ask whether this node is still wanted: Kata stays installed.`);
      return 0;
    }
    const ds = `${settings.namespace}/${settings.daemonSet}`;
    let verdict: Selection;
    try {
      verdict = await stillSelected(kube, settings, node);
    } catch (error) {
      log(
        `${signal}: cannot ask the API whether the DaemonSet still selects ${node} (${(error as Error).message}): Kata stays installed; run "kata-install entrypoint cleanup" to remove it.`,
      );
      return 0;
    }
    if (verdict.selects) {
      log(
        `${signal}: DaemonSet ${ds} still selects ${node} (a rolling update or a restart): Kata stays installed.`,
      );
      return 0;
    }
    log(`${signal}: DaemonSet ${ds} no longer selects ${node} (${verdict.why}): cleaning up.`);
    return await cleanup(settings, kube, out, log, true);
  } finally {
    await health.close();
  }
}
