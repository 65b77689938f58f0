// kata-deploy's chart values → kata-install's values (templates/k8s/values.toml), key by key, to the
// same effect where kata-install has one; every other key is accounted for with why (ledger.ts).
// Each part of the chart is mapped by a function of its own, in the order of the chart's values.yaml
// (the first account of a key stands, so the order is part of the mapping).
import type { Catalog } from "../../decide/catalog.js";
import type { InputIssue } from "../../input-error.js";
import type { Values } from "../values-type.js";
import { mapCustomRuntimes } from "./custom-runtimes.js";
import { type Entry, Ledger } from "./ledger.js";
import { mapShims } from "./map-shims.js";
import { Mapping } from "./mapping.js";
import type { ChartFile } from "./read.js";

export interface Mapped {
  /** kata-install's values the file sets (merged over the defaults by the caller). */
  overlay: Values;
  entries: Entry[];
  /** The keys not carried, with why: warnings. */
  notes: InputIssue[];
}

export function mapChartValues(
  chart: ChartFile,
  catalog: Catalog,
  base: Values,
  issues: InputIssue[],
): Mapped {
  const m = new Mapping(chart, catalog, issues);
  mapDeployment(m);
  mapImages(m);
  mapMonitor(m);
  mapContainerRuntime(m);
  mapPod(m);
  mapHealth(m);
  mapSnapshotters(m);
  mapShims(m, base);
  mapRuntimeClasses(m);
  mapInstallation(m);
  mapNodeFeatureDiscovery(m);
  mapVerification(m);
  mapCustomRuntimesOf(m);
  for (const key of ["nameOverride", "fullnameOverride"])
    m.dropped([key], "names the chart's helper objects; kata-install's are named by name");
  const entries = m.ledger.settle();
  return { overlay: m.overlay, entries, notes: [...Ledger.notes(chart.file, entries), ...m.notes] };
}

/**
 * The deployment: a DaemonSet. Job mode is refused, not turned into one: a cluster chose it to
 * have no long-running privileged pod holding a token, which a DaemonSet is.
 */
function mapDeployment(m: Mapping): void {
  if ((m.values.deploymentMode ?? "daemonset") === "job") {
    m.ledger.notCarried(["deploymentMode"], "refused");
    m.ledger.notCarried(["job"], "job mode only (deploymentMode: job is refused)");
    m.issue(
      ["deploymentMode"],
      'job: kata-install has no job mode (per-node Jobs without a service-account token); it runs a DaemonSet whose pods keep a token that reads nodes and DaemonSets and patches nodes, and clean their node up when it is deselected. Set deploymentMode: daemonset to take that DaemonSet (docs/commands.md, "Job mode and kata-monitor"), or run `kata-install install` on the nodes yourself',
    );
  } else {
    m.ledger.carried(["deploymentMode"], "the DaemonSet");
    m.ledger.noEffect(["job"], "only with deploymentMode: job");
  }
}

/** The images: kata-deploy's own is not carried (kata-install runs its own), its tag is the release. */
function mapImages(m: Mapping): void {
  m.direct(["imagePullPolicy"], "image_pull_policy");
  m.direct(["imagePullSecrets"], "image_pull_secrets");
  const reference = m.values.image?.reference ?? "";
  if (m.defaultOf(["image", "reference"], "quay.io/kata-containers/kata-deploy"))
    m.ledger.noEffect(["image", "reference"], "kata-deploy's own image: kata-install runs its image (image)");
  else
    m.ledger.notCarried(
      ["image", "reference"],
      "kata-deploy's image (its binary and the whole release): kata-install runs its own image (image) and takes Kata's files from the release's artifact images (artifacts): mirror those instead",
    );
  const tag = m.values.image?.tag ?? "";
  if (tag === "" || reference.includes("@"))
    m.ledger.noEffect(
      ["image", "tag"],
      reference.includes("@") ? "the image is named by digest" : "the chart's own release",
    );
  else m.direct(["image", "tag"], "kata_version");

  for (const [key, dflt] of [
    ["reference", "quay.io/kata-containers/kubectl"],
    ["tag", "latest"],
  ] as const) {
    if (m.defaultOf(["kubectlImage", key], dflt))
      m.ledger.noEffect(["kubectlImage", key], "the image of the chart's kubectl Jobs");
    else
      m.ledger.notCarried(
        ["kubectlImage", key],
        "kata-install runs no kubectl Job: the verification pod is applied as it is, and RBAC goes with `kubectl delete` once the DaemonSet's pods are gone",
      );
  }
}

