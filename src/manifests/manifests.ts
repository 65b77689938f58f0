// The cluster objects kata-install needs: namespace (optional), ServiceAccount and RBAC, the
// DaemonSet that runs `entrypoint install` on every node (and the overrides every node reads, as a
// ConfigMap), a RuntimeClass per shim whose nodeSelector is the label kata-install puts on nodes
// that have that shim, and, as asked, kata-monitor, NFD's NodeFeatureRule and a verification pod.
// Named as kata-deploy's chart names its objects, so that a cluster switches by one apply.
import { createHash } from "node:crypto";
import { parse as parseToml } from "smol-toml";
import { parse as parseYaml } from "yaml";
import type { Catalog } from "../decide/catalog.js";
import { type ReferenceKind, referenceProblem } from "../image-reference.js";
import { InputError, type InputIssue } from "../input-error.js";
import { parseStartupTaints } from "../kube/taints.js";
import type { Templates } from "../render/templates.js";
import { tomlErrorText } from "../toml-error.js";
import { ARCHES, checkEnvironment, environment, OVERRIDES_DIR, PLANS_DIR, suffixOf } from "./environment.js";
import { hostMounts, hostMountsVariable, POD_HOST_ROOT, volumeName } from "./host-mounts.js";
import { CHART_SHIMS } from "./kata-deploy/chart.js";
import { monitorDaemonSet } from "./monitor.js";
import { nodeFeatureRule, withVirtualizationAffinity } from "./nfd.js";
import { overridesFile } from "./overrides.js";
import { defaultShim, runtimeClasses } from "./runtime-classes.js";
import type { Origins, Values } from "./values.js";

export interface Manifests {
  yaml: string;
  /** What the values asked for that the objects do not do, with why (printed as warnings). */
  notes: InputIssue[];
}

type Table = Record<string, unknown>;

/** A Kubernetes name of one DNS label (a namespace, an object name): what the API server takes. */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** The values that name images, and what each must be (`empty`: "" takes the default). */
const IMAGE_KEYS: Array<{ path: string[]; kind: ReferenceKind; empty: boolean }> = [
  { path: ["image"], kind: "reference", empty: false },
  { path: ["monitor", "image"], kind: "repository", empty: false },
  { path: ["monitor", "tag"], kind: "tag", empty: true },
  { path: ["kata_version"], kind: "tag", empty: false },
  { path: ["artifacts_tag"], kind: "tag", empty: true },
];

/** Each image value that is not one: every node would fail to pull it (or, with a newline, worse). */
function referenceIssues(v: Values, file: string): InputIssue[] {
  const issues: InputIssue[] = [];
  for (const { path, kind, empty } of IMAGE_KEYS) {
    let value: unknown = v;
    for (const part of path)
      value = value !== null && typeof value === "object" ? (value as Table)[part] : undefined;
    if (typeof value !== "string" || (empty && value === "")) continue;
    const problem = referenceProblem(value, kind);
    if (problem !== null) issues.push({ file, key: path.join("."), message: problem });
  }
  if (typeof v.artifacts === "string" && v.artifacts.startsWith("registry:")) {
    const problem = referenceProblem(v.artifacts.slice("registry:".length), "repository");
    if (problem !== null) issues.push({ file, key: "artifacts", message: `registry:${problem}` });
  }
  return issues;
}

/**
 * Values the API server (or the pod) would refuse, refused here where they are named, not at
 * `kubectl apply`: a namespace or name that is no DNS label, an empty image, a port or a grace
 * period out of range.
 */
