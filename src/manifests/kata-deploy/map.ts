// kata-deploy's chart values → kata-install's values (templates/k8s/values.toml), key by key, to the
// same effect where kata-install has one; every other key is accounted for with why (ledger.ts).
import { isDeepStrictEqual } from "node:util";
import type { Catalog } from "../../decide/catalog.js";
import type { InputIssue } from "../../decide/input-error.js";
import type { Values } from "../values.js";
import { CHART_ARCHES, CHART_DEFAULT_SHIM, CHART_SHIMS, type ChartArch, shimDefaults } from "./chart.js";
import { mapCustomRuntimes } from "./custom-runtimes.js";
import { dropInConfig } from "./drop-in.js";
import { type Entry, Ledger } from "./ledger.js";
import type { ChartFile, Path } from "./read.js";

type Table = Record<string, unknown>;

export interface Mapped {
  /** kata-install's values the file sets (merged over the defaults by the caller). */
  overlay: Values;
  entries: Entry[];
  /** The keys not carried, with why: warnings. */
  notes: InputIssue[];
}

function get(tree: unknown, path: Path): unknown {
  let at = tree;
  for (const part of path) at = at !== null && typeof at === "object" ? (at as Table)[part] : undefined;
  return at;
}

function set(tree: Table, path: string, value: unknown): void {
  setPath(tree, path.split("."), value);
}

/** The same, by a path's parts (a handler name may hold what a dotted path cannot). */
function setPath(tree: Table, parts: string[], value: unknown): void {
  let at = tree;
  for (const part of parts.slice(0, -1)) {
    at[part] ??= {};
    at = at[part] as Table;
  }
  at[parts.at(-1) as string] = value;
}

/** Defaults under file values, as Helm merges maps (a list or scalar replaces). */
function merged(base: unknown, over: unknown): unknown {
  if (base === null || typeof base !== "object" || Array.isArray(base)) return over ?? base;
  if (over === null || typeof over !== "object" || Array.isArray(over)) return over ?? base;
  const out: Table = { ...(base as Table) };
  for (const [k, v] of Object.entries(over as Table)) out[k] = merged(out[k], v);
  return out;
}

