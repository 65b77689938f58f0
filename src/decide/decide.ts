// The decide stage: Facts + rules + overrides + environment + flags → Decision. Pure: it reads
// nothing but its arguments, so the same inputs always give the same decision.

import { byText } from "../compare.js";
import { valueAt } from "../detect/fact-paths.js";
import type { Facts } from "../detect/facts.js";
import type { RuntimeKind } from "../detect/runtime/schema.js";
import { compareVersions, versionParts } from "../version.js";
import type { Catalog, ShimSpec } from "./catalog.js";
import type { ArtifactChoice, Check, Chosen, CustomRuntime, Decision, HandlerSettings } from "./decision.js";
import type { EnvSettings } from "./env.js";
import { evaluate } from "./match.js";
import type { Overrides } from "./overrides.js";
import { type Decided, describeSource, isOverride, Ladder, type Source } from "./provenance.js";
import type { Rule, RuleSet } from "./rules.js";

export interface Flags {
  shims?: string[];
  defaultShim?: string;
  ignorePreflightErrors: string[];
}

export interface DecideInput {
  facts: Facts;
  catalog: Catalog;
  rules: RuleSet;
  overrides: Overrides;
  env: EnvSettings;
  flags: Flags;
}

/** Checks the engine itself raises, beside the rules' ones (ids --ignore-preflight-errors accepts). */
export const ENGINE_CHECKS = [
  "shims",
  "default-shim",
  "override-contradicts-facts",
  "env-mapping",
  "handler-snapshotter",
  "custom-runtime",
] as const;

export const DEFAULT_PREFIX = "/opt/kata";
const TEMPLATE_DEFAULT: Source = { kind: "default", name: "template default" };
const CAPABILITY_TABLE: Source = { kind: "default", name: "capability table (rules/shims.toml)" };

