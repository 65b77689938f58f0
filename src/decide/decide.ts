// The decide stage: Facts + rules + overrides + environment + flags → Decision. Pure: it reads
// nothing but its arguments, so the same inputs always give the same decision.

import { must } from "../at.js";
import { byText } from "../compare.js";
import { DEFAULT_PREFIX } from "../detect/context.js";
import { valueAt } from "../detect/fact-paths.js";
import type { Facts } from "../detect/facts.js";
import { containerdVersion } from "../detect/runtime/layouts.js";
import type { RuntimeKind } from "../detect/runtime/schema.js";
import { compareVersions } from "../version.js";
import { artifactSources, askedArtifacts, chooseArtifacts } from "./artifact-choice.js";
import type { ShimSpec } from "./catalog.js";
import type { Check, Chosen, Decision, ErofsSetup, NydusSetup } from "./decision.js";
import { applyIgnores, mappingChecks, snapshotterChecks } from "./engine-checks.js";
import type { EnvSettings } from "./env.js";
import { handlerSettings } from "./handler-settings.js";
import type { DecideInput } from "./input.js";
import { evaluate } from "./match.js";
import { nydusSetup } from "./nydus-setup.js";
import type { Overrides } from "./overrides.js";
import { type Decided, Ladder, overridesSource, ruleSource, type Source } from "./provenance.js";
import { releaseChecks } from "./release-checks.js";
import type { Rule, RuleSet } from "./rules.js";
import { chooseDefaultShim, chooseShims, groupReasons } from "./shim-choice.js";
import { customRuntimesFor, qemuWrapperValues, shimConfig } from "./shim-config.js";
import { erofsMergeChecks, erofsSetup } from "./snapshotter-setup.js";
import { type Takeover, takeoverOf, takeoverSnapshotterChecks } from "./takeover.js";
import { userDropInChecks } from "./user-drop-in.js";

export function decide(input: DecideInput): Decision {
  const { facts, catalog, rules, overrides, env, flags } = input;
  const warnings: Check[] = [];
  const contradiction = (message: string, rule: string) =>
    warnings.push({ id: "override-contradicts-facts", severity: "warning", status: "fail", message, rule });

  // 1. Rules, in dependency order.
  const { vars, matched } = matchRules(rules, facts);

  // 2. Checks: one per id, failed when any of its rules matched.
  const checks = rulesChecks(rules.rules, matched, facts);

  // 3. Where Kata goes, and whether it takes over kata-deploy's install there.
  const install = installPlace(env);
  const dir = install.suffix.value ? `${install.prefix.value}-${install.suffix.value}` : install.prefix.value;
  const takeover = takeoverOf(input, dir);

  // 4. The runtime, and the snapshotters set up in its configuration (a takeover's are then ours).
  const runtime = overriddenRuntime(facts, overrides, contradiction);
  const inPlace = containerdInPlace(matched);
  const { erofs, nydus, setUp } = setUpSnapshotters(input, runtime.value, inPlace.value, takeover, warnings);
  const nydusName = nydus?.name ?? null;

  // 5. Shims, and the checks on what they are mapped to and what the release has of them.
  const { shims, dropped } = chooseShims(input, matched, vars, contradiction, takeover, warnings);
  const selected = new Set(shims.map((s) => s.name));
  const defaultShim = defaultShimAndChecks(input, dropped, selected, setUp, nydusName, warnings);

  // 6. Configuration values, per selected shim (a host package chosen over a bundled one is one).
  const sources = artifactSources(input, matched, takeover, warnings);
  const config: Decision["config"] = {};
  for (const shim of shims) {
    const spec = catalog.shims.get(shim.name) as ShimSpec;
    config[shim.name] = shimConfig(input, spec, matched, sources, warnings, contradiction, takeover);
  }

  const debugged = decided(false, { kind: "default", name: "no debug handlers" }, env.debug);

  // 7. Artifacts: what the configurations name, and where each comes from; then what DEBUG or the
  // admin asks for besides.
  const { artifacts: named, droppedArtifacts } = chooseArtifacts(
    input,
    shims,
    sources,
    matched,
    contradiction,
    config,
    dir,
  );
  const artifacts = askedArtifacts(input, shims, named, debugged);

  const moved = env.suffix && !env.prefix ? install.suffix.source : install.prefix.source;
  for (const shim of shims)
    qemuWrapperValues(input, catalog.shims.get(shim.name) as ShimSpec, config[shim.name] ?? {}, dir, moved);

  // 8. The runtime's handlers: the shims', the custom runtimes built on them, the admin's drop-in.
  const handlers = handlerSettings(input, shims, warnings, nydusName);
  const customRuntimes = customRuntimesFor(
    input,
    selected,
    config,
    handlers,
    warnings,
    nydusName,
    takeover?.customRuntimes ?? [],
  );
  warnings.push(...erofsMergeChecks(input, erofs, handlers, customRuntimes));
  const userDropIn = input.userDropIn ?? null;
  warnings.push(...userDropInChecks(userDropIn, runtime.value, inPlace.value));

  return {
    arch: facts.arch,
    runtime,
    containerdInPlace: inPlace,
    checks: applyIgnores([...checks, ...warnings], overrides, flags),
    shims,
    dropped,
    defaultShim,
    artifacts,
    droppedArtifacts,
    config,
    handlers,
    customRuntimes,
    install: { ...install, debug: debugged },
    userDropIn:
      userDropIn === null
        ? null
        : { file: userDropIn.file, text: userDropIn.text, source: { kind: "env", name: userDropIn.name } },
    erofs,
    nydus,
    release: catalog.release ? { version: catalog.release.version, where: catalog.release.where } : null,
    vars,
    matched: matched.map((r) => r.name),
  };
}