export function mapChartValues(
  chart: ChartFile,
  catalog: Catalog,
  base: Values,
  issues: InputIssue[],
): Mapped {
  const file = chart.values;
  const ledger = new Ledger(chart);
  const overlay: Table = {};
  const notes: InputIssue[] = [];
  const has = (path: Path) => ledger.under(path).length > 0;
  const value = (path: Path) => get(file, path);
  /** A key that maps onto one kata-install value, as it is. */
  const direct = (path: Path, target: string, convert: (v: unknown) => unknown = (v) => v) => {
    if (!has(path)) return;
    set(overlay, target, convert(value(path)));
    ledger.carried(path, target);
  };
  const defaultOf = (path: Path, dflt: unknown) => has(path) && isDeepStrictEqual(value(path), dflt);

  // The deployment: a DaemonSet. Job mode is refused, not turned into one: a cluster chose it to
  // have no long-running privileged pod holding a token, which a DaemonSet is.
  const mode = value(["deploymentMode"]) ?? "daemonset";
  if (mode === "job") {
    ledger.notCarried(["deploymentMode"], "refused");
    ledger.notCarried(["job"], "job mode only (deploymentMode: job is refused)");
    issues.push({
      file: chart.file,
      line: chart.lineOf(["deploymentMode"]),
      key: "deploymentMode",
      message:
        'job: kata-install has no job mode (per-node Jobs without a service-account token); it runs a DaemonSet whose pods keep a token that reads nodes and DaemonSets and patches nodes, and clean their node up when it is deselected. Set deploymentMode: daemonset to take that DaemonSet (README, "Job mode"), or run `kata-install install` on the nodes yourself',
    });
  } else {
    ledger.carried(["deploymentMode"], "the DaemonSet");
    ledger.noEffect(["job"], "only with deploymentMode: job");
  }

  direct(["imagePullPolicy"], "image_pull_policy");
  direct(["imagePullSecrets"], "image_pull_secrets");
  const reference = String(value(["image", "reference"]) ?? "");
  if (defaultOf(["image", "reference"], "quay.io/kata-containers/kata-deploy"))
    ledger.noEffect(["image", "reference"], "kata-deploy's own image: kata-install runs its image (image)");
  else
    ledger.notCarried(
      ["image", "reference"],
      "kata-deploy's image (its binary and the whole release): kata-install runs its own image (image) and takes Kata's files from the release's artifact images (artifacts): mirror those instead",
    );
  const tag = String(value(["image", "tag"]) ?? "");
  if (tag === "" || reference.includes("@"))
    ledger.noEffect(
      ["image", "tag"],
      reference.includes("@") ? "the image is named by digest" : "the chart's own release",
    );
  else direct(["image", "tag"], "kata_version");

  for (const [key, dflt] of [
    ["reference", "quay.io/kata-containers/kubectl"],
    ["tag", "latest"],
  ] as const) {
    if (defaultOf(["kubectlImage", key], dflt))
      ledger.noEffect(["kubectlImage", key], "the image of the chart's kubectl Jobs");
    else
      ledger.notCarried(
        ["kubectlImage", key],
        "kata-install runs no kubectl Job: the verification pod is applied as it is, and RBAC goes with `kubectl delete` once the DaemonSet's pods are gone",
      );
  }

  mapMonitor(chart, ledger, (path, v) => set(overlay, path, v));

  // The container runtime: found on the node by kata-install itself.
  const configDir = String(value(["containerd", "configDir"]) ?? "");
  if (configDir === "") {
    ledger.noEffect(["containerd", "configDir"], "empty: derived from k8sDistribution, as in the chart");
    direct(["k8sDistribution"], "k8s_distribution");
  } else {
    ledger.notCarried(
      ["containerd", "configDir"],
      "kata-install finds containerd's configuration on the node (the whole host is at /host): it takes no directory",
    );
    ledger.noEffect(["k8sDistribution"], "containerd.configDir overrides it, as in the chart");
  }
  const dropped = (path: Path, why: string) => {
    if (value(path) === "" || value(path) === undefined) ledger.noEffect(path, "empty");
    else ledger.notCarried(path, why);
  };
  dropped(["containerd", "runtimeSocket"], "kata-install finds containerd's socket on the node");
  direct(["containerd", "configFileName"], "containerd_config_file_name");
  if (String(value(["containerd", "userDropIn"]) ?? "").trim() === "")
    ledger.noEffect(["containerd", "userDropIn"], "empty");
  else direct(["containerd", "userDropIn"], "containerd_user_drop_in");

  // Where the DaemonSet runs, and its pod.
  direct(["nodeSelector"], "node_selector");
  direct(["tolerations"], "tolerations");
  direct(["startupTaints"], "startup_taints");
  direct(["podLabels"], "pod_labels", (labels) => {
    const { name: _ignored, ...rest } = labels as Table; // the chart ignores "name" too
    return rest;
  });
  direct(["podAnnotations"], "pod_annotations");
  direct(["affinity"], "affinity");
  direct(["priorityClassName"], "priority_class_name");
  direct(["updateStrategy"], "update_strategy");
  direct(["resources"], "resources");
  direct(["debug"], "debug");
  if (value(["devkit"]) === true && value(["debug"]) === true)
    ledger.notCarried(
      ["devkit"],
      "kata-install has no devkit guest extension (nor its kata-<shim>-devkit handlers)",
    );
  else ledger.noEffect(["devkit"], "only with debug");
  dropped(
    ["logLevel"],
    "kata-install's entrypoint has one log level; debug turns on Kata's and the runtime's debug logs",
  );

  direct(["health", "port"], "health_port");
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
      direct(["health", chartProbe, key], `probes.${ours}.${target}`);

  // Both are set up by the nodes (setup_snapshotter → EXPERIMENTAL_SETUP_SNAPSHOTTER): erofs in
  // kata-install's drop-in, nydus from the binaries kata-deploy's image carries.
  const setup = (value(["snapshotter", "setup"]) as string[] | undefined) ?? ["nydus"];
  const erofs = setup.includes("erofs");
  const named = [...new Set(setup)];
  if (named.length > 0) set(overlay, "setup_snapshotter", named.join(","));
  if (setup.length === 0) ledger.noEffect(["snapshotter", "setup"], "empty");
  else ledger.carried(["snapshotter", "setup"], "setup_snapshotter");
  // kata-deploy's image carries nydus-snapshotter's binaries; kata-install's does not (nor does
  // Kata's release): said here, before every containerd 2.x node's install stops on it.
  if (setup.includes("nydus"))
    notes.push({
      file: chart.file,
      line: chart.lineOf(["snapshotter", "setup"]),
      key: "snapshotter.setup",
      message:
        "nydus: each containerd 2.x node sets nydus-for-kata-tee up from the binaries in its image's /opt/kata-artifacts/nydus-snapshotter, which kata-deploy's image has and kata-install's does not: run an image that adds them (see the README's EXPERIMENTAL_SETUP_SNAPSHOTTER), or leave nydus out of snapshotter.setup; otherwise those nodes' installs stop, naming the missing files, and change nothing",
    });
  for (const [key, dflt, target] of [
    ["erofsMergeMode", "", "erofs_merge_mode"],
    ["erofsSnapshotterMode", "", "erofs_snapshotter_mode"],
    ["erofsDmverity", false, "erofs_dmverity"],
  ] as const)
    if (defaultOf(["snapshotter", key], dflt)) ledger.noEffect(["snapshotter", key], "the chart's default");
    else if (!erofs)
      ledger.noEffect(["snapshotter", key], "only with erofs in snapshotter.setup, as in kata-deploy");
    else direct(["snapshotter", key], target);

  mapShims(chart, catalog, base, ledger, overlay, issues, notes);

  direct(["runtimeClasses", "enabled"], "runtime_classes.create");
  direct(["runtimeClasses", "createDefault"], "runtime_classes.create_default");
  direct(["runtimeClasses", "defaultName"], "runtime_classes.default_name");
  direct(["runtimeClasses", "overheadEnabled"], "runtime_classes.overhead_enabled");

  direct(["env", "installationPrefix"], "installation_prefix");
  dropped(["env", "hostOS"], "kata-install reads the node's OS from its os-release");
  direct(["env", "multiInstallSuffix"], "multi_install_suffix");

  const nfd = value(["node-feature-discovery", "enabled"]) === true;
  if (nfd) {
    set(overlay, "nfd.virtualization_affinity", true);
    set(overlay, "runtime_classes.tee_node_selectors", true);
    ledger.carried(
      ["node-feature-discovery", "enabled"],
      "nfd.virtualization_affinity and runtime_classes.tee_node_selectors (NFD itself is not installed: install its chart)",
    );
  } else ledger.noEffect(["node-feature-discovery", "enabled"], "false");
  ledger.notCarried(["node-feature-discovery"], "NFD's own chart values: kata-install does not install NFD");
  const create = value(["nodeFeatureRules", "create"]) ?? "auto";
  if (create === true || (create === "auto" && nfd)) {
    set(overlay, "nfd.node_feature_rules", true);
    ledger.carried(["nodeFeatureRules", "create"], "nfd.node_feature_rules");
  } else if (create === false) ledger.noEffect(["nodeFeatureRules", "create"], "false");
  else if (create === "auto")
    ledger.notCarried(
      ["nodeFeatureRules", "create"],
      "auto asks the cluster whether NFD runs, and manifests sees no cluster (as `helm template`): set it to true where NFD runs",
    );
  else {
    ledger.noEffect(["nodeFeatureRules", "create"], "not a value the chart takes");
    issues.push({
      file: chart.file,
      line: chart.lineOf(["nodeFeatureRules", "create"]),
      key: "nodeFeatureRules.create",
      message: `expected auto, true or false, got ${JSON.stringify(create)}`,
    });
  }

  if (String(value(["verification", "pod"]) ?? "") === "")
    ledger.noEffect(["verification"], "only with verification.pod");
  else {
    direct(["verification", "pod"], "verification.pod");
    direct(["verification", "namespace"], "verification.namespace");
    ledger.notCarried(
      ["verification"],
      "nothing in the cluster waits for the verification pod: `kubectl wait --for=jsonpath='{.status.phase}'=Succeeded --timeout=...`",
    );
  }

  const runtimes = (value(["customRuntimes", "runtimes"]) ?? {}) as Table;
  if (value(["customRuntimes", "enabled"]) === true && Object.keys(runtimes).length > 0) {
    ledger.carried(["customRuntimes", "enabled"], "the runtimes below");
    mapCustomRuntimes(chart, catalog, ledger, (p, v) => setPath(overlay, p, v), issues);
  } else ledger.noEffect(["customRuntimes"], "only with customRuntimes.enabled and runtimes");

  for (const key of ["nameOverride", "fullnameOverride"])
    dropped([key], "names the chart's helper objects; kata-install's are named by name");
  const entries = ledger.settle();
  return { overlay, entries, notes: [...Ledger.notes(chart.file, entries), ...notes] };
}

