// kata-deploy's environment variables, so kata-install is a drop-in for its DaemonSet. Architecture-
// specific forms (SHIMS_X86_64) win over the plain ones (SHIMS). Every malformed variable is
// reported, by name.
import { isPlainFileName } from "../detect/context.js";
import { InputError, type InputIssue } from "../input-error.js";
import { shimNameProblem } from "./catalog.js";
import { controlCharacter, kernelWordProblem } from "./kernel-cmdline.js";
import { parseSetupEnv, type SetupSettings } from "./setup-env.js";

export interface FromEnv<T> {
  value: T;
  /** The variable it came from. */
  name: string;
}

export interface EnvSettings extends SetupSettings {
  shims?: FromEnv<string[]>;
  defaultShim?: FromEnv<string>;
  debug?: FromEnv<boolean>;
  /** Per shim ("all" for every shim): annotations the runtime accepts from pods. */
  allowedAnnotations: Record<string, FromEnv<string[]>>;
  /** Per shim ("all" for every shim), as kata-deploy takes them: one value, or shim=value;shim=value. */
  agentHttpsProxy: Record<string, FromEnv<string>>;
  agentNoProxy: Record<string, FromEnv<string>>;
  snapshotters: Record<string, FromEnv<string>>;
  pullTypes: Record<string, FromEnv<string>>;
  /**
   * The variable each mapping came from, when set: a set mapping is the whole mapping (kata-deploy's
   * chart renders every shim's into it), so a shim it does not name gets no snapshotter or pull type
   * of its own — not the chart's default for it (see handler-settings.ts).
   */
  snapshotterMapping?: string;
  pullTypeMapping?: string;
  forceGuestPull: Record<string, FromEnv<boolean>>;
  prefix?: FromEnv<string>;
  suffix?: FromEnv<string>;
}

/** kata-deploy's spelling of an architecture in variable names. */
export function envArch(arch: string): string {
  return arch.toUpperCase().replace(/[^A-Z0-9]/g, "_");
}

const PULL_TYPES = ["guest-pull", "default"];

const pullTypeProblem = (value: string): string | null =>
  PULL_TYPES.includes(value) ? null : `expected one of ${PULL_TYPES.join(", ")}`;

/** A snapshotter is named as containerd names its plugins (nydus, overlayfs, devmapper, erofs). */
export const snapshotterProblem = (value: string): string | null =>
  /^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(value)
    ? null
    : 'is no snapshotter name (letters, digits, "_", "." and "-", as containerd names its plugins)';

/** Why an annotation name is refused, said as the error's reason. */
function describeBad(text: string): string {
  const control = controlCharacter(text);
  return control === null ? 'it has a ":"' : `it has ${control}`;
}

/** A value as an error shows it: control characters escaped, so the message stays on one line. */
function printable(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}