export function decide(input: DecideInput): Decision {
  const { facts, catalog, rules, overrides, env, flags } = input;
  const arch = facts.arch;
  const warnings: Check[] = [];
  const contradiction = (message: string, rule: string) =>
    warnings.push({ id: "override-contradicts-facts", severity: "warning", status: "fail", message, rule });

  // 1. Rules, in dependency order; variables are false until a rule sets them.
  const vars: Record<string, unknown> = Object.fromEntries([...rules.vars].map((v) => [v, false]));
  const varLadders = new Map<string, Ladder<unknown>>();
  const matched: Rule[] = [];
  const document = { ...facts, vars };
  for (const rule of rules.rules) {
    if (!evaluate(rule.match, document)) continue;
    matched.push(rule);
    for (const [name, value] of Object.entries(rule.vars)) {
      const ladder = varLadders.get(name) ?? new Ladder<unknown>();
      ladder.offer(value, ruleSource(rule));
      varLadders.set(name, ladder);
      vars[name] = ladder.resolve()?.value;
    }
  }

  // 2. Checks: one per id, failed when any of its rules matched.
  const checks = rulesChecks(rules.rules, matched, facts);

  // 3. Shims.
  const runtime = overriddenRuntime(facts, overrides, contradiction);
  const { shims, dropped } = chooseShims(input, matched, vars, contradiction);
  const selected = new Set(shims.map((s) => s.name));
  if (shims.length === 0) {
    warnings.push({
      id: "shims",
      severity: "error",
      status: "fail",
      message: `no shim can run on this node${dropped.length > 0 ? `: ${groupReasons(dropped)}` : ""}`,
      rule: "decide",
    });
  }
  const defaultShim = chooseDefaultShim(input, selected, warnings);
  warnings.push(...mappingChecks(input));
  warnings.push(...snapshotterChecks(input, selected));

  // 4. Artifacts and where each comes from.
  const sources = artifactSources(input, matched);
  const { artifacts, droppedArtifacts } = chooseArtifacts(input, shims, sources, matched, contradiction);

  // 5. Configuration values, per selected shim.
  const config: Decision["config"] = {};
  for (const shim of shims) {
    const spec = catalog.shims.get(shim.name) as ShimSpec;
    config[shim.name] = shimConfig(input, spec, matched, sources, warnings, contradiction);
  }

  const handlers: Record<string, HandlerSettings> = {};
  for (const shim of shims) {
    const spec = catalog.shims.get(shim.name) as ShimSpec;
    const snapshotter = new Ladder<string>();
    if (spec.snapshotter !== "") snapshotter.offer(spec.snapshotter, CAPABILITY_TABLE);
    const fromEnv = env.snapshotters[shim.name];
    if (fromEnv) snapshotter.offer(fromEnv.value, { kind: "env", name: fromEnv.name });
    const pull = env.pullTypes[shim.name];
    handlers[shim.name] = {
      snapshotter: snapshotter.resolve(),
      pullType: pull
        ? { value: pull.value, source: { kind: "env", name: pull.name }, beaten: [] }
        : undefined,
    };
  }

  const customRuntimes: CustomRuntime[] = [];
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
      const base = config[spec.base]?.[key];
      own[key] = { value, source: from, beaten: base ? [{ value: base.value, source: base.source }] : [] };
    }
    const base = handlers[spec.base] ?? {};
    customRuntimes.push({
      handler,
      base: spec.base,
      config: { ...config[spec.base], ...own },
      settings: {
        snapshotter: spec.snapshotter ? { value: spec.snapshotter, source, beaten: [] } : base.snapshotter,
        pullType: spec.pullType ? { value: spec.pullType, source, beaten: [] } : base.pullType,
      },
      source,
    });
  }

  const prefix = new Ladder<string>();
  prefix.offer(DEFAULT_PREFIX, { kind: "default", name: "kata-deploy's prefix" });
  if (env.prefix) prefix.offer(env.prefix.value, { kind: "env", name: env.prefix.name });
  const suffix = new Ladder<string>();
  suffix.offer("", { kind: "default", name: "no suffix" });
  if (env.suffix) suffix.offer(env.suffix.value, { kind: "env", name: env.suffix.name });

  const debug = new Ladder<boolean>();
  debug.offer(false, { kind: "default", name: "no debug handlers" });
  if (env.debug) debug.offer(env.debug.value, { kind: "env", name: env.debug.name });

  const allChecks = applyIgnores([...checks, ...warnings], overrides, flags);
  return {
    arch,
    runtime,
    containerdInPlace: containerdInPlace(matched),
    checks: allChecks,
    shims,
    dropped,
    defaultShim,
    artifacts,
    droppedArtifacts,
    config,
    handlers,
    customRuntimes,
    install: {
      prefix: prefix.resolve() as Decided<string>,
      suffix: suffix.resolve() as Decided<string>,
      debug: debug.resolve() as Decided<boolean>,
    },
    vars,
    matched: matched.map((r) => r.name),
  };
}

function ruleSource(rule: Rule): Source {
  return { kind: "rule", name: rule.name, file: rule.file, why: rule.why, priority: rule.priority };
}

function overridesSource(overrides: Overrides, path: Array<string | number>, name: string): Source {
  return { kind: "overrides", name, file: overrides.file, line: overrides.lineOf(path) };
}

/** A failing check's message with the facts it names filled in ({fact:runtime.configPath}). */
function withFacts(message: string, facts: Facts): string {
  return message.replace(/\{fact:([^}]+)\}/g, (_, path: string) =>
    String(valueAt(facts, path) ?? "(unknown)"),
  );
}