/**
 * The shims: which ones each architecture's nodes are told to install (SHIMS_<ARCH>), their default,
 * and each shim's settings (kata-deploy's per-shim variables, drop-ins as overrides, RuntimeClass).
 */
function mapShims(
  chart: ChartFile,
  catalog: Catalog,
  base: Values,
  ledger: Ledger,
  overlay: Table,
  issues: InputIssue[],
  notes: InputIssue[],
): void {
  const given = (get(chart.values, ["shims"]) ?? {}) as Table;
  const disableAll = given.disableAll === true;
  const names = [...new Set([...CHART_SHIMS, ...Object.keys(given).filter((k) => k !== "disableAll")])];
  for (const name of names)
    if (!CHART_SHIMS.includes(name) && !catalog.isKnownShim(name))
      issues.push({
        file: chart.file,
        line: chart.lineOf(["shims", name]),
        key: `shims.${name}`,
        message: `not a shim of kata-deploy's chart (known: ${CHART_SHIMS.join(", ")})`,
      });
  const effective = (name: string) => merged(shimDefaults(name) ?? {}, given[name] ?? {}) as Table;
  const enabledOf = (name: string) => {
    const e = effective(name).enabled;
    return e === true || ((e === null || e === undefined) && !disableAll);
  };
  // The chart installs a list on every node; kata-install pins one only when the file narrows the
  // chart's (disableAll, or a shim turned off); otherwise each node decides from its facts.
  const turnedOff = (n: string) =>
    (given[n] as Table)?.enabled === false && shimDefaults(n)?.enabled !== false;
  const pinned = disableAll || Object.keys(given).some((n) => n !== "disableAll" && turnedOff(n));
  const path = (name: string, ...rest: string[]): Path => ["shims", name, ...rest];
  ledger.carried(
    ["shims", "disableAll"],
    pinned ? "the shims pinned per architecture (SHIMS_<ARCH>)" : "every node decides its shims",
  );

  const arches = Object.keys(CHART_ARCHES) as ChartArch[];
  const lists: Record<
    string,
    { shims: string[]; annotations: string[]; snapshotters: string[]; pulls: string[]; force: string[] }
  > = Object.fromEntries(
    arches.map((a) => [a, { shims: [], annotations: [], snapshotters: [], pulls: [], force: [] }]),
  );
  // The chart's defaults of shims whose settings this file leaves alone (each node applies them
  // itself), per architecture: a mapping variable given is the whole mapping on the nodes, so
  // where one is written for another shim's sake, these go into it too.
  const chartDefaults: Record<string, { snapshotters: string[]; pulls: string[] }> = Object.fromEntries(
    arches.map((a) => [a, { snapshotters: [], pulls: [] }]),
  );
  const proxies: Record<"httpsProxy" | "noProxy", string[]> = { httpsProxy: [], noProxy: [] };
  const rc = base.runtime_classes as Table;
  // A shim of kata-deploy's chart is one of Kata's releases: the nodes install it from theirs
  // (with a warning where no rule of kata-install's vets it); kata-deploy's other names are not.
  const served = (name: string) =>
    catalog.shims.has(name) || (CHART_SHIMS.includes(name) && !catalog.unserved.has(name));

  for (const name of names) {
    const eff = effective(name);
    const dflt = shimDefaults(name) ?? {};
    const inEffect = enabledOf(name);
    if (!inEffect) {
      ledger.carried(path(name, "enabled"), "not installed");
      ledger.noEffect(path(name), "the shim is not enabled");
      continue;
    }
    if (!served(name)) {
      const why = `kata-install does not serve ${name}: ${catalog.unserved.get(name) ?? "no such shim"}`;
      // On a pinned list all the same: each node then says why it drops it, as for SHIMS.
      if (pinned) {
        ledger.notCarried(path(name), why);
        for (const a of (eff.supportedArches as ChartArch[]) ?? []) lists[a]?.shims.push(name);
      } else
        for (const leaf of ledger.under(path(name)))
          if (isDeepStrictEqual(get(eff, leaf.slice(2)), get(dflt, leaf.slice(2))))
            ledger.noEffect(leaf, "the chart's default: each node decides its shims");
          else ledger.notCarried(leaf, why);
      continue;
    }
    /** Whether a setting of this shim takes effect: always when pinned; otherwise only if the file changes it. */
    const counts = (...rest: string[]) =>
      pinned ||
      (ledger.under(path(name, ...rest)).length > 0 && !isDeepStrictEqual(get(eff, rest), get(dflt, rest)));
    const account = (rest: string[], to: string) => {
      if (counts(...rest)) ledger.carried(path(name, ...rest), to);
      else
        ledger.noEffect(
          path(name, ...rest),
          "the chart's default: kata-install's own applies (each node decides)",
        );
    };
    ledger.carried(path(name, "enabled"), pinned ? "SHIMS_<ARCH>" : "every node decides");
    const shimArches = (eff.supportedArches as ChartArch[]) ?? [];
    if (pinned) {
      for (const a of shimArches) lists[a]?.shims.push(name);
      ledger.carried(path(name, "supportedArches"), "SHIMS_<ARCH>");
    } else if (counts("supportedArches"))
      ledger.notCarried(
        path(name, "supportedArches"),
        "while every node decides its shims, a shim goes wherever it can run: pin the shims (shims.disableAll and enabled) to choose them per architecture",
      );
    else ledger.noEffect(path(name, "supportedArches"), "the chart's default");

    const containerd = (eff.containerd ?? {}) as Table;
    const crio = (eff.crio ?? {}) as Table;
    const dfltContainerd = (dflt.containerd ?? {}) as Table;
    const dfltCrio = (dflt.crio ?? {}) as Table;
    for (const a of shimArches) {
      const l = lists[a];
      if (l === undefined) continue;
      const annotations = (eff.allowedHypervisorAnnotations as string[]) ?? [];
      if (counts("allowedHypervisorAnnotations") && annotations.length > 0)
        l.annotations.push(`${name}:${annotations.join(",")}`);
      if (counts("containerd", "snapshotter") && containerd.snapshotter)
        l.snapshotters.push(`${name}:${containerd.snapshotter}`);
      else if (!counts("containerd", "snapshotter") && dfltContainerd.snapshotter)
        chartDefaults[a]?.snapshotters.push(`${name}:${dfltContainerd.snapshotter}`);
      const force = counts("containerd", "forceGuestPull") && containerd.forceGuestPull === true;
      if (force) l.force.push(name);
      if (force || (counts("crio", "guestPull") && crio.guestPull === true))
        l.pulls.push(`${name}:guest-pull`);
      else if (!counts("crio", "guestPull") && dfltCrio.guestPull === true)
        chartDefaults[a]?.pulls.push(`${name}:guest-pull`);
    }
    // A default of the chart's turned off (a confidential shim's nydus or guest pull): said to the
    // nodes in the overrides file, which beats the default each node would otherwise apply.
    if (counts("containerd", "snapshotter") && !containerd.snapshotter && dfltContainerd.snapshotter)
      set(overlay, `overrides.handlers.${name}.snapshotter`, "");
    if (
      counts("crio", "guestPull") &&
      crio.guestPull !== true &&
      containerd.forceGuestPull !== true &&
      dfltCrio.guestPull === true
    )
      set(overlay, `overrides.handlers.${name}.pull_type`, "default");
    account(["allowedHypervisorAnnotations"], "ALLOWED_HYPERVISOR_ANNOTATIONS_<ARCH>");
    account(["containerd", "snapshotter"], "SNAPSHOTTER_HANDLER_MAPPING_<ARCH>");
    account(
      ["containerd", "forceGuestPull"],
      "EXPERIMENTAL_FORCE_GUEST_PULL_<ARCH>, PULL_TYPE_MAPPING_<ARCH>",
    );
    account(["crio", "guestPull"], "PULL_TYPE_MAPPING_<ARCH>");
    for (const key of ["httpsProxy", "noProxy"] as const) {
      const v = String(((eff.agent ?? {}) as Table)[key] ?? "");
      if (counts("agent", key) && v !== "") proxies[key].push(`${name}=${v}`);
      account(["agent", key], key === "httpsProxy" ? "AGENT_HTTPS_PROXY" : "AGENT_NO_PROXY");
    }
    const dropIn = String(eff.dropIn ?? "");
    if (dropIn.trim() !== "") {
      const config = dropInConfig(chart, path(name, "dropIn"), dropIn, name, catalog, issues);
      set(overlay, `overrides.config.${name}`, config);
    }
    account(["dropIn"], `overrides [config.${name}]`);

    const runtimeClass = (eff.runtimeClass ?? {}) as Table;
    if (counts("runtimeClass", "nodeSelector") && runtimeClass.nodeSelector !== undefined)
      set(overlay, `runtime_classes.node_selector_by_shim.${name}`, runtimeClass.nodeSelector);
    account(["runtimeClass", "nodeSelector"], `runtime_classes.node_selector_by_shim.${name}`);
    if (counts("runtimeClass", "overheadEnabled") && typeof runtimeClass.overheadEnabled === "boolean")
      set(overlay, `runtime_classes.overhead_enabled_by_shim.${name}`, runtimeClass.overheadEnabled);
    account(["runtimeClass", "overheadEnabled"], `runtime_classes.overhead_enabled_by_shim.${name}`);
    if (ledger.under(path(name, "runtimeClass", "overhead")).length > 0) {
      const ours = ((rc.overhead_by_shim as Table)[name] ?? rc.overhead) as Table;
      set(overlay, `runtime_classes.overhead_by_shim.${name}`, {
        ...ours,
        ...(runtimeClass.overhead as Table),
      });
      ledger.carried(path(name, "runtimeClass", "overhead"), `runtime_classes.overhead_by_shim.${name}`);
    }
  }

  // Unserved shims the chart's own defaults enable: said once.
  const missing = names.filter((n) => enabledOf(n) && !served(n) && (!pinned || !(n in given)));
  if (missing.length > 0)
    notes.push({
      file: chart.file,
      line: chart.lineOf(["shims"]),
      key: "shims",
      message: `not carried: the chart${pinned ? "'s defaults" : ""} also enable${pinned ? "" : "s"} ${missing.join(", ")}, which kata-install does not serve (\`kata-install shims\` says why)`,
    });
  if (pinned) {
    for (const a of arches) {
      const l = lists[a] as (typeof lists)[string];
      const arch = CHART_ARCHES[a];
      if (l.shims.length > 0) set(overlay, `arch.${arch}.shims`, l.shims);
      // A list of shims none of which kata-install serves: every node of it would fail preflight.
      if (l.shims.length > 0 && !l.shims.some(served))
        notes.push({
          file: chart.file,
          line: chart.lineOf(["shims"]),
          key: `shims (${a})`,
          message: `the ${a} nodes would install nothing: kata-install serves none of ${l.shims.join(", ")} (each node's preflight fails with "no shim can run"); enable a shim kata-install serves there, or leave these nodes out (nodeSelector)`,
        });
    }
  }
  for (const a of arches) {
    const l = lists[a] as (typeof lists)[string];
    const arch = CHART_ARCHES[a];
    if (l.annotations.length > 0)
      set(overlay, `arch.${arch}.allowed_hypervisor_annotations`, l.annotations.join(" "));
    const d = chartDefaults[a] as { snapshotters: string[]; pulls: string[] };
    if (l.snapshotters.length > 0)
      set(
        overlay,
        `arch.${arch}.snapshotter_handler_mapping`,
        [...l.snapshotters, ...d.snapshotters].join(","),
      );
    if (l.pulls.length > 0)
      set(overlay, `arch.${arch}.pull_type_mapping`, [...l.pulls, ...d.pulls].join(","));
    if (l.force.length > 0) set(overlay, `arch.${arch}.force_guest_pull`, l.force.join(","));
  }
  if (proxies.httpsProxy.length > 0) overlay.agent_https_proxy = proxies.httpsProxy.join(";");
  if (proxies.noProxy.length > 0) overlay.agent_no_proxy = proxies.noProxy.join(";");

  // The default shim of each architecture: only one that is installed there, as the chart has it.
  const defaults = (get(chart.values, ["defaultShim"]) ?? {}) as Table;
  for (const a of arches) {
    const name = String(defaults[a] ?? "");
    const where: Path = ["defaultShim", a];
    if (name === "") ledger.noEffect(where, "empty");
    else if (!enabledOf(name) || !((effective(name).supportedArches as string[]) ?? []).includes(a))
      ledger.noEffect(where, `${name} is not enabled on ${a}: the chart sets no default there either`);
    else if (!served(name))
      ledger.notCarried(
        where,
        `kata-install does not serve ${name}: ${catalog.unserved.get(name) ?? "no such shim"}`,
      );
    else {
      set(overlay, `arch.${CHART_ARCHES[a]}.default_shim`, name);
      ledger.carried(where, `DEFAULT_SHIM_${CHART_ARCHES[a].toUpperCase()}`);
    }
  }
  // The default RuntimeClass's shim: the first architecture's, the chart's defaults included, as
  // the chart has it; and made only when that shim is installed, as the chart makes it.
  const all = merged(Object.fromEntries(arches.map((a) => [a, CHART_DEFAULT_SHIM])), defaults) as Table;
  const first = arches.map((a) => String(all[a] ?? "")).find((n) => n !== "");
  if (first === undefined || get(chart.values, ["runtimeClasses", "createDefault"]) !== true) return;
  if (enabledOf(first) && served(first)) set(overlay, "runtime_classes.default_shim", first);
  else {
    set(overlay, "runtime_classes.create_default", false);
    notes.push({
      file: chart.file,
      line: chart.lineOf(["runtimeClasses", "createDefault"]),
      key: "runtimeClasses.createDefault",
      message: `no default RuntimeClass: its shim ${first} is not installed${served(first) ? "" : " (kata-install does not serve it)"}`,
    });
  }
}

