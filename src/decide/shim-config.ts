// Each chosen shim's configuration values: the rules', the host binaries chosen over bundled ones,
// kata-deploy's environment and the overrides file, each with its source and what it beat.

import { must } from "../at.js";
import { byText } from "../compare.js";
import { DEFAULT_PREFIX } from "../detect/context.js";
import { valueAt } from "../detect/fact-paths.js";
import { valueAt as valueAtKey } from "../release/config-file.js";
import { baseName, type Release } from "../release/release.js";
import type { ShimSpec } from "./catalog.js";
import type { Check, CustomRuntime, Decision, HandlerSettings } from "./decision.js";
import type { DecideInput } from "./input.js";
import { wrapperPath } from "./layout.js";
import {
  type Decided,
  describeSource,
  isOverride,
  Ladder,
  overridesSource,
  ruleSource,
  type Source,
} from "./provenance.js";
import { configValueCheck } from "./release-checks.js";
import type { Rule } from "./rules.js";
import { carriedValues, type Takeover } from "./takeover.js";

export function shimConfig(
  input: DecideInput,
  spec: ShimSpec,
  matched: Rule[],
  sources: Map<string, Decided<"bundled" | "distro">>,
  warnings: Check[],
  contradiction: (m: string, r: string) => void,
  takeover: Takeover | null = null,
): Record<string, Decided<unknown>> {
  const { catalog, facts, overrides, env } = input;
  const ladders = new Map<string, Ladder<unknown>>();
  /** `forAll`: a value for every shim ("all"), which a shim whose configuration lacks the key skips. */
  const offer = (key: string, value: unknown, source: Source, forAll = false) => {
    if (forAll && catalog.hasKey(spec.name, key) === false) return;
    // Held against the shim's configuration in the release: its keys, their types, their values.
    const problem = configValueCheck(input, spec.name, key, value, source);
    if (problem !== null) {
      warnings.push(problem.check);
      if (!problem.keep) return;
    }
    const ladder = ladders.get(key) ?? new Ladder<unknown>();
    ladder.offer(value, source);
    ladders.set(key, ladder);
  };
  const hv = `hypervisor.${spec.hypervisor}`;

  // The release's own oddities, decided with their reason rather than "fixed" silently: a path
  // key its build left as a placeholder (4.1.0's Rust NVIDIA file: firmware_volume =
  // "@FIRMWAREVOLUMEPATH_NV@") names no file on any node, and Kata would refuse to start the VM.
  const shipped = catalog.release?.shims.get(spec.name);
  for (const [key, info] of shipped?.config.keys ?? []) {
    if (!info.set || !key.startsWith("hypervisor.")) continue;
    const value = valueAtKey(shipped?.config.table ?? {}, key);
    if (typeof value !== "string" || !/^@[A-Z0-9_]+@$/.test(value)) continue;
    const reason = `${baseName(catalog.release as Release, spec.name)} leaves ${key} as its build's placeholder ${value}, which names nothing: unset`;
    offer(key, "", { kind: "default", name: `kata-install (${reason})` });
    warnings.push({ id: "release", severity: "info", status: "fail", message: reason, rule: "decide" });
  }

  for (const rule of matched) {
    for (const target of ["all", spec.name]) {
      for (const [key, value] of Object.entries(rule.config[target] ?? {})) {
        if ("literal" in value) offer(key, value.literal, ruleSource(rule), target === "all");
        else {
          const fact = valueAt(facts, value.fact);
          if (fact === undefined || fact === null) {
            warnings.push({
              id: "override-contradicts-facts",
              severity: "warning",
              status: "fail",
              message: `rule ${rule.name} takes ${key} from the fact ${value.fact}, which is unknown on this node; the release's value stays`,
              rule: rule.name,
            });
          } else offer(key, fact, ruleSource(rule), target === "all");
        }
      }
    }
  }

  // Host binaries chosen over bundled ones: the configuration points at them.
  for (const name of spec.host_parts) {
    const part = catalog.hostParts.get(name);
    const chosen = sources.get(name);
    const binary = part === undefined ? null : facts.hypervisors[part.fact];
    if (part === undefined || chosen?.value !== "distro" || binary?.origin !== "distro") continue;
    const from: Source = { kind: "derived", name: `the host's ${name}`, from: chosen.source };
    for (const key of part.path_keys) offer(`${hv}.${key}`, binary.path, from);
    // An allowlist the shim's configuration does not have (the Rust runtime's) restricts nothing.
    for (const key of part.list_keys) offer(`${hv}.${key}`, [binary.path], from, true);
  }

  // What kata-deploy wrote for this shim, on a takeover: the decisions it was.
  if (takeover)
    for (const carried of carriedValues(input, takeover, spec.name))
      offer(carried.key, carried.value, carried.source);

  // kata-deploy's environment (DEBUG is not here: it adds debug handlers, see install.debug).
  const annotations = [
    ...(env.allowedAnnotations.all?.value ?? []),
    ...(env.allowedAnnotations[spec.name]?.value ?? []),
  ];
  if (annotations.length > 0) {
    const name = must(
      env.allowedAnnotations[spec.name] ?? env.allowedAnnotations.all,
      "the annotations' variable",
    ).name;
    offer(`${hv}.enable_annotations`, [...new Set(annotations)], { kind: "env", name });
  }
  // kata-deploy's proxies: this shim's own value, else the one for all.
  const httpsProxy = env.agentHttpsProxy[spec.name] ?? env.agentHttpsProxy.all;
  const noProxy = env.agentNoProxy[spec.name] ?? env.agentNoProxy.all;
  const proxy = [
    httpsProxy ? `agent.https_proxy=${httpsProxy.value}` : "",
    noProxy ? `agent.no_proxy=${noProxy.value}` : "",
  ].filter(Boolean);
  if (proxy.length > 0) {
    const name = [httpsProxy?.name, noProxy?.name].filter(Boolean).join(", ");
    offer(`${hv}.kernel_params`, proxy.join(" "), { kind: "env", name });
  }
  const force = env.forceGuestPull[spec.name];
  if (force) offer("runtime.experimental_force_guest_pull", true, { kind: "env", name: force.name });

  // The overrides file, for every shim then for this one.
  for (const target of ["all", spec.name]) {
    for (const [key, value] of Object.entries(overrides.config[target] ?? {})) {
      offer(
        key,
        value,
        overridesSource(overrides, ["config", target, key], `config.${target}."${key}"`),
        target === "all",
      );
    }
  }

  const out: Record<string, Decided<unknown>> = {};
  for (const [key, ladder] of [...ladders].sort(([a], [b]) => byText(a, b))) {
    const decided = ladder.resolve() as Decided<unknown>;
    out[key] = decided;
    if (isOverride(decided.source)) {
      const rule = decided.beaten.find(
        (b) => b.source.kind === "rule" && JSON.stringify(b.value) !== JSON.stringify(decided.value),
      );
      if (rule && rule.source.kind === "rule") {
        contradiction(
          `${describeSource(decided.source)} sets ${key} = ${JSON.stringify(decided.value)} for ${spec.name}, but rule ${rule.source.name} decided ${JSON.stringify(rule.value)} for this node: ${rule.source.why}`,
          rule.source.name,
        );
      }
    }
  }
  const missing = missingSharedFsDevice(input, spec, sources, out[`${hv}.shared_fs`]);
  if (missing !== null) warnings.push(missing);
  return out;
}

