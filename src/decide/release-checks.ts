// The decision held against the release being installed: every shim an input names is one the
// release ships (or the rules know, when no release has been read); a shim of the release that no
// rule vets is installed only as asked, and said; so is a release older than the node's; and each
// decided key and value is checked against the shim's configuration in the release
// (configValueCheck, called for every offer).
import { closest } from "../closest.js";
import { byText } from "../compare.js";
import { shown } from "../json-text.js";
import type { KeyInfo } from "../release/config-file.js";
import { baseName, type Release } from "../release/release.js";
import { compareVersions, versionParts } from "../version.js";
import { fitsType } from "./catalog.js";
import type { Check } from "./decision.js";
import type { DecideInput } from "./input.js";
import { describeSource, type Source } from "./provenance.js";
import { article } from "./rules.js";

/** Check ids raised here (--ignore-preflight-errors takes them). */
export const RELEASE_CHECKS = [
  "unknown-shim",
  "unvetted-shim",
  "config-key",
  "config-value",
  "release",
  "release-downgrade",
] as const;

/** Every shim name an input names, with where: the pins, the default, per-shim settings. */
function namedShims(input: DecideInput): Map<string, string[]> {
  const { flags, overrides, env } = input;
  const out = new Map<string, string[]>();
  const add = (name: string, where: string) => out.set(name, [...(out.get(name) ?? []), where]);
  // The overrides file's places with their lines, as its other errors have them.
  const file = (path: Array<string | number>) => {
    const line = overrides.lineOf(path);
    return `${overrides.file}${line === undefined ? "" : `:${line}`}`;
  };
  for (const name of flags.shims ?? []) add(name, "--shims");
  if (flags.defaultShim) add(flags.defaultShim, "--default-shim");
  for (const name of overrides.shims ?? []) add(name, `${file(["shims"])}: shims`);
  if (overrides.defaultShim) add(overrides.defaultShim, `${file(["default_shim"])}: default_shim`);
  for (const target of Object.keys(overrides.config))
    if (target !== "all") add(target, `${file(["config", target])}: [config.${target}]`);
  for (const [handler, spec] of Object.entries(overrides.customRuntimes))
    add(spec.base, `${file(["custom_runtimes", handler, "base"])}: custom_runtimes.${handler}.base`);
  for (const shim of Object.keys(overrides.handlers))
    add(shim, `${file(["handlers", shim])}: [handlers.${shim}]`);
  if (env.shims) for (const name of env.shims.value) add(name, env.shims.name);
  if (env.defaultShim) add(env.defaultShim.value, env.defaultShim.name);
  for (const map of [
    env.allowedAnnotations,
    env.agentHttpsProxy,
    env.agentNoProxy,
    env.snapshotters,
    env.pullTypes,
    env.forceGuestPull,
  ])
    for (const [name, from] of Object.entries(map)) if (name !== "all") add(name, from.name);
  return out;
}

/** A hint that starts with the shim a mistyped name is near, when there is one. */
function withSuggestion(hint: string, near: string | null): string {
  return near === null ? hint : `did you mean ${near}? else ${hint}`;
}

export function releaseChecks(input: DecideInput, selected: ReadonlySet<string>): Check[] {
  const { catalog } = input;
  const release = catalog.release;
  const checks: Check[] = [];
  for (const [name, where] of [...namedShims(input)].sort(([a], [b]) => byText(a, b))) {
    if (catalog.unserved.has(name)) continue; // kata-deploy's other names: dropped with their reason
    const places = [...new Set(where)].join(", ");
    if (release !== null && !release.shims.has(name)) {
      const known = catalog.shims.has(name);
      checks.push({
        id: "unknown-shim",
        severity: "error",
        status: "fail",
        message: `${places} name${where.length === 1 ? "s" : ""} the shim ${name}, but Kata ${release.version} ships no configuration for it${known ? "" : ", and no rule of kata-install's knows it"} (it ships: ${[...release.shims.keys()].sort(byText).join(", ")})`,
        hint: withSuggestion(
          "name a shim this release ships, or install a release that has it",
          closest(name, release.shims.keys()),
        ),
        rule: "decide",
      });
    } else if (release === null && !catalog.shims.has(name)) {
      checks.push({
        id: "unknown-shim",
        severity: "warning",
        status: "fail",
        message: `${places} name${where.length === 1 ? "s" : ""} the shim ${name}, which no rule of kata-install's knows; whether Kata ships it is known once the release is read`,
        hint: withSuggestion(
          "give the release with --artifacts (ARTIFACTS in the DaemonSet) to check it",
          closest(name, catalog.shims.keys()),
        ),
        rule: "decide",
      });
    }
  }
  // Without the release, the overrides file's values were checked for their shape only: said, so
  // that a value Kata does not take is not taken for one checked.
  const unchecked = Object.entries(input.overrides.config).flatMap(([target, values]) =>
    Object.keys(values).map((key) => `${target}:${key}`),
  );
  if (release === null && unchecked.length > 0)
    checks.push({
      id: "config-key",
      severity: "info",
      status: "fail",
      message: `the overrides file's ${unchecked.length} configuration value(s) (${unchecked.join(", ")}) are not checked against Kata's configuration: there is no release to check them against`,
      hint: "give the release with --artifacts (ARTIFACTS in the DaemonSet) to check them",
      rule: "decide",
    });
  for (const name of [...selected].sort(byText)) {
    const spec = catalog.shims.get(name);
    if (!spec?.unvetted || release === null) continue;
    checks.push({
      id: "unvetted-shim",
      severity: "warning",
      status: "fail",
      message: `${name} is installed as asked: Kata ${release.version} ships it (${release.shims.get(name)?.file}), but no rule of kata-install's knows what it needs of a node, so nothing here checked that it can run`,
      hint: "check its hypervisor and TEE on this node yourself, or describe it in src/shims/table.ts",
      rule: "decide",
    });
  }
  const older = olderRelease(input);
  if (older !== null) checks.push(older);
  return checks;
}

