// `kata-install entrypoint install|cleanup|reset`: the kata-deploy container's entrypoint. It reads
// kata-deploy's environment, works on the host mounted at /host (host commands through chroot or
// nsenter), labels its node through the Kubernetes API, and serves /healthz and /readyz.
//
//   install   label the node kata-runtime=false; plan, print the plan, apply it (or a saved plan,
//             if it still holds); label the node with what is installed; then wait. On SIGTERM,
//             clean up only if the DaemonSet no longer selects the node: a rolling update or a
//             restarted pod leaves Kata in place.
//   cleanup   uninstall and remove the labels (the admin, or a post-delete Job, asked for it).
//   reset     roll back an install that was cut short and remove the labels, leaving what is
//             installed: the node claims nothing until the next install has checked it again.
import { loadCatalog } from "../decide/catalog.js";
import { detectOptionsFromEnv } from "../detect/context.js";
import { detectFacts } from "../detect/facts.js";
import { ProbeCache } from "../detect/probe-cache.js";
import { removeFeatureFile, writeFeatureFile } from "../entrypoint/feature-file.js";
import { UserError } from "../errors.js";
import { openHost } from "../host/open.js";
import { STRATEGY_NAMES, type StrategyName } from "../host/strategy-names.js";
import { recover } from "../install/apply.js";
import { journalFor } from "../install/journal.js";
import { acquireLock } from "../install/lock.js";
import type { KubeApi } from "../kube/api.js";
import { distributionMismatch } from "../kube/distribution.js";
import { patchFresh } from "../kube/fresh-patch.js";
import { cleanupPatch, type Install, installedPatch, installingPatch } from "../kube/node-labels.js";
import { daemonSetSelects } from "../kube/selects.js";
import { publishedFactPaths, summarize } from "../kube/summary.js";
import { liftStartupTaints, parseStartupTaints, type StartupTaint } from "../kube/taints.js";
import { dataPath } from "../package-root.js";
import type { Planned } from "../pipeline.js";
import { defaultSharedFs } from "../render/kata-config.js";
import { installDirFromEnv } from "../render/layout.js";
import { nfdFeatures } from "./facts.js";
import { runInstall, runUninstall } from "./install.js";

export const ACTIONS = ["install", "cleanup", "reset"] as const;
export type Action = (typeof ACTIONS)[number];

export interface EntrypointOptions {
  hostRoot?: string;
  hostExec?: StrategyName;
  kubeconfig?: string;
  healthPort?: string;
  /** A saved plan (`plan --out`) to apply instead of planning afresh. */
  plan?: string;
}

interface Settings {
  nodeName: string | null;
  namespace: string;
  daemonSet: string;
  hostRoot: string;
  hostExec: StrategyName;
  artifacts?: string;
  artifactsTag?: string;
  plan?: string;
  healthAddress: string;
  healthPort: number;
  kubeconfig?: string;
  /** Which install this is on the node (MULTI_INSTALL_SUFFIX), for its labels. */
  suffix: string | null;
  /** The cluster's overrides file (a ConfigMap the DaemonSet mounts), read instead of the node's. */
  overrides?: string;
  /** kata-deploy's k8sDistribution: the node's runtime must be that distribution's. */
  distribution?: string;
  /** Also write the node's Kata facts as an NFD feature file. */
  nfdFeatureFile: boolean;
  /** Taints to lift once the node is installed and labelled (kata-deploy's startupTaints). */
  startupTaints: StartupTaint[];
}