function rulesChecks(rules: Rule[], matched: Rule[], facts: Facts): Check[] {
  const byId = new Map<string, Check>();
  const failed = new Set(matched.map((r) => r.name));
  for (const rule of [...rules].sort((a, b) => byText(a.name, b.name))) {
    if (!rule.check) continue;
    const fails = failed.has(rule.name);
    const existing = byId.get(rule.check.id);
    if (existing === undefined) {
      byId.set(rule.check.id, {
        id: rule.check.id,
        severity: rule.check.severity,
        status: fails ? "fail" : "pass",
        message: fails ? withFacts(rule.check.message, facts) : "passed",
        hint: fails ? rule.check.hint : undefined,
        rule: rule.name,
        why: rule.why,
      });
    } else if (fails) {
      // Several rules share an id (one per architecture or vendor): the failing one speaks.
      if (existing.status === "fail") {
        existing.message = `${existing.message}; ${withFacts(rule.check.message, facts)}`;
        existing.rule = `${existing.rule}, ${rule.name}`;
      } else
        Object.assign(existing, {
          status: "fail",
          message: withFacts(rule.check.message, facts),
          hint: rule.check.hint,
          rule: rule.name,
          why: rule.why,
        });
    }
  }
  return [...byId.values()].sort((a, b) => byText(a.id, b.id));
}

function overriddenRuntime(
  facts: Facts,
  overrides: Overrides,
  contradiction: (m: string, r: string) => void,
): Decided<RuntimeKind | null> {
  const ladder = new Ladder<RuntimeKind | null>();
  ladder.offer(facts.runtime.kind, { kind: "default", name: "detected" });
  if (overrides.runtimeKind !== undefined) {
    ladder.offer(overrides.runtimeKind, overridesSource(overrides, ["runtime", "kind"], "runtime.kind"));
    if (facts.runtime.kind !== null && facts.runtime.kind !== overrides.runtimeKind) {
      contradiction(
        `the overrides file sets the runtime to ${overrides.runtimeKind}, but ${facts.runtime.kind} was detected on this node`,
        "overrides",
      );
    }
  }
  return ladder.resolve() as Decided<RuntimeKind | null>;
}

/** The rules' verdict on how containerd's handlers are written (the variable runtime-config-in-place). */
function containerdInPlace(matched: Rule[]): Decided<boolean> {
  const ladder = new Ladder<boolean>();
  ladder.offer(false, { kind: "default", name: "a drop-in containerd imports" });
  for (const rule of matched) if (rule.vars[IN_PLACE_VAR] === true) ladder.offer(true, ruleSource(rule));
  return ladder.resolve() as Decided<boolean>;
}
export const IN_PLACE_VAR = "runtime-config-in-place";