/**
 * virtio-9p is a device of qemu's own: a host's qemu built without it (RHEL's qemu-kvm) cannot
 * start a guest configured for it, so a value that asks for it there (an override, a takeover's
 * carried one) is an error naming the device, not a warning about the rule it beat.
 */
function missingSharedFsDevice(
  input: DecideInput,
  spec: ShimSpec,
  sources: Map<string, Decided<"bundled" | "distro">>,
  sharedFs: Decided<unknown> | undefined,
): Check | null {
  if (sharedFs?.value !== "virtio-9p") return null;
  for (const name of spec.host_parts) {
    const part = input.catalog.hostParts.get(name);
    const binary = part === undefined ? null : input.facts.hypervisors[part.fact];
    if (sources.get(name)?.value !== "distro" || binary?.origin !== "distro") continue;
    const devices = "devices" in binary ? binary.devices : null;
    if (!Array.isArray(devices) || devices.some((d) => d.startsWith("virtio-9p"))) continue;
    return {
      id: "hypervisor-device",
      severity: "error",
      status: "fail",
      message: `${describeSource(sharedFs.source)} sets hypervisor.${spec.hypervisor}.shared_fs = "virtio-9p" for ${spec.name}, but the host's ${name} it runs (${binary.path}) has no virtio-9p device (its -device help lists none): the shim's guests would not start`,
      hint: `share files with virtio-fs (the release's default), or run Kata's own ${name}: [artifacts.${name}] source = "bundled" in the overrides file`,
      rule: "decide",
    };
  }
  return null;
}