/** Flags first, then kata-deploy's (and the DaemonSet's) environment, then defaults. */
export function settingsFrom(
  options: EntrypointOptions,
  env: Readonly<Record<string, string | undefined>>,
): Settings {
  const value = (name: string) => {
    const v = env[name]?.trim();
    return v === undefined || v === "" ? undefined : v;
  };
  const hostExec = options.hostExec ?? value("HOST_EXEC") ?? "chroot";
  if (!(STRATEGY_NAMES as readonly string[]).includes(hostExec))
    throw new UserError(`HOST_EXEC=${hostExec}: expected one of ${STRATEGY_NAMES.join(", ")}`);
  const portText = options.healthPort ?? value("HEALTH_PORT") ?? "8090";
  const healthPort = Number(portText);
  if (!Number.isInteger(healthPort) || healthPort < 0 || healthPort > 65535)
    throw new UserError(`health port ${portText}: expected a port number (0 picks a free one)`);
  const startupTaints = parseStartupTaints(value("STARTUP_TAINTS") ?? "");
  if (typeof startupTaints === "string") throw new UserError(`STARTUP_TAINTS: ${startupTaints}`);
  return {
    nodeName: value("NODE_NAME") ?? null,
    namespace: value("POD_NAMESPACE") ?? "kube-system",
    daemonSet: value("DAEMONSET_NAME") ?? "kata-deploy",
    hostRoot: options.hostRoot ?? value("HOST_ROOT") ?? "/host",
    hostExec: hostExec as StrategyName,
    artifacts: value("ARTIFACTS"),
    artifactsTag: value("ARTIFACTS_TAG"),
    plan: options.plan ?? value("KATA_INSTALL_PLAN"),
    healthAddress: value("HEALTH_ADDRESS") ?? "0.0.0.0",
    healthPort,
    kubeconfig: options.kubeconfig ?? value("KUBECONFIG"),
    suffix: value("MULTI_INSTALL_SUFFIX") ?? null,
    overrides: value("KATA_INSTALL_OVERRIDES"),
    distribution: value("K8S_DISTRIBUTION"),
    nfdFeatureFile: /^(true|yes|1|on)$/i.test(value("NFD_FEATURE_FILE") ?? ""),
    startupTaints,
  };
}

/** The labels this install may set: its suffix, and every shim kata-install serves. */
function installOf(settings: Settings): Install {
  return { suffix: settings.suffix, shims: loadCatalog(dataPath("rules")).shimNames() };
}

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
  if (action === "reset") {
    const host = await openHost(settings.hostRoot, settings.hostExec);
    const lock = await acquireLock(host);
    try {
      const rolledBack = await recover(journalFor(host, installDirFromEnv(process.env)));
      log(rolledBack ? "An install cut short was rolled back." : "No install was cut short.");
    } finally {
      await lock.release();
    }
    const kube = await clusterFor(settings, log);
    if (kube && node) await patchFresh(kube, node, (n) => cleanupPatch(n.meta, installOf(settings)));
    if (kube) log(`Node ${node}: kata-install's labels and annotation removed.`);
    return 0;
  }

  const stopped = trapSignals();
  const { startHealth } = await import("../entrypoint/health.js");
  const health = await startHealth(settings.healthAddress, settings.healthPort);
  log(`Health: /healthz and /readyz on ${health.address}`);
  try {
    if (settings.distribution !== undefined) {
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
    if (kube && node) {
      await patchFresh(kube, node, (n) => installingPatch(n.meta, installOf(settings)));
      log(`Node ${node}: katacontainers.io/kata-runtime=false while installing.`);
    }
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
      { showPlan: true, installed: (p) => (planned = p) },
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
    let verdict: ReturnType<typeof daemonSetSelects>;
    try {
      const [ds, current] = await Promise.all([
        kube.getDaemonSet(settings.namespace, settings.daemonSet),
        kube.getNode(node),
      ]);
      verdict = daemonSetSelects(ds, current);
    } catch (error) {
      log(
        `${signal}: cannot ask the API whether the DaemonSet still selects ${node} (${(error as Error).message}): Kata stays installed; run "kata-install entrypoint cleanup" to remove it.`,
      );
      return 0;
    }
    if (verdict.selects) {
      log(
        `${signal}: DaemonSet ${settings.namespace}/${settings.daemonSet} still selects ${node} (a rolling update or a restart): Kata stays installed.`,
      );
      return 0;
    }
    log(
      `${signal}: DaemonSet ${settings.namespace}/${settings.daemonSet} no longer selects ${node} (${verdict.why}): cleaning up.`,
    );
    return await cleanup(settings, kube, out, log);
  } finally {
    await health.close();
  }
}

async function cleanup(
  settings: Settings,
  kube: KubeApi | null,
  out: (text: string) => void,
  log: (line: string) => void,
): Promise<number> {
  const status = await runUninstall({ hostRoot: settings.hostRoot, hostExec: settings.hostExec }, out);
  const node = settings.nodeName;
  if (
    status === 0 &&
    (await removeFeatureFile(await openHost(settings.hostRoot, settings.hostExec), settings.suffix))
  )
    log("NFD: the node's Kata feature file removed.");
  if (status === 0 && kube && node) {
    await patchFresh(kube, node, (n) => cleanupPatch(n.meta, installOf(settings)));
    log(`Node ${node}: kata-install's labels and annotation removed.`);
  }
  return status;
}