function chooseShims(
  input: DecideInput,
  matched: Rule[],
  vars: Record<string, unknown>,
  contradiction: (m: string, r: string) => void,
): { shims: Chosen[]; dropped: Chosen[] } {
  const { facts, catalog, rules, overrides, env, flags } = input;
  const arch = facts.arch ?? "";
  // What the rules and the table say, before any pin.
  const ruled = new Map<string, Chosen>();
  const ruleDropped = new Map<string, Chosen>();
  for (const spec of catalog.shims.values()) {
    if (spec.arches.includes(arch) && !spec.opt_in) {
      ruled.set(spec.name, {
        name: spec.name,
        reason: `${spec.description}; runs on ${arch}`,
        source: CAPABILITY_TABLE,
      });
    }
  }
  for (const rule of matched) {
    for (const add of rule.addShims)
      ruled.set(add.name, { name: add.name, reason: add.reason, source: ruleSource(rule) });
  }
  for (const rule of matched) {
    for (const drop of rule.dropShims) {
      ruled.delete(drop.name);
      ruleDropped.set(drop.name, { name: drop.name, reason: drop.reason, source: ruleSource(rule) });
    }
  }
  const setters = (name: string) => rules.rules.filter((r) => name in r.vars);
  const unmet = (spec: ShimSpec): Chosen | undefined => {
    const missing = spec.requires.find((feature) => vars[feature] !== true);
    if (missing === undefined) return undefined;
    const rule = setters(missing)[0];
    const reason = rule
      ? `needs ${missing}: ${rule.description} — not the case here`
      : `needs ${missing}, which no rule establishes`;
    return { name: spec.name, reason, source: rule ? ruleSource(rule) : CAPABILITY_TABLE };
  };
  for (const name of [...ruled.keys()]) {
    const failing = unmet(catalog.shims.get(name) as ShimSpec);
    if (failing) {
      ruled.delete(name);
      ruleDropped.set(name, failing);
    }
  }

  // A pin (flag > overrides file > environment) replaces the set; contradictions are kept and said.
  const pin = flags.shims
    ? { list: flags.shims, source: { kind: "flag", name: "--shims" } as Source }
    : overrides.shims
      ? { list: overrides.shims, source: overridesSource(overrides, ["shims"], "shims") }
      : env.shims
        ? { list: env.shims.value, source: { kind: "env", name: env.shims.name } as Source }
        : undefined;
  if (pin === undefined) {
    return { shims: sortByName([...ruled.values()]), dropped: sortByName([...ruleDropped.values()]) };
  }
  const shims: Chosen[] = [];
  const unserved: Chosen[] = [];
  for (const name of [...new Set(pin.list)]) {
    const spec = catalog.shims.get(name);
    if (spec === undefined) {
      // One of kata-deploy's names that kata-install does not serve: dropped, with why.
      unserved.push({
        name,
        reason: `kata-install does not serve it: ${catalog.unserved.get(name) ?? "unknown"}`,
        source: CAPABILITY_TABLE,
      });
      continue;
    }
    const against =
      ruleDropped.get(name) ??
      (spec.arches.includes(arch)
        ? unmet(spec)
        : { name, reason: `it is not built for ${arch || "this architecture"}`, source: CAPABILITY_TABLE });
    if (against)
      contradiction(
        `${describeSource(pin.source)} installs ${name}, but ${against.reason} (${describeSource(against.source)})`,
        "decide",
      );
    shims.push({ name, reason: `pinned by ${describeSource(pin.source)}`, source: pin.source });
  }
  const dropped = [...ruled.values(), ...ruleDropped.values()]
    .filter((c) => !pin.list.includes(c.name))
    .map((c) => ({
      name: c.name,
      reason: `not among the shims pinned by ${describeSource(pin.source)}`,
      source: pin.source,
    }));
  return { shims: sortByName(shims), dropped: sortByName([...dropped, ...unserved]) };
}

function chooseDefaultShim(
  input: DecideInput,
  selected: Set<string>,
  warnings: Check[],
): Decided<string> | null {
  const { overrides, env, flags } = input;
  const ladder = new Ladder<string>();
  const preferred = input.catalog.defaultShim;
  const usual = preferred !== null && selected.has(preferred);
  const first = usual ? preferred : [...selected].sort()[0];
  if (first !== undefined)
    ladder.offer(first, {
      kind: "default",
      name: usual ? `${preferred} when installed` : "the first shim installed",
    });
  if (env.defaultShim) ladder.offer(env.defaultShim.value, { kind: "env", name: env.defaultShim.name });
  if (overrides.defaultShim)
    ladder.offer(overrides.defaultShim, overridesSource(overrides, ["default_shim"], "default_shim"));
  if (flags.defaultShim) ladder.offer(flags.defaultShim, { kind: "flag", name: "--default-shim" });
  const decided = ladder.resolve();
  if (decided && !selected.has(decided.value)) {
    warnings.push({
      id: "default-shim",
      severity: "error",
      status: "fail",
      message: `the default shim ${decided.value} (${describeSource(decided.source)}) is not among the shims to install`,
      hint: "choose one of the installed shims, or pin the shim too",
      rule: "decide",
    });
  }
  return decided ?? null;
}

