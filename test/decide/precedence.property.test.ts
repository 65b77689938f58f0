// Property: whatever the node and whatever the rules decided, a value in the overrides file wins
// for every key any rule sets (and for keys no rule sets), for every shim that has the key; and a
// flag wins over the overrides file for the shim set.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KeyType } from "../../src/decide/catalog.js";
import type { Facts } from "../../src/detect/facts.js";
import { decideFacts, factsOf, releaseFor, rules, catalog as rulesCatalog } from "../helpers/decide.js";
import {
  amdSnpCrio,
  gpuDistroQemuK3s,
  intelContainerd16,
  nestedVmWithoutVmx,
  noLoadableModules,
} from "../helpers/nodes.js";
import { removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);

/** The catalogue as Kata 4.1.0 has it: its shims' keys, types and listed values. */
const catalog = rulesCatalog.withRelease(releaseFor("x86_64"));

let nodes: Facts[] = [];
beforeAll(async () => {
  nodes = await Promise.all(
    [amdSnpCrio(), gpuDistroQemuK3s(), intelContainerd16(), nestedVmWithoutVmx(), noLoadableModules()].map(
      (spec) => factsOf(spec),
    ),
  );
});

/** Every (shim, key) that some rule sets, plus a few keys no rule touches. */
const ruled: Array<[string, string]> = rules.rules.flatMap((rule) =>
  Object.entries(rule.config).flatMap(([target, values]) =>
    Object.keys(values).flatMap((key) =>
      target === "all"
        ? catalog.shimNames().map((s) => [s, key] as [string, string])
        : [[target, key] as [string, string]],
    ),
  ),
);
const targets = [
  ...ruled,
  ["qemu", "hypervisor.qemu.default_memory"],
  ["clh", "runtime.enable_debug"],
  ["fc", "hypervisor.firecracker.default_vcpus"],
].filter(([shim, key]) => catalog.keyType(shim as string, key as string) !== undefined) as Array<
  [string, string]
>;

const arbitraryFor = (type: KeyType): fc.Arbitrary<unknown> => {
  switch (type) {
    case "string":
      return fc.string({ maxLength: 20 });
    case "bool":
      return fc.boolean();
    case "int":
      return fc.integer({ min: -1000, max: 100000 });
    case "float":
      // -0 reads back as 0 from TOML: no difference a configuration can express.
      return fc
        .double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 })
        .map((v) => (v === 0 ? 0 : v));
    case "string[]":
      return fc.array(fc.string({ maxLength: 10 }), { maxLength: 4 });
    case "other":
      return fc.constant(0);
  }
};

/** Values Kata takes for `key`: its documented ones, or any of its type (numbers at or above the floor). */
function valuesFor(shim: string, key: string): fc.Arbitrary<unknown> {
  const name = key.slice(key.lastIndexOf(".") + 1);
  const listed = catalog.keyInfo(shim, key)?.domain;
  if (listed !== undefined) return fc.constantFrom(...listed);
  const oneOf = catalog.valueLimits.oneOf[name];
  if (oneOf !== undefined) return fc.constantFrom(...oneOf);
  const least = catalog.valueLimits.atLeast[name];
  const type = catalog.keyType(shim, key) as KeyType;
  if (least !== undefined && type === "int") return fc.integer({ min: least, max: 1 << 20 });
  return arbitraryFor(type).filter((v) => catalog.valueProblem(shim, key, v) === null);
}

/** A TOML literal for the value (JSON's syntax is TOML's for these types, floats aside). */
const toml = (value: unknown): string =>
  typeof value === "number" && !Number.isInteger(value)
    ? value.toExponential()
    : Array.isArray(value)
      ? `[${value.map(toml).join(", ")}]`
      : JSON.stringify(value);

describe("an override beats every rule", () => {
  it("for any ruled key, any value Kata takes, any node", () => {
    expect(targets.length).toBeGreaterThan(8);
    const arbitrary = fc
      .record({ node: fc.nat({ max: 4 }), target: fc.constantFrom(...targets), perShim: fc.boolean() })
      .chain(({ node, target, perShim }) =>
        valuesFor(target[0], target[1])
          // Any value Kata takes for that key (rules/config-values.toml): the others are refused.
          .map((value) => ({ node, target, perShim, value })),
      );
    fc.assert(
      fc.property(arbitrary, ({ node, target: [shim, key], perShim, value }) => {
        const table = perShim ? shim : "all";
        const overrides = `shims = ["${shim}"]\n[config.${JSON.stringify(table)}]\n${JSON.stringify(key)} = ${toml(value)}\n`;
        const decision = decideFacts(nodes[node] as Facts, { overrides });
        const decided = decision.config[shim]?.[key];
        expect(decided?.source.kind).toBe("overrides");
        expect(decided?.value).toEqual(value);
        for (const beaten of decided?.beaten ?? []) expect(beaten.source.kind).not.toBe("overrides");
      }),
      { numRuns: 200 },
    );
  });

  it("flags beat the overrides file, which beats the environment, for the shim set", () => {
    const names = catalog.shimNames();
    const subset = fc.uniqueArray(fc.constantFrom(...names), { minLength: 1, maxLength: 4 });
    fc.assert(
      fc.property(
        fc.nat({ max: 4 }),
        subset,
        subset,
        fc.option(subset, { nil: undefined }),
        (node, fromEnv, fromFile, fromFlag) => {
          const decision = decideFacts(nodes[node] as Facts, {
            env: { SHIMS: fromEnv.join(" ") },
            overrides: `shims = [${fromFile.map((s) => JSON.stringify(s)).join(", ")}]\n`,
            flags: fromFlag ? { shims: fromFlag } : {},
          });
          expect(decision.shims.map((s) => s.name)).toEqual([...(fromFlag ?? fromFile)].sort());
        },
      ),
      { numRuns: 100 },
    );
  });
});