function checkObjectValues(v: Values, file: string, issues: InputIssue[]): void {
  for (const key of ["namespace", "name"]) {
    const value = v[key];
    if (typeof value === "string" && !DNS_LABEL.test(value))
      issues.push({
        file,
        key,
        message: `"${value}" is no Kubernetes name: up to 63 lower-case letters, digits and "-", starting and ending with a letter or digit`,
      });
  }
  if (typeof v.image === "string" && v.image.trim() === "")
    issues.push({ file, key: "image", message: "empty: the DaemonSet's pods would have no image to run" });
  else issues.push(...referenceIssues(v, file));
  const integer = (key: string, least: number, most: number) => {
    const value = v[key];
    if (typeof value === "number" && (!Number.isInteger(value) || value < least || value > most))
      issues.push({ file, key, message: `${value} is not an integer from ${least} to ${most}` });
  };
  integer("health_port", 1, 65535);
  integer("termination_grace_period_seconds", 0, 2 ** 31 - 1);
  // The kubelet's bounds for a probe (the API server refuses a period, timeout or threshold of 0).
  for (const probe of ["startup", "liveness", "readiness"]) {
    const p = (v.probes as Table)[probe] as Table;
    for (const [key, least] of [
      ["initial_delay_seconds", 0],
      ["period_seconds", 1],
      ["failure_threshold", 1],
      ["timeout_seconds", 1],
    ] as const) {
      const value = p[key];
      if (typeof value === "number" && (!Number.isInteger(value) || value < least || value > 2 ** 31 - 1))
        issues.push({
          file,
          key: `probes.${probe}.${key}`,
          message: `${value} is not an integer from ${least} to ${2 ** 31 - 1}`,
        });
    }
  }
  updateStrategyIssues(v.update_strategy as Table, file, issues);
  const plans = (v.plans as Table).config_map;
  if (typeof plans === "string" && plans !== "" && !DNS_SUBDOMAIN.test(plans))
    issues.push({
      file,
      key: "plans.config_map",
      message: `"${plans}" is no ConfigMap name: up to 253 lower-case letters, digits, "-" and ".", starting and ending with a letter or digit`,
    });
}

/** A ConfigMap's name: a DNS subdomain. */
const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** A DaemonSet's updateStrategy, as the API server checks it: a type it knows, and its own fields only. */
function updateStrategyIssues(strategy: Table, file: string, issues: InputIssue[]): void {
  const issue = (key: string, message: string) =>
    issues.push({ file, key: `update_strategy${key}`, message });
  for (const key of Object.keys(strategy))
    if (!["type", "rollingUpdate"].includes(key))
      issue(`.${key}`, "unknown field (a DaemonSet's updateStrategy has type and rollingUpdate)");
  const type = strategy.type ?? "RollingUpdate";
  if (type !== "RollingUpdate" && type !== "OnDelete") {
    issue(".type", `${JSON.stringify(type)}: expected "RollingUpdate" or "OnDelete"`);
    return;
  }
  const rolling = strategy.rollingUpdate;
  if (rolling === undefined) return;
  if (type === "OnDelete") {
    issue(".rollingUpdate", 'only with type "RollingUpdate" (OnDelete replaces a pod when you delete it)');
    return;
  }
  if (rolling === null || typeof rolling !== "object" || Array.isArray(rolling)) {
    issue(".rollingUpdate", "expected a table (maxUnavailable, maxSurge)");
    return;
  }
  for (const [key, value] of Object.entries(rolling as Table)) {
    if (key !== "maxUnavailable" && key !== "maxSurge") {
      issue(`.rollingUpdate.${key}`, "unknown field (maxUnavailable, maxSurge)");
      continue;
    }
    const ok =
      (typeof value === "number" && Number.isInteger(value) && value >= 0) ||
      (typeof value === "string" && /^\d+%$/.test(value) && Number.parseInt(value, 10) <= 100);
    if (!ok)
      issue(
        `.rollingUpdate.${key}`,
        `${JSON.stringify(value)}: expected a number of pods (0 or more) or a percentage ("10%")`,
      );
  }
}