function artifactSources(input: DecideInput, matched: Rule[]): Map<string, Decided<"bundled" | "distro">> {
  const { catalog, overrides } = input;
  const out = new Map<string, Decided<"bundled" | "distro">>();
  for (const name of catalog.artifacts) {
    const ladder = new Ladder<"bundled" | "distro">();
    ladder.offer("bundled", { kind: "default", name: "Kata's bundled artifact" });
    for (const rule of matched) {
      const source = rule.artifactSource[name];
      if (source) ladder.offer(source, ruleSource(rule));
    }
    const pinned = overrides.artifactSources[name];
    if (pinned)
      ladder.offer(
        pinned,
        overridesSource(overrides, ["artifacts", name, "source"], `artifacts.${name}.source`),
      );
    out.set(name, ladder.resolve() as Decided<"bundled" | "distro">);
  }
  return out;
}

function chooseArtifacts(
  input: DecideInput,
  shims: Chosen[],
  sources: Map<string, Decided<"bundled" | "distro">>,
  matched: Rule[],
  contradiction: (m: string, r: string) => void,
): { artifacts: ArtifactChoice[]; droppedArtifacts: Chosen[] } {
  const { catalog, facts } = input;
  // Which shims need each artifact, and through which artifacts when not directly (a guest image
  // extension needs its base image; every shim binary, the release's version files).
  const needs = new Map<string, string[]>();
  const through = new Map<string, Set<string>>();
  for (const shim of shims) {
    for (const direct of catalog.directArtifacts(shim.name, facts.arch)) {
      for (const artifact of catalog.dependencies(direct)) {
        if (!(needs.get(artifact) ?? []).includes(shim.name))
          needs.set(artifact, [...(needs.get(artifact) ?? []), shim.name]);
        if (artifact !== direct) through.set(artifact, (through.get(artifact) ?? new Set()).add(direct));
      }
    }
  }
  const via = (name: string) => {
    const by = [...(through.get(name) ?? [])].sort(byText);
    return by.length > 0 ? ` (what ${by.join(", ")} depend${by.length === 1 ? "s" : ""} on)` : "";
  };
  const artifacts: ArtifactChoice[] = [];
  const droppedArtifacts: Chosen[] = [];
  for (const [name, neededBy] of [...needs].sort(([a], [b]) => byText(a, b))) {
    const source = sources.get(name) as Decided<"bundled" | "distro">;
    if (source.value === "distro") {
      const part = catalog.hostParts.get(name);
      const hostCopy = part === undefined ? null : facts.hypervisors[part.fact];
      if (isOverride(source.source) && hostCopy?.origin !== "distro") {
        contradiction(
          `${describeSource(source.source)} uses the host's ${name}, but none was found on this node`,
          "decide",
        );
      }
      // Only shims that may run on the host's binary stop needing the bundled one.
      const stillBundled = neededBy.filter((s) => !catalog.shims.get(s)?.host_parts.includes(name));
      const where = hostCopy ? ` (${hostCopy.path}, ${hostCopy.version ?? "version unknown"})` : "";
      if (stillBundled.length === 0) {
        droppedArtifacts.push({
          name,
          reason: `the host's own ${name}${where} is used instead`,
          source: source.source,
        });
        artifacts.push({
          name,
          reason: `the host's ${name}${where}, for ${neededBy.join(", ")}`,
          source: source.source,
          from: "distro",
          neededBy,
        });
        continue;
      }
      artifacts.push({
        name,
        reason: `needed by ${stillBundled.join(", ")}, which cannot use the host's ${name}`,
        source: CAPABILITY_TABLE,
        from: "bundled",
        neededBy: stillBundled,
      });
      continue;
    }
    artifacts.push({
      name,
      reason: `needed by ${neededBy.join(", ")}${via(name)}`,
      source: source.source.kind === "default" ? CAPABILITY_TABLE : source.source,
      from: "bundled",
      neededBy,
    });
  }
  for (const rule of matched) {
    for (const add of rule.addArtifacts) {
      if (!artifacts.some((a) => a.name === add.name))
        artifacts.push({
          name: add.name,
          reason: add.reason,
          source: ruleSource(rule),
          from: "bundled",
          neededBy: [],
        });
    }
    for (const drop of rule.dropArtifacts) {
      const i = artifacts.findIndex((a) => a.name === drop.name && a.from === "bundled");
      if (i >= 0) {
        artifacts.splice(i, 1);
        droppedArtifacts.push({ name: drop.name, reason: drop.reason, source: ruleSource(rule) });
      }
    }
  }
  return { artifacts: sortByName(artifacts), droppedArtifacts: sortByName(droppedArtifacts) };
}