/**
 * EXPERIMENTAL_SETUP_SNAPSHOTTER's snapshotters, as this node's runtime can carry them, and the
 * names of those set up; a takeover's snapshotters are checked against them (then ours).
 */
function setUpSnapshotters(
  input: DecideInput,
  runtime: RuntimeKind | null,
  inPlace: boolean,
  takeover: Takeover | null,
  warnings: Check[],
): { erofs: ErofsSetup | null; nydus: NydusSetup | null; setUp: string[] } {
  const erofs = erofsSetup(input, runtime, inPlace);
  warnings.push(...erofs.checks);
  const nydus = nydusSetup(input, runtime, inPlace);
  warnings.push(...nydus.checks);
  const setUp = [
    ...(erofs.setup === null ? [] : ["erofs"]),
    ...(nydus.setup === null ? [] : [nydus.setup.name]),
  ];
  if (takeover) warnings.push(...takeoverSnapshotterChecks(takeover, setUp, unusable(input.facts)));
  return { erofs: erofs.setup, nydus: nydus.setup, setUp };
}

/**
 * The default shim among those chosen, and the checks on them: none at all is an error (naming why
 * each was dropped); then the mappings' and the release's checks.
 */
function defaultShimAndChecks(
  input: DecideInput,
  dropped: Chosen[],
  selected: Set<string>,
  setUp: string[],
  nydusName: string | null,
  warnings: Check[],
): Decided<string> | null {
  if (selected.size === 0)
    warnings.push({
      id: "shims",
      severity: "error",
      status: "fail",
      message: `no shim can run on this node${dropped.length > 0 ? `: ${groupReasons(dropped)}` : ""}`,
      rule: "decide",
    });
  const defaultShim = chooseDefaultShim(input, selected, warnings);
  warnings.push(...mappingChecks(input));
  warnings.push(...snapshotterChecks(input, selected, setUp, nydusName));
  warnings.push(...releaseChecks(input, selected));
  return defaultShim;
}

/** The rules that match, in dependency order; a variable is false until a rule sets it. */
function matchRules(rules: RuleSet, facts: Facts): { vars: Record<string, unknown>; matched: Rule[] } {
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
  return { vars, matched };
}

/** A default, or kata-deploy's variable where it is set. */
function decided<T>(dflt: T, source: Source, fromEnv: { value: T; name: string } | undefined): Decided<T> {
  const ladder = new Ladder<T>();
  ladder.offer(dflt, source);
  if (fromEnv) ladder.offer(fromEnv.value, { kind: "env", name: fromEnv.name });
  return must(ladder.resolve(), "a ladder's default");
}

/** Where Kata goes: kata-deploy's prefix and no suffix, unless its variables say otherwise. */
function installPlace(env: EnvSettings): { prefix: Decided<string>; suffix: Decided<string> } {
  return {
    prefix: decided(DEFAULT_PREFIX, { kind: "default", name: "kata-deploy's prefix" }, env.prefix),
    suffix: decided("", { kind: "default", name: "no suffix" }, env.suffix),
  };
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
/**
 * Why no pod can pull through a snapshotter of kata-deploy's on this node (null: one may): a
 * containerd before 1.7 has no snapshotter per handler, so only its default one is used.
 */
function unusable(facts: Facts): (name: string) => string | null {
  const version = containerdVersion(facts.runtime);
  return (name) =>
    version !== null &&
    compareVersions(version, [1, 7]) < 0 &&
    !(facts.runtime.defaultSnapshotter ?? "").startsWith(name)
      ? `containerd ${facts.runtime.version} has no snapshotter per runtime handler (1.7 and later have) and ${name} is not its default snapshotter, so no pod pulls through it here`
      : null;
}

function containerdInPlace(matched: Rule[]): Decided<boolean> {
  const ladder = new Ladder<boolean>();
  ladder.offer(false, { kind: "default", name: "a drop-in containerd imports" });
  for (const rule of matched) if (rule.vars[IN_PLACE_VAR] === true) ladder.offer(true, ruleSource(rule));
  return ladder.resolve() as Decided<boolean>;
}
export const IN_PLACE_VAR = "runtime-config-in-place";
