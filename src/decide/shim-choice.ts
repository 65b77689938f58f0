// Which shims this node gets (the capability table, the rules, then what the admin pins), and the
// default one.
import { byText } from "../compare.js";
import type { ShimSpec } from "./catalog.js";
import type { Check, Chosen } from "./decision.js";
import type { DecideInput } from "./input.js";
import {
  CAPABILITY_TABLE,
  type Decided,
  describeSource,
  Ladder,
  overridesSource,
  ruleSource,
  type Source,
} from "./provenance.js";
import type { Rule } from "./rules.js";
import { keepServed, servedNotPinned, type Takeover } from "./takeover.js";

export function chooseShims(
  input: DecideInput,
  matched: Rule[],
  vars: Record<string, unknown>,
  contradiction: (m: string, r: string) => void,
  takeover: Takeover | null = null,
  warnings: Check[] = [],
): { shims: Chosen[]; dropped: Chosen[] } {
  const { facts, catalog, rules, overrides, env, flags } = input;
  const arch = facts.arch ?? "";
  // What the rules and the table say, before any pin.
  const ruled = new Map<string, Chosen>();
  const ruleDropped = new Map<string, Chosen>();
  const release = catalog.release;
  const notShipped = (name: string): Chosen => ({
    name,
    reason: `Kata ${release?.version} ships no configuration for it`,
    source: { kind: "default", name: `the release (${release?.where})` },
  });
  for (const spec of catalog.shims.values()) {
    if (spec.arches.includes(arch) && !spec.opt_in) {
      // A shim is a configuration file of the release: one this release lacks is not a candidate.
      if (catalog.shipped(spec.name) === false) {
        ruleDropped.set(spec.name, notShipped(spec.name));
        continue;
      }
      ruled.set(spec.name, {
        name: spec.name,
        reason: `${spec.description}; runs on ${arch}`,
        source: CAPABILITY_TABLE,
      });
    }
  }
  for (const rule of matched) {
    for (const add of rule.addShims)
      if (catalog.shipped(add.name) !== false)
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
    if (takeover) keepServed(input, takeover, ruled, ruleDropped, warnings);
    return { shims: sortByName([...ruled.values()]), dropped: sortByName([...ruleDropped.values()]) };
  }
  if (takeover && !takeover.done)
    warnings.push(...servedNotPinned(takeover, pin.list, describeSource(pin.source)));
  const shims: Chosen[] = [];
  const unserved: Chosen[] = [];
  for (const name of [...new Set(pin.list)]) {
    const spec = catalog.shims.get(name);
    if (spec === undefined || catalog.shipped(name) === false) {
      // One of kata-deploy's names that kata-install does not serve, or a shim the release does
      // not ship (an error of its own, see release-checks.ts): dropped, with why.
      unserved.push(
        catalog.unserved.has(name)
          ? {
              name,
              reason: `kata-install does not serve it: ${catalog.unserved.get(name)}`,
              source: CAPABILITY_TABLE,
            }
          : release !== null
            ? notShipped(name)
            : { name, reason: "no rule knows it, and no release was read to find it in", source: pin.source },
      );
      continue;
    }
    // What the release ships and no rule describes runs where the release was built for.
    const against = spec.unvetted
      ? undefined
      : (ruleDropped.get(name) ??
        (spec.arches.includes(arch)
          ? unmet(spec)
          : {
              name,
              reason: `it is not built for ${arch || "this architecture"}`,
              source: CAPABILITY_TABLE,
            }));
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

export function chooseDefaultShim(
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

/** "clh, fc: needs kvm …; qemu-tdx: needs tdx …": one line per distinct reason. */
export function groupReasons(dropped: Chosen[]): string {
  const byReason = new Map<string, string[]>();
  for (const d of dropped) byReason.set(d.reason, [...(byReason.get(d.reason) ?? []), d.name]);
  return [...byReason].map(([reason, names]) => `${names.join(", ")}: ${reason}`).join("; ");
}

export function sortByName<T extends { name: string }>(list: T[]): T[] {
  return [...list].sort((a, b) => byText(a.name, b.name));
}