function checkShimNames(v: Values, catalog: Catalog, file: string, issues: InputIssue[]): void {
  // No release is read here: a shim is one kata-install's rules describe, or one of kata-deploy's
  // (its chart's list). The nodes check the rest against the release they install.
  const known = (name: string) => catalog.isKnownShim(name) || CHART_SHIMS.includes(name);
  const shim = (key: string, name: string) => {
    if (!known(name))
      issues.push({
        file,
        key,
        message: `unknown shim "${name}" (known: ${[...new Set([...catalog.shimNames(), ...CHART_SHIMS])].sort().join(", ")})`,
      });
  };
  for (const name of v.shims as string[]) shim("shims", name);
  for (const arch of ARCHES)
    for (const name of (((v.arch as Table | undefined)?.[arch] as Table | undefined)?.shims as string[]) ??
      [])
      shim(`arch.${arch}.shims`, name);
  const rc = v.runtime_classes as Table;
  for (const name of rc.shims as string[]) shim("runtime_classes.shims", name);
  for (const key of ["overhead_by_shim", "node_selector_by_shim", "overhead_enabled_by_shim"])
    for (const name of Object.keys(rc[key] as Table)) shim(`runtime_classes.${key}`, name);
  const suffix = suffixOf(v);
  // kata-<a>-<suffix> must not be another shim's handler kata-<b> (a suffix "tdx" makes qemu's
  // handler qemu-tdx's): the nodes' handlers and labels of two installs would be one.
  if (suffix)
    for (const name of catalog.shimNames())
      if (catalog.shims.has(`${name}-${suffix}`))
        issues.push({
          file,
          key: "multi_install_suffix",
          message: `"${suffix}" makes ${name}'s handler kata-${name}-${suffix}, which is the handler of the shim ${name}-${suffix}`,
        });
  const dflt = defaultShim(v);
  if (rc.create && rc.create_default && !suffix && dflt === undefined)
    issues.push({ file, key: "runtime_classes.create_default", message: "needs default_shim" });
  if (rc.default_shim) shim("runtime_classes.default_shim", String(rc.default_shim));
}

/** The verification pod: one Pod, put in verification.namespace. */
function verificationPod(v: Values, file: string, issues: InputIssue[]): Table | null {
  const verification = v.verification as Table;
  const text = String(verification.pod ?? "").trim();
  if (text === "") return null;
  const issue = (message: string) => {
    issues.push({ file, key: "verification.pod", message });
    return null;
  };
  let pod: unknown;
  try {
    pod = parseYaml(text);
  } catch (error) {
    return issue(`not YAML: ${(error as Error).message.split("\n")[0]}`);
  }
  const p = pod as { kind?: unknown; metadata?: { name?: unknown } } | null;
  if (p === null || typeof p !== "object" || p.kind !== "Pod" || typeof p.metadata?.name !== "string")
    return issue("expected one Pod with metadata.name");
  return {
    apiVersion: "v1",
    ...(p as Table),
    metadata: { ...p.metadata, namespace: String(verification.namespace) },
  };
}

/**
 * The values' containerd_user_drop_in, checked as TOML here (each node checks it again): a file
 * containerd could not load stops `manifests`, not every node's install. Null when empty.
 */
function userDropInOf(
  v: Values,
  file: string,
  issues: InputIssue[],
): { text: string; checksum: string } | null {
  const text = String(v.containerd_user_drop_in ?? "");
  if (text.trim() === "") return null;
  try {
    parseToml(text);
  } catch (error) {
    issues.push({
      file,
      key: "containerd_user_drop_in",
      message: `${tomlErrorText(error)}: containerd could not load it`,
    });
  }
  return { text, checksum: createHash("sha256").update(text).digest("hex") };
}

/**
 * `issue` at where its key was given (the values file's line, or --set), when the check that found
 * it knew only the values as merged; a key no one gave stays the defaults'.
 */
function located(issue: InputIssue, file: string, origins: Origins): InputIssue {
  const key = issue.key;
  if (issue.file !== file || issue.line !== undefined || key === undefined) return issue;
  let origin = origins.get(key);
  for (let k = key; origin === undefined && k.includes("."); ) {
    k = k.slice(0, k.lastIndexOf("."));
    origin = origins.get(k);
  }
  origin ??= [...origins].find(([k]) => k.startsWith(`${key}.`))?.[1];
  return origin === undefined ? issue : { ...issue, ...origin };
}

