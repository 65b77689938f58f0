// What the entrypoint runs with: its flags first, then kata-deploy's (and the DaemonSet's)
// environment, then defaults; every value checked before anything is touched.

import { UserError } from "../errors.js";
import { STRATEGY_NAMES, type StrategyName } from "../host/strategy-names.js";
import { loadCatalog } from "../inputs/catalog.js";
import type { Install } from "../kube/node-labels.js";
import { parseStartupTaints, type StartupTaint } from "../kube/taints.js";
import { CHART_SHIMS } from "../manifests/kata-deploy/chart.js";
import { dataPath } from "../package-root.js";

export interface EntrypointOptions {
  hostRoot?: string;
  hostExec?: StrategyName;
  kubeconfig?: string;
  healthPort?: string;
  /** A saved plan (`plan --out`) to apply instead of planning afresh. */
  plan?: string;
}

export interface Settings {
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
  /** How long the node may take to list the handlers the install wrote (kata-deploy: 120 s). */
  handlerWaitMs: number;
  /** How long reset waits for the node to be Ready after the restarts (kata-deploy: 300 s). */
  readyWaitMs: number;
}

function seconds(name: string, text: string | undefined, dflt: number): number {
  if (text === undefined) return dflt * 1000;
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0)
    throw new UserError(`${name}=${text}: expected a number of seconds`);
  return value * 1000;
}

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
    handlerWaitMs: seconds("HANDLER_WAIT_SECONDS", value("HANDLER_WAIT_SECONDS"), 120),
    readyWaitMs: seconds("NODE_READY_TIMEOUT_SECONDS", value("NODE_READY_TIMEOUT_SECONDS"), 300),
  };
}

/** The labels this install may set: its suffix, and every shim it can install (a release's, or the rules'). */
export function installOf(settings: Settings): Install {
  const catalog = loadCatalog(dataPath("rules"));
  return { suffix: settings.suffix, shims: [...new Set([...catalog.shimNames(), ...CHART_SHIMS])] };
}

/** The DaemonSet that runs this pod. */
export function ownDaemonSet(settings: Settings): { namespace: string; name: string } {
  return { namespace: settings.namespace, name: settings.daemonSet };
}