export function parseEnv(
  env: Readonly<Record<string, string | undefined>>,
  arch: string | null,
): EnvSettings {
  const issues: InputIssue[] = [];
  const bad = (name: string, message: string) => issues.push({ file: "environment", key: name, message });
  const pick = (base: string): FromEnv<string> | undefined => {
    const specific = arch === null ? undefined : `${base}_${envArch(arch)}`;
    const own = specific === undefined ? undefined : env[specific];
    if (specific !== undefined && own !== undefined && own.trim() !== "")
      return { value: own.trim(), name: specific };
    const plain = env[base];
    return plain !== undefined && plain.trim() !== "" ? { value: plain.trim(), name: base } : undefined;
  };
  const words = (text: string) => text.split(/[\s,]+/).filter(Boolean);
  // Only the form here: whether the release ships a shim is known once it is read (decide).
  const shimName = (variable: string, name: string) => {
    // Escaped: a control character in a name must not break the error's line.
    const problem = shimNameProblem(printable(name));
    if (problem !== null) bad(variable, problem);
  };
  const settings: EnvSettings = {
    allowedAnnotations: {},
    agentHttpsProxy: {},
    agentNoProxy: {},
    snapshotters: {},
    pullTypes: {},
    forceGuestPull: {},
  };

  // kata-deploy: unset or "" is its default list; spaces only is an error, not a default.
  for (const name of Object.keys(env).filter((n) => /^SHIMS(_[A-Z0-9_]+)?$/.test(n))) {
    const raw = env[name];
    if (raw !== undefined && raw !== "" && raw.trim() === "")
      bad(name, "only spaces: name the shims, or leave it unset (or empty) for the default set");
  }
  const shims = pick("SHIMS");
  if (shims) {
    settings.shims = { value: words(shims.value), name: shims.name };
    for (const name of settings.shims.value) shimName(shims.name, name);
  }
  const defaultShim = pick("DEFAULT_SHIM");
  if (defaultShim) {
    settings.defaultShim = defaultShim;
    shimName(defaultShim.name, defaultShim.value);
  }
  const debug = env.DEBUG?.trim();
  if (debug !== undefined && debug !== "") {
    if (/^(true|yes|1|on)$/i.test(debug)) settings.debug = { value: true, name: "DEBUG" };
    else if (/^(false|no|0|off)$/i.test(debug)) settings.debug = { value: false, name: "DEBUG" };
    else
      bad(
        "DEBUG",
        `expected true or false (or yes/no, 1/0, on/off), got "${debug}"; if it is another program's DEBUG, unset it for kata-install`,
      );
  }
  const annotations = pick("ALLOWED_HYPERVISOR_ANNOTATIONS");
  if (annotations) {
    // "default_vcpus qemu:default_memory,enable_iommu": plain items for every shim, shim:list for one.
    for (const item of annotations.value.split(/\s+/).filter(Boolean)) {
      const colon = item.indexOf(":");
      const shim = colon < 0 ? "all" : item.slice(0, colon);
      const list = (colon < 0 ? item : item.slice(colon + 1)).split(",").filter(Boolean);
      if (colon === 0 || (colon > 0 && list.length === 0)) {
        bad(
          annotations.name,
          `expected an annotation, or shim:annotation,annotation, got "${printable(item)}"`,
        );
        continue;
      }
      if (shim !== "all") shimName(annotations.name, shim);
      const wrong = list.find((a) => a.includes(":") || controlCharacter(a) !== null);
      if (wrong !== undefined) {
        bad(
          annotations.name,
          `"${printable(wrong)}" in "${printable(item)}" is no annotation name (${describeBad(wrong)})`,
        );
        continue;
      }
      const current = settings.allowedAnnotations[shim]?.value ?? [];
      settings.allowedAnnotations[shim] = { value: [...current, ...list], name: annotations.name };
    }
  }
  for (const [base, target, check] of [
    ["SNAPSHOTTER_HANDLER_MAPPING", settings.snapshotters, snapshotterProblem],
    ["PULL_TYPE_MAPPING", settings.pullTypes, pullTypeProblem],
  ] as const) {
    const mapping = pick(base);
    if (!mapping) continue;
    if (base === "SNAPSHOTTER_HANDLER_MAPPING") settings.snapshotterMapping = mapping.name;
    else settings.pullTypeMapping = mapping.name;
    for (const pair of mapping.value
      .split(",")
      .map((p) => p.trim())
      .filter(Boolean)) {
      const [shim, value, extra] = pair.split(":");
      if (!shim || !value || extra !== undefined) {
        bad(mapping.name, `expected shim:value pairs separated by commas, got "${printable(pair)}"`);
        continue;
      }
      shimName(mapping.name, shim);
      const problem = check(value);
      if (problem !== null) bad(mapping.name, `"${printable(value)}" for ${shim}: ${problem}`);
      // One shim twice: which one wins must not depend on the order (kata-deploy refuses it too).
      if (target[shim] !== undefined) bad(mapping.name, `${shim} is mapped twice`);
      target[shim] = { value, name: mapping.name };
    }
  }
  const force = pick("EXPERIMENTAL_FORCE_GUEST_PULL");
  if (force) {
    for (const shim of words(force.value)) {
      shimName(force.name, shim);
      settings.forceGuestPull[shim] = { value: true, name: force.name };
    }
  }
  for (const [name, key] of [
    ["AGENT_HTTPS_PROXY", "agentHttpsProxy"],
    ["AGENT_NO_PROXY", "agentNoProxy"],
  ] as const) {
    const value = env[name]?.trim();
    if (!value) continue;
    // Each value becomes one parameter of the guest kernel's command line (agent.https_proxy=…).
    const word = (shim: string, text: string) => {
      const problem = text === "" ? "is empty" : kernelWordProblem(text);
      if (problem === null) return true;
      bad(name, `${shim === "all" ? "the value" : `the value for ${shim}`} "${printable(text)}" ${problem}`);
      return false;
    };
    // kata-deploy: any "=" means the per-shim form, shim=value;shim=value; else one value for all.
    if (!value.includes("=")) {
      if (word("all", value)) settings[key].all = { value, name };
      continue;
    }
    for (const item of value
      .split(";")
      .map((i) => i.trim())
      .filter(Boolean)) {
      const eq = item.indexOf("=");
      const shim = item.slice(0, eq).trim();
      if (eq <= 0 || shimNameProblem(shim) !== null) {
        // As kata-deploy reads it: a "=" anywhere means this form, so a value for every shim has none.
        bad(
          name,
          `expected shim=value pairs separated by ";" (a value with "=" is read so, as kata-deploy reads it), got "${printable(item)}"`,
        );
        continue;
      }
      if (settings[key][shim] !== undefined) bad(name, `${shim} is given twice`);
      const proxy = item.slice(eq + 1).trim();
      if (word(shim, proxy)) settings[key][shim] = { value: proxy, name };
    }
  }
  const prefix = env.INSTALLATION_PREFIX?.trim();
  if (prefix) {
    if (!prefix.startsWith("/") || prefix.includes(".."))
      bad("INSTALLATION_PREFIX", `expected an absolute path without "..", got "${prefix}"`);
    // As in kata-deploy: Kata goes to <INSTALLATION_PREFIX>/opt/kata.
    else settings.prefix = { value: `${prefix.replace(/\/+$/, "")}/opt/kata`, name: "INSTALLATION_PREFIX" };
  }
  const configName = env.CONTAINERD_CONFIG_FILE_NAME?.trim();
  if (configName && !isPlainFileName(configName))
    bad(
      "CONTAINERD_CONFIG_FILE_NAME",
      `expected a file name in /etc/containerd (no "/"), got "${configName}"`,
    );
  const suffix = env.MULTI_INSTALL_SUFFIX?.trim();
  if (suffix) {
    if (!/^[a-z0-9][a-z0-9-]*$/.test(suffix))
      bad("MULTI_INSTALL_SUFFIX", `expected lower-case letters, digits and dashes, got "${suffix}"`);
    else settings.suffix = { value: suffix, name: "MULTI_INSTALL_SUFFIX" };
  }
  // EXPERIMENTAL_SETUP_SNAPSHOTTER and EROFS_*: erofs carried out, nydus refused with why.
  Object.assign(settings, parseSetupEnv(env, bad));
  if (issues.length > 0) throw new InputError("kata-deploy environment variables are invalid", issues);
  return settings;
}