/**
 * A release older than the one on the node (an image tag rolled back, on purpose or not): said, not
 * refused, since going back to a release that worked is what a rollback is.
 */
function olderRelease(input: DecideInput): Check | null {
  const release = input.catalog.release;
  const kata = input.facts.kata;
  const onNode = kata.installed ? kata.version : null;
  const from = onNode === null ? null : versionParts(onNode);
  const to = release === null ? null : versionParts(release.version);
  if (release === null || from === null || to === null || compareVersions(to, from) >= 0) return null;
  return {
    id: "release-downgrade",
    severity: "warning",
    status: "fail",
    message: `this installs Kata ${release.version} (${release.where}) over the node's Kata ${onNode}: an older release`,
    hint: "a rollback on purpose needs nothing more; else check which image (its tag) the DaemonSet runs",
    rule: "decide",
  };
}

/**
 * Null when `key` = `value` may be decided for `shim` (or cannot be told yet: no release); else a
 * check naming key, shim and release. A rule's value the release does not take is a warning and is
 * not set (kata-install's own rule must not stop a newer release); the admin's (overrides file,
 * environment, flags) is an error, kept as asked should the admin ignore it.
 */
export function configValueCheck(
  input: DecideInput,
  shim: string,
  key: string,
  value: unknown,
  source: Source,
): { check: Check; keep: boolean } | null {
  const { catalog } = input;
  const release = catalog.release;
  if (release === null || !release.shims.has(shim)) return null;
  // A value derived from another (the host's binary, from the rule or override that chose it) is
  // the admin's when that one is.
  let origin = source;
  while (origin.kind === "derived") origin = origin.from;
  const admin = !(origin.kind === "rule" || origin.kind === "default");
  const fail = (id: "config-key" | "config-value", message: string, hint: string, keep = admin) => ({
    check: {
      id,
      severity: admin ? ("error" as const) : ("warning" as const),
      status: "fail" as const,
      message: keep ? message : `${message}; it is not set`,
      hint,
      rule: origin.kind === "rule" ? origin.name : "decide",
    },
    keep,
  });
  const base = baseName(release, shim);
  // A key this shim's file lacks that another configuration of the same runtime has is one the
  // runtime reads all the same (its structures are one for every shim: Go's reads
  // experimental_force_guest_pull for qemu too, which kata-deploy's EXPERIMENTAL_FORCE_GUEST_PULL sets).
  const info = catalog.keyInfo(shim, key) ?? runtimesKey(release, shim, key);
  if (info === undefined) {
    const near = closest(key, release.shims.get(shim)?.config.keys.keys() ?? []);
    return fail(
      "config-key",
      `${describeSource(source)} sets ${key} for ${shim}, but ${base} has no such key (renamed or misspelt?)`,
      withSuggestion(`see ${base} for the keys it has (kata-install explain ${shim} lists them)`, near),
    );
  }
  // Never written, even when the check is ignored: Kata fails to load a file whose value is of
  // another type than its own, and with it every pod of the handler.
  if (!fitsType(info.type, value))
    return fail(
      "config-key",
      `${describeSource(source)} sets ${key} = ${shown(value)} for ${shim}, but ${base} has it as ${article(info.type)} (Kata could not load the file with it)`,
      `give ${article(info.type)}`,
      false,
    );
  const problem = catalog.valueProblem(shim, key, value);
  if (problem !== null)
    return fail(
      "config-value",
      `${describeSource(source)} sets ${key} for ${shim}: ${problem}`,
      "choose a value this shim's configuration takes",
    );
  return null;
}

/**
 * What the shim's runtime (Go or Rust) knows of `key` from the release's other configurations of
 * that runtime: the same key, under this shim's hypervisor section where it is one's.
 */
function runtimesKey(release: Release, shim: string, key: string): KeyInfo | undefined {
  const own = release.shims.get(shim);
  if (own === undefined) return undefined;
  const [table, section, ...rest] = key.split(".");
  // Another hypervisor's section is no key of this shim's: Kata refuses a second hypervisor.
  if (table === "hypervisor" && section !== own.hypervisor) return undefined;
  for (const other of release.shims.values()) {
    if (other.runtime !== own.runtime || other.shim === shim) continue;
    const theirs =
      table === "hypervisor" && section === own.hypervisor && other.hypervisor !== null
        ? ["hypervisor", other.hypervisor, ...rest].join(".")
        : key;
    const info = other.config.keys.get(theirs);
    if (info !== undefined) return info;
  }
  return undefined;
}