/** kata-monitor: its DaemonSet as the chart makes it, its settings key by key. */
function mapMonitor(chart: ChartFile, ledger: Ledger, set: (path: string, value: unknown) => void): void {
  const value = (path: Path) => get(chart.values, path);
  if (value(["monitor", "enabled"]) !== true) {
    ledger.noEffect(["monitor"], "only with monitor.enabled");
    return;
  }
  set("monitor.enabled", true);
  ledger.carried(["monitor", "enabled"], "monitor.enabled: the kata-monitor DaemonSet");
  const keys: Array<[Path, string]> = [
    [["monitor", "image", "reference"], "monitor.image"],
    [["monitor", "image", "tag"], "monitor.tag"],
    [["monitor", "listenAddress"], "monitor.listen_address"],
    [["monitor", "runtimeEndpoint"], "monitor.runtime_endpoint"],
    [["monitor", "port"], "monitor.port"],
    [["monitor", "securityContext"], "monitor.security_context"],
    [["monitor", "resources"], "monitor.resources"],
  ];
  for (const [path, target] of keys)
    if (ledger.under(path).length > 0) {
      set(target, value(path));
      ledger.carried(path, target);
    }
  // The chart's endpoint, when not given: containerd.runtimeSocket, else k8sDistribution's.
  const socket = String(value(["containerd", "runtimeSocket"]) ?? "");
  if (String(value(["monitor", "runtimeEndpoint"]) ?? "") === "" && socket !== "") {
    set("monitor.runtime_endpoint", socket);
    ledger.carried(
      ["containerd", "runtimeSocket"],
      "monitor.runtime_endpoint (kata-monitor's; kata-install finds the runtime's socket on each node)",
    );
  }
  // Its log level: its own, else the chart's logLevel, else debug's.
  const level = String(value(["monitor", "logLevel"]) ?? "") || String(value(["logLevel"]) ?? "");
  if (level !== "") set("monitor.log_level", level);
  ledger.carried(["monitor", "logLevel"], "monitor.log_level");
}