/** kata-monitor: its DaemonSet as the chart makes it, its settings key by key. */
function mapMonitor(m: Mapping): void {
  const monitor = m.values.monitor ?? {};
  if (monitor.enabled !== true) {
    m.ledger.noEffect(["monitor"], "only with monitor.enabled");
    return;
  }
  m.set("monitor.enabled", true);
  m.ledger.carried(["monitor", "enabled"], "monitor.enabled: the kata-monitor DaemonSet");
  for (const [path, target] of [
    [["monitor", "image", "reference"], "monitor.image"],
    [["monitor", "image", "tag"], "monitor.tag"],
    [["monitor", "listenAddress"], "monitor.listen_address"],
    [["monitor", "runtimeEndpoint"], "monitor.runtime_endpoint"],
    [["monitor", "port"], "monitor.port"],
    [["monitor", "securityContext"], "monitor.security_context"],
    [["monitor", "resources"], "monitor.resources"],
  ] as const)
    m.direct(path, target);
  // The chart's endpoint, when not given: containerd.runtimeSocket, else k8sDistribution's.
  const socket = m.values.containerd?.runtimeSocket ?? "";
  if ((monitor.runtimeEndpoint ?? "") === "" && socket !== "") {
    m.set("monitor.runtime_endpoint", socket);
    m.ledger.carried(
      ["containerd", "runtimeSocket"],
      "monitor.runtime_endpoint (kata-monitor's; kata-install finds the runtime's socket on each node)",
    );
  }
  // Its log level: its own, else the chart's logLevel, else debug's.
  const level = monitor.logLevel || m.values.logLevel || "";
  if (level !== "") m.set("monitor.log_level", level);
  m.ledger.carried(["monitor", "logLevel"], "monitor.log_level");
}

/** The container runtime: found on the node by kata-install itself. */
function mapContainerRuntime(m: Mapping): void {
  const containerd = m.values.containerd ?? {};
  if ((containerd.configDir ?? "") === "") {
    m.ledger.noEffect(["containerd", "configDir"], "empty: derived from k8sDistribution, as in the chart");
    m.direct(["k8sDistribution"], "k8s_distribution");
  } else {
    m.ledger.notCarried(
      ["containerd", "configDir"],
      "kata-install finds containerd's configuration on the node (the whole host is at /host): it takes no directory",
    );
    m.ledger.noEffect(["k8sDistribution"], "containerd.configDir overrides it, as in the chart");
  }
  m.dropped(["containerd", "runtimeSocket"], "kata-install finds containerd's socket on the node");
  m.direct(["containerd", "configFileName"], "containerd_config_file_name");
  if ((containerd.userDropIn ?? "").trim() === "") m.ledger.noEffect(["containerd", "userDropIn"], "empty");
  else m.direct(["containerd", "userDropIn"], "containerd_user_drop_in");
}

/** Where the DaemonSet runs, and its pod. */
function mapPod(m: Mapping): void {
  m.direct(["nodeSelector"], "node_selector");
  m.direct(["tolerations"], "tolerations");
  m.direct(["startupTaints"], "startup_taints");
  const { name: _ignored, ...labels } = m.values.podLabels ?? {}; // the chart ignores "name" too
  m.direct(["podLabels"], "pod_labels", labels);
  m.direct(["podAnnotations"], "pod_annotations");
  m.direct(["affinity"], "affinity");
  m.direct(["priorityClassName"], "priority_class_name");
  m.direct(["updateStrategy"], "update_strategy");
  m.direct(["resources"], "resources");
  m.direct(["debug"], "debug");
  if (m.values.devkit === true && m.values.debug === true)
    m.ledger.notCarried(
      ["devkit"],
      "kata-install has no devkit guest extension (nor its kata-<shim>-devkit handlers)",
    );
  else m.ledger.noEffect(["devkit"], "only with debug");
  m.dropped(
    ["logLevel"],
    "kata-install's entrypoint has one log level; debug turns on Kata's and the runtime's debug logs",
  );
}

function mapHealth(m: Mapping): void {
  m.direct(["health", "port"], "health_port");
  for (const [chartProbe, ours] of [
    ["startupProbe", "startup"],
    ["livenessProbe", "liveness"],
    ["readinessProbe", "readiness"],
  ] as const)
    for (const [key, target] of [
      ["enabled", "enabled"],
      ["initialDelaySeconds", "initial_delay_seconds"],
      ["periodSeconds", "period_seconds"],
      ["failureThreshold", "failure_threshold"],
      ["timeoutSeconds", "timeout_seconds"],
    ] as const)
      m.direct(["health", chartProbe, key], `probes.${ours}.${target}`);
}

/**
 * Both are set up by the nodes (setup_snapshotter → EXPERIMENTAL_SETUP_SNAPSHOTTER): erofs in
 * kata-install's drop-in, nydus from the binaries kata-deploy's image carries.
 */