function shimConfig(
  input: DecideInput,
  spec: ShimSpec,
  matched: Rule[],
  sources: Map<string, Decided<"bundled" | "distro">>,
  warnings: Check[],
  contradiction: (m: string, r: string) => void,
): Record<string, Decided<unknown>> {
  const { catalog, facts, overrides, env } = input;
  const ladders = new Map<string, Ladder<unknown>>();
  const offer = (key: string, value: unknown, source: Source) => {
    if (catalog.keyType(spec.name, key) === undefined) return; // "all" names keys some shims lack
    const ladder = ladders.get(key) ?? new Ladder<unknown>();
    ladder.offer(value, source);
    ladders.set(key, ladder);
  };
  const hv = `hypervisor.${spec.hypervisor}`;

  for (const rule of matched) {
    for (const target of ["all", spec.name]) {
      for (const [key, value] of Object.entries(rule.config[target] ?? {})) {
        if ("literal" in value) offer(key, value.literal, ruleSource(rule));
        else {
          const fact = valueAt(facts, value.fact);
          if (fact === undefined || fact === null) {
            warnings.push({
              id: "override-contradicts-facts",
              severity: "warning",
              status: "fail",
              message: `rule ${rule.name} takes ${key} from the fact ${value.fact}, which is unknown on this node; the template default stays`,
              rule: rule.name,
            });
          } else offer(key, fact, ruleSource(rule));
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
    for (const key of part.list_keys) offer(`${hv}.${key}`, [binary.path], from);
  }

  // kata-deploy's environment (DEBUG is not here: it adds debug handlers, see install.debug).
  const annotations = [
    ...(env.allowedAnnotations.all?.value ?? []),
    ...(env.allowedAnnotations[spec.name]?.value ?? []),
  ];
  if (annotations.length > 0) {
    const name = (env.allowedAnnotations[spec.name] ?? env.allowedAnnotations.all)?.name as string;
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
      offer(key, value, overridesSource(overrides, ["config", target, key], `config.${target}."${key}"`));
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
  return out;
}

function applyIgnores(checks: Check[], overrides: Overrides, flags: Flags): Check[] {
  const ignored = new Set(
    [...overrides.ignore, ...flags.ignorePreflightErrors].map((id) => id.toLowerCase()),
  );
  const all = ignored.has("all");
  return checks.map((check) =>
    check.status === "fail" && (all || ignored.has(check.id))
      ? { ...check, status: "ignored", severity: check.severity === "error" ? "warning" : check.severity }
      : check,
  );
}

/** "clh, fc: needs kvm …; qemu-tdx: needs tdx …": one line per distinct reason. */
function groupReasons(dropped: Chosen[]): string {
  const byReason = new Map<string, string[]>();
  for (const d of dropped) byReason.set(d.reason, [...(byReason.get(d.reason) ?? []), d.name]);
  return [...byReason].map(([reason, names]) => `${names.join(", ")}: ${reason}`).join("; ");
}

function sortByName<T extends { name: string }>(list: T[]): T[] {
  return [...list].sort((a, b) => byText(a.name, b.name));
}

export { TEMPLATE_DEFAULT };

/** Snapshotters containerd always has; any other must be configured on the node to be used. */
const BUILTIN_SNAPSHOTTERS = ["overlayfs", "native"];
const CONTAINERD_FAMILY = ["containerd", "k3s", "rke2", "k0s", "microk8s"];

/**
 * SNAPSHOTTER_HANDLER_MAPPING takes effect only where containerd can pick a snapshotter per handler
 * (1.7 and later) and only with a snapshotter the node has: otherwise every pod of that handler
 * fails at image unpack, long after the install called itself a success.
 */
function snapshotterChecks(input: DecideInput, selected: Set<string>): Check[] {
  const { env, facts } = input;
  const mapped = Object.entries(env.snapshotters).filter(([shim]) => selected.has(shim));
  if (mapped.length === 0) return [];
  const variable = mapped[0]?.[1].name as string;
  const kind = facts.runtime.kind;
  const problem = (message: string, hint: string): Check[] => [
    { id: "handler-snapshotter", severity: "error", status: "fail", message, hint, rule: "decide" },
  ];
  // A DaemonSet's environment is the whole cluster's: on a CRI-O node the mapping has nothing to
  // act on (kata-deploy ignores it there too), and that is said, not an error.
  if (kind === null || !CONTAINERD_FAMILY.includes(kind))
    return [
      {
        id: "handler-snapshotter",
        severity: "warning",
        status: "fail",
        message: `${variable} maps handlers to containerd snapshotters, which this node's runtime (${kind ?? "unknown"}) does not have: ignored here`,
        hint: "PULL_TYPE_MAPPING chooses how CRI-O pulls a handler's images",
        rule: "decide",
      },
    ];
  const version = facts.runtime.version === null ? null : versionParts(facts.runtime.version);
  if (kind === "containerd" && version !== null && compareVersions(version, [1, 7]) < 0)
    return problem(
      `${variable}: containerd ${facts.runtime.version} has no snapshotter per runtime handler (containerd 1.7 and later have)`,
      "upgrade containerd to 1.7 or later, or unset the mapping",
    );
  const known = new Set([...BUILTIN_SNAPSHOTTERS, ...facts.runtime.snapshotters.map((s) => s.name)]);
  const missing = mapped.filter(([, to]) => !known.has(to.value));
  if (missing.length === 0) return [];
  return problem(
    missing
      .map(
        ([shim, to]) =>
          `${to.name} maps ${shim} to the snapshotter "${to.value}", which is not configured on this node`,
      )
      .join("; "),
    `configure it in containerd (configured here: ${[...known].sort().join(", ")}), or map the handler to one of those`,
  );
}

/**
 * kata-deploy's per-shim variables may name only the shims asked for (--shims, the overrides
 * file's shims, or SHIMS): a mapping for another is a mistake in the DaemonSet's environment, which
 * kata-deploy refuses too, named by its variable. Without a list asked for, each node's own set
 * differs by what it can run, and a mapping for a shim one node drops is no mistake.
 */
function mappingChecks(input: DecideInput): Check[] {
  const { env, flags, overrides } = input;
  const asked = flags.shims ?? overrides.shims ?? env.shims?.value;
  if (asked === undefined) return [];
  const named: Array<[string, string]> = [];
  for (const table of [
    env.snapshotters,
    env.pullTypes,
    env.forceGuestPull,
    env.allowedAnnotations,
    env.agentHttpsProxy,
    env.agentNoProxy,
  ])
    for (const [shim, from] of Object.entries(table)) if (shim !== "all") named.push([from.name, shim]);
  const stray = named.filter(([, shim]) => !asked.includes(shim));
  if (stray.length === 0) return [];
  return [
    {
      id: "env-mapping",
      severity: "error",
      status: "fail",
      message: stray
        .map(([variable, shim]) => `${variable} names ${shim}, which is not among the shims to install`)
        .join("; "),
      hint: "name only the shims asked for, or add that shim to them (SHIMS)",
      rule: "decide",
    },
  ];
}
