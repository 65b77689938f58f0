import { envArch, parseEnv } from "../decide/env.js";
import { InputError, type InputIssue } from "../input-error.js";
import { unknownDistribution } from "../kube/distribution.js";
import { parseStartupTaints } from "../kube/taints.js";
import type { Values } from "./values.js";

export const ARCHES = ["x86_64", "aarch64", "s390x", "ppc64le"] as const;

/** Values key (within the top level or an arch.<arch> table) → kata-deploy's variable. */
const PER_ARCH: Array<[string, string]> = [
  ["shims", "SHIMS"],
  ["default_shim", "DEFAULT_SHIM"],
  ["allowed_hypervisor_annotations", "ALLOWED_HYPERVISOR_ANNOTATIONS"],
  ["snapshotter_handler_mapping", "SNAPSHOTTER_HANDLER_MAPPING"],
  ["pull_type_mapping", "PULL_TYPE_MAPPING"],
  ["force_guest_pull", "EXPERIMENTAL_FORCE_GUEST_PULL"],
];
const PLAIN: Array<[string, string]> = [
  ["agent_https_proxy", "AGENT_HTTPS_PROXY"],
  ["agent_no_proxy", "AGENT_NO_PROXY"],
  ["installation_prefix", "INSTALLATION_PREFIX"],
  ["multi_install_suffix", "MULTI_INSTALL_SUFFIX"],
  ["containerd_config_file_name", "CONTAINERD_CONFIG_FILE_NAME"],
  ["k8s_distribution", "K8S_DISTRIBUTION"],
  ["setup_snapshotter", "EXPERIMENTAL_SETUP_SNAPSHOTTER"],
  ["erofs_merge_mode", "EROFS_MERGE_MODE"],
  ["erofs_snapshotter_mode", "EROFS_SNAPSHOTTER_MODE"],
];
/** A flag kata-deploy's chart renders as its variable's one word ("dmverity"), or not at all. */
const FLAGS: Array<[string, string, string]> = [["erofs_dmverity", "EROFS_DMVERITY", "dmverity"]];

/** Where the DaemonSet mounts the overrides ConfigMap, and the variable that names the file. */
export const OVERRIDES_DIR = "/etc/kata-install";
export const OVERRIDES_FILE = `${OVERRIDES_DIR}/kata-install.toml`;
/** The admin's containerd drop-in (containerd_user_drop_in), mounted beside the overrides. */
/** Where the DaemonSet mounts the saved plans' ConfigMap (values plans.config_map). */
export const PLANS_DIR = "/plans";
export const USER_DROP_IN_FILE = `${OVERRIDES_DIR}/containerd-user-dropin.toml`;

function text(value: unknown): string {
  return (Array.isArray(value) ? value.join(" ") : String(value ?? "")).trim();
}

export function suffixOf(v: Values): string | null {
  return text(v.multi_install_suffix) || null;
}

export function environment(
  v: Values,
  hasOverrides: boolean,
  hasUserDropIn = false,
): Array<{ name: string; value: string }> {
  const env: Array<[string, string]> = [];
  for (const [key, name] of PER_ARCH) env.push([name, text(v[key])]);
  env.push(["DEBUG", v.debug ? "true" : ""]);
  for (const [key, name] of PLAIN) env.push([name, text(v[key])]);
  for (const [key, name, word] of FLAGS) env.push([name, v[key] === true ? word : ""]);
  for (const arch of ARCHES) {
    const table = (v.arch as Record<string, Values>)[arch] as Values;
    for (const [key, name] of PER_ARCH) env.push([`${name}_${envArch(arch)}`, text(table[key])]);
  }
  env.push(["STARTUP_TAINTS", (v.startup_taints as string[]).join(",")]);
  const artifacts = text(v.artifacts);
  env.push(["ARTIFACTS", artifacts]);
  if (artifacts) env.push(["ARTIFACTS_TAG", text(v.artifacts_tag) || text(v.kata_version)]);
  if ((v.nfd as Values).feature_file) env.push(["NFD_FEATURE_FILE", "true"]);
  if (hasOverrides) env.push(["KATA_INSTALL_OVERRIDES", OVERRIDES_FILE]);
  if (hasUserDropIn) env.push(["CONTAINERD_USER_DROP_IN_SOURCE_FILE", USER_DROP_IN_FILE]);
  // The kubelet expands $(NODE_NAME): the pod's env defines it first.
  if (text((v.plans as Values).config_map)) env.push(["KATA_INSTALL_PLAN", `${PLANS_DIR}/$(NODE_NAME).json`]);
  return env.filter(([, value]) => value !== "").map(([name, value]) => ({ name, value }));
}

/** The values key a variable came from, to name it in an error. */
function keyOf(variable: string): string {
  for (const arch of ARCHES)
    for (const [key, name] of PER_ARCH)
      if (variable === `${name}_${envArch(arch)}`) return `arch.${arch}.${key}`;
  const found = [...PER_ARCH, ...PLAIN, ...FLAGS].find(([, name]) => name === variable);
  return found ? found[0] : variable;
}

/**
 * Every variable as each architecture's nodes would read it, through the nodes' own reader: what
 * they would refuse (issues), and what they would say (notes).
 */
export function checkEnvironment(
  env: Array<{ name: string; value: string }>,
  file: string,
): { issues: InputIssue[]; notes: InputIssue[] } {
  const issues: InputIssue[] = [];
  const notes: InputIssue[] = [];
  const vars = Object.fromEntries(env.map((e) => [e.name, e.value]));
  const seen = new Set<string>();
  for (const arch of ARCHES) {
    try {
      parseEnv(vars, arch);
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      for (const issue of error.issues) {
        const key = keyOf(issue.key ?? "");
        const line = `${key}: ${issue.message}`;
        if (seen.has(line)) continue;
        seen.add(line);
        issues.push({ file, key, message: issue.message });
      }
    }
  }
  const taints = parseStartupTaints(vars.STARTUP_TAINTS ?? "");
  if (typeof taints === "string") issues.push({ file, key: "startup_taints", message: taints });
  const distribution = vars.K8S_DISTRIBUTION;
  const unknown = distribution === undefined ? null : unknownDistribution(distribution);
  if (unknown) notes.push({ file, key: "k8s_distribution", message: unknown });
  return { issues, notes };
}