function mapSnapshotters(m: Mapping): void {
  const setup = m.values.snapshotter?.setup ?? ["nydus"];
  const erofs = setup.includes("erofs");
  const named = [...new Set(setup)];
  if (named.length > 0) m.set("setup_snapshotter", named.join(","));
  if (setup.length === 0) m.ledger.noEffect(["snapshotter", "setup"], "empty");
  else m.ledger.carried(["snapshotter", "setup"], "setup_snapshotter");
  // kata-deploy's image carries nydus-snapshotter's binaries; kata-install's does not (nor does
  // Kata's release): said here, before every containerd 2.x node's install stops on it.
  if (setup.includes("nydus"))
    m.issue(
      ["snapshotter", "setup"],
      `${m.has(["snapshotter", "setup"]) ? "" : "the chart's default, "}nydus: each containerd 1.7 and 2.x node would set nydus-for-kata-tee up from the binaries in its image's /opt/kata-artifacts/nydus-snapshotter, which kata-deploy's image has and kata-install's does not, and its install would stop there: choose before the rollout. Without nydus: --set setup_snapshotter=${named.filter((n) => n !== "nydus").join(",")} (handlers the chart maps to nydus then pull on the node). With it: an image that adds the binaries (see EXPERIMENTAL_SETUP_SNAPSHOTTER in docs/deciding.md), --set image=<it> --set nydus_in_image=true`,
    );
  for (const [key, dflt, target] of [
    ["erofsMergeMode", "", "erofs_merge_mode"],
    ["erofsSnapshotterMode", "", "erofs_snapshotter_mode"],
    ["erofsDmverity", false, "erofs_dmverity"],
  ] as const)
    if (m.defaultOf(["snapshotter", key], dflt))
      m.ledger.noEffect(["snapshotter", key], "the chart's default");
    else if (!erofs)
      m.ledger.noEffect(["snapshotter", key], "only with erofs in snapshotter.setup, as in kata-deploy");
    else m.direct(["snapshotter", key], target);
}

function mapRuntimeClasses(m: Mapping): void {
  m.direct(["runtimeClasses", "enabled"], "runtime_classes.create");
  m.direct(["runtimeClasses", "createDefault"], "runtime_classes.create_default");
  m.direct(["runtimeClasses", "defaultName"], "runtime_classes.default_name");
  m.direct(["runtimeClasses", "overheadEnabled"], "runtime_classes.overhead_enabled");
}

function mapInstallation(m: Mapping): void {
  m.direct(["env", "installationPrefix"], "installation_prefix");
  m.dropped(["env", "hostOS"], "kata-install reads the node's OS from its os-release");
  m.direct(["env", "multiInstallSuffix"], "multi_install_suffix");
}

/** NFD itself is its own chart's; what kata-install does where it runs is its own values' (nfd.*). */
function mapNodeFeatureDiscovery(m: Mapping): void {
  const nfd = m.values["node-feature-discovery"]?.enabled === true;
  if (nfd) {
    m.set("nfd.virtualization_affinity", true);
    m.set("runtime_classes.tee_node_selectors", true);
    m.ledger.carried(
      ["node-feature-discovery", "enabled"],
      "nfd.virtualization_affinity and runtime_classes.tee_node_selectors (NFD itself is not installed: install its chart)",
    );
  } else m.ledger.noEffect(["node-feature-discovery", "enabled"], "false");
  m.ledger.notCarried(
    ["node-feature-discovery"],
    "NFD's own chart values: kata-install does not install NFD",
  );
  const create = m.values.nodeFeatureRules?.create ?? "auto";
  if (create === true || (create === "auto" && nfd)) {
    m.set("nfd.node_feature_rules", true);
    m.ledger.carried(["nodeFeatureRules", "create"], "nfd.node_feature_rules");
  } else if (create === false) m.ledger.noEffect(["nodeFeatureRules", "create"], "false");
  else if (create === "auto")
    m.ledger.notCarried(
      ["nodeFeatureRules", "create"],
      "auto asks the cluster whether NFD runs, and manifests sees no cluster (as `helm template`): set it to true where NFD runs",
    );
  else {
    m.ledger.noEffect(["nodeFeatureRules", "create"], "not a value the chart takes");
    m.issue(["nodeFeatureRules", "create"], `expected auto, true or false, got ${JSON.stringify(create)}`);
  }
}

function mapVerification(m: Mapping): void {
  if ((m.values.verification?.pod ?? "") === "") {
    m.ledger.noEffect(["verification"], "only with verification.pod");
    return;
  }
  m.direct(["verification", "pod"], "verification.pod");
  m.direct(["verification", "namespace"], "verification.namespace");
  m.ledger.notCarried(
    ["verification"],
    "nothing in the cluster waits for the verification pod: `kubectl wait --for=jsonpath='{.status.phase}'=Succeeded --timeout=...`",
  );
}

function mapCustomRuntimesOf(m: Mapping): void {
  const custom = m.values.customRuntimes ?? {};
  if (custom.enabled === true && Object.keys(custom.runtimes ?? {}).length > 0) {
    m.ledger.carried(["customRuntimes", "enabled"], "the runtimes below");
    mapCustomRuntimes(m);
  } else m.ledger.noEffect(["customRuntimes"], "only with customRuntimes.enabled and runtimes");
}