/** `file`: the values file, as issues name it; `origins`: where each value given was set (loadValues). */
export function renderManifests(
  v: Values,
  catalog: Catalog,
  templates: Templates,
  file = "values",
  origins: Origins = new Map(),
): Manifests {
  const issues: InputIssue[] = [];
  const notes: InputIssue[] = [];
  checkShimNames(v, catalog, file, issues);
  checkObjectValues(v, file, issues);
  const overrides = overridesFile(v.overrides as Table, catalog, file, issues);
  const userDropIn = userDropInOf(v, file, issues);
  const env = environment(v, overrides !== null, userDropIn !== null);
  const checked = checkEnvironment(env, file);
  issues.push(...checked.issues);
  notes.push(...checked.notes);
  const pod = verificationPod(v, file, issues);
  const classes = issues.length === 0 ? runtimeClasses(v, catalog, notes, issues, file) : [];
  if (issues.length > 0)
    throw new InputError(
      "the manifests' values are invalid",
      // In the order they were given: the values file, then each --set.
      issues
        .map((i) => located(i, file, origins))
        .sort((a, b) => Number(a.file === "--set") - Number(b.file === "--set")),
    );
  for (const [i, note] of notes.entries()) notes[i] = located(note, file, origins);

  const suffix = suffixOf(v);
  const nfd = v.nfd as Table;
  // kata-deploy's chart's names: <name>[-<suffix>], <name>-sa[-<suffix>], -role, -rb.
  const named = (part: string) => [String(v.name), part, suffix].filter(Boolean).join("-");
  const name = named("");
  const affinity = nfd.virtualization_affinity
    ? withVirtualizationAffinity(v.affinity as Table)
    : (v.affinity as Table);
  const tolerations = withStartupTaints(v.tolerations as Table[], v.startup_taints as string[]);
  const podAnnotations: Table = { ...(v.pod_annotations as Table) };
  if (overrides) podAnnotations["checksum/overrides"] = overrides.checksum;
  if (userDropIn) podAnnotations["checksum/containerd-user-drop-in"] = userDropIn.checksum;
  const mounts = hostMounts(v);
  const yaml = templates
    .render("k8s/kata-install.yaml.njk", {
      v,
      name,
      sa_name: named("sa"),
      role_name: named("role"),
      binding_name: named("rb"),
      env,
      affinity,
      tolerations,
      pod_labels: { ...(v.pod_labels as Table), name },
      pod_annotations: podAnnotations,
      overrides,
      user_drop_in: userDropIn,
      pod_host_root: POD_HOST_ROOT,
      host_mounts: mounts.map((m) => ({ ...m, volume: volumeName(m.path) })),
      host_mounts_variable: hostMountsVariable(mounts),
      security_context: securityContext(v),
      overrides_dir: OVERRIDES_DIR,
      plans_dir: PLANS_DIR,
      runtime_classes: classes,
      node_feature_rule: nfd.node_feature_rules ? nodeFeatureRule(suffix) : null,
      monitor: monitorDaemonSet(v, { nodeSelector: v.node_selector, tolerations: v.tolerations }),
      verification_pod: pod,
    })
    .trimStart();
  return { yaml, notes };
}

/**
 * The installer container's security context: kata-deploy 4.1's posture (not privileged, read-only
 * root file system) with every capability dropped but those its work needs. CHOWN, FOWNER and
 * DAC_OVERRIDE: files written and given back with the owner and mode they had, in directories of
 * any owner; SYS_CHROOT: host commands (systemctl, the runtime's --version) run in the host's root.
 */
export function securityContext(v: Values): Table {
  const add = ["CHOWN", "DAC_OVERRIDE", "FOWNER", "SYS_CHROOT"];
  // A health port below 1024 is bound only with this one.
  if (typeof v.health_port === "number" && v.health_port < 1024) add.push("NET_BIND_SERVICE");
  return {
    privileged: false,
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    capabilities: { drop: ["ALL"], add },
  };
}

/**
 * The pod's tolerations, with one for each startup taint it does not tolerate yet: the taint keeps
 * other pods off until Kata is installed, and it is the DaemonSet's pod that lifts it.
 */
function withStartupTaints(tolerations: Table[], startupTaints: string[]): Table[] {
  const taints = parseStartupTaints(startupTaints.join(","));
  if (typeof taints === "string") return tolerations; // refused with its reason (checkEnvironment)
  const tolerates = (t: Table, key: string, effect: string | undefined) =>
    (t.key === undefined ? t.operator === "Exists" : t.key === key) &&
    (t.effect === undefined || t.effect === "" || t.effect === effect);
  const added = taints
    .filter((taint) => !tolerations.some((t) => tolerates(t, taint.key, taint.effect)))
    .map((taint) => ({
      key: taint.key,
      operator: "Exists",
      ...(taint.effect ? { effect: taint.effect } : {}),
    }));
  return [...tolerations, ...added];
}