/** The admin's custom runtimes whose base shim is installed here, each with its values over the base's. */
export function customRuntimesFor(
  input: DecideInput,
  selected: Set<string>,
  config: Decision["config"],
  handlers: Record<string, HandlerSettings>,
  warnings: Check[],
  /** kata-deploy's nydus instance this install sets up: what a custom runtime's "nydus" names, as in kata-deploy. */
  nydusSetUp: string | null = null,
  /** kata-deploy's custom runtimes on the node taken over (or carried by an earlier takeover). */
  carried: NonNullable<Takeover["customRuntimes"]> = [],
): CustomRuntime[] {
  const { overrides } = input;
  const customRuntimes: CustomRuntime[] = [];
  // kata-deploy's, kept on the takeover under their names (the overrides file's own of a name win).
  for (const c of carried) {
    if (overrides.customRuntimes[c.handler] !== undefined) continue;
    const source: Source = {
      kind: "carried",
      name: `kata-deploy's custom runtime ${c.handler}, carried over by the takeover`,
      file: c.file,
      over: "overrides",
    };
    if (!selected.has(c.base)) {
      warnings.push({
        id: "custom-runtime",
        severity: "warning",
        status: "fail",
        message: `kata-deploy's custom runtime ${c.handler} goes with the takeover: its base shim ${c.base} is not installed on this node`,
        hint: `install ${c.base} here (SHIMS, or the overrides file's shims), or keep the custom runtime's pods off this node`,
        rule: "decide",
      });
      continue;
    }
    const own: Record<string, Decided<unknown>> = {};
    for (const [key, value] of Object.entries(c.values)) {
      const problem = configValueCheck(input, c.base, key, value, source);
      if (problem !== null) warnings.push(problem.check);
      const base = config[c.base]?.[key];
      own[key] = { value, source, beaten: base ? [{ value: base.value, source: base.source }] : [] };
    }
    const onNode = input.facts.runtime.handlers.find((h) => h.name === c.handler)?.snapshotter;
    const base = handlers[c.base] ?? {};
    // As kata-deploy made it: the base shim's values but for the admin's drop-in of that shim (the
    // chart's dropIn), which kata-deploy does not copy into a custom runtime.
    const ofBase = Object.entries(config[c.base] ?? {}).filter(
      ([, d]) => !(d.source.kind === "carried" && d.source.over === "overrides"),
    );
    customRuntimes.push({
      handler: c.handler,
      base: c.base,
      config: { ...Object.fromEntries(ofBase), ...own },
      settings: {
        snapshotter: onNode ? { value: onNode, source, beaten: [] } : base.snapshotter,
        pullType: base.pullType,
      },
      source,
    });
  }
  for (const [handler, spec] of Object.entries(overrides.customRuntimes)) {
    const source = overridesSource(overrides, ["custom_runtimes", handler], `custom_runtimes.${handler}`);
    if (!selected.has(spec.base)) {
      warnings.push({
        id: "custom-runtime",
        severity: "warning",
        status: "fail",
        message: `custom runtime ${handler} is not written: its base shim ${spec.base} is not installed on this node`,
        hint: `install ${spec.base} here, or leave the node out of this runtime's RuntimeClass`,
        rule: "decide",
      });
      continue;
    }
    const own: Record<string, Decided<unknown>> = {};
    for (const [key, value] of Object.entries(spec.config)) {
      const from = overridesSource(
        overrides,
        ["custom_runtimes", handler, "config", key],
        `custom_runtimes.${handler}.config."${key}"`,
      );
      const problem = configValueCheck(input, spec.base, key, value, from);
      if (problem !== null) warnings.push(problem.check);
      const base = config[spec.base]?.[key];
      own[key] = { value, source: from, beaten: base ? [{ value: base.value, source: base.source }] : [] };
    }
    const base = handlers[spec.base] ?? {};
    customRuntimes.push({
      handler,
      base: spec.base,
      config: { ...config[spec.base], ...own },
      settings: {
        snapshotter: spec.snapshotter
          ? {
              value: spec.snapshotter === "nydus" && nydusSetUp !== null ? nydusSetUp : spec.snapshotter,
              source,
              beaten: [],
            }
          : base.snapshotter,
        pullType: spec.pullType ? { value: spec.pullType, source, beaten: [] } : base.pullType,
      },
      source,
    });
  }

  return customRuntimes;
}

/**
 * Outside /opt/kata (INSTALLATION_PREFIX, MULTI_INSTALL_SUFFIX), Kata's qemu does not find its
 * firmware where it was built to look: the shim runs it through a wrapper that passes -L (render
 * writes it), as kata-deploy does. Not for a host's qemu, which the configuration names already.
 */
export function qemuWrapperValues(
  input: DecideInput,
  spec: ShimSpec,
  decided: Record<string, Decided<unknown>>,
  dir: string,
  moved: Source,
): void {
  const shipped = input.catalog.release?.shims.get(spec.name);
  const section = shipped?.hypervisor;
  if (dir === DEFAULT_PREFIX || section !== "qemu" || decided["hypervisor.qemu.path"] !== undefined) return;
  const path = valueAtKey(shipped?.config.table ?? {}, "hypervisor.qemu.path");
  if (typeof path !== "string" || !path.startsWith(`${DEFAULT_PREFIX}/bin/`)) return;
  const wrapper = wrapperPath(dir, path.slice(`${DEFAULT_PREFIX}/bin/`.length));
  const source: Source = { kind: "derived", name: "Kata's qemu told where its firmware is", from: moved };
  decided["hypervisor.qemu.path"] = { value: wrapper, source, beaten: [] };
  decided["hypervisor.qemu.valid_hypervisor_paths"] = { value: [wrapper], source, beaten: [] };
}
