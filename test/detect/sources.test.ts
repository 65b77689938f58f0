// The list of sources is the one place a source is named: the Facts document is made of it, in its
// order, and each source brings what the document needs of it (its value when unknown, whether it
// starts processes). A source added there is added everywhere.
import { afterAll, afterEach, describe, expect, expectTypeOf, it, vi } from "vitest";
import * as z from "zod/mini";
import { detectFacts, Facts, SCHEMA_VERSION } from "../../src/detect/facts.js";
import { type KataFacts, kata } from "../../src/detect/kata.js";
import { kvm } from "../../src/detect/kvm.js";
import { defineSource } from "../../src/detect/source.js";
import { SOURCES } from "../../src/detect/sources.js";
import { intelContainerd16 } from "../helpers/nodes.js";
import { buildHost, removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);
afterEach(() => {
  vi.restoreAllMocks();
});

const keys = SOURCES.map((source) => source.key);

describe("the list of sources", () => {
  it("is the Facts document's keys, in its order, between schemaVersion and problems", () => {
    expect(Object.keys(Facts.shape)).toEqual(["schemaVersion", ...keys, "problems"]);
    expect(keys).toEqual([
      "arch",
      "os",
      "kernel",
      "cpu",
      "kvm",
      "security",
      "hypervisors",
      "runtime",
      "pci",
      "iommu",
      "storage",
      "kata",
      "local",
    ]);
  });

  it("names each key once, and never a key the document keeps for itself", () => {
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).not.toContain("schemaVersion");
    expect(keys).not.toContain("problems");
  });

  it.each(SOURCES.map((source) => [source.key, source] as const))(
    "%s: its unknown value is one its own schema allows",
    (_key, source) => {
      const checked = source.schema.safeParse(source.unknown);
      expect(checked.success, JSON.stringify(checked.error?.issues)).toBe(true);
    },
  );

  it("a document of every source's unknown value is a valid Facts document", () => {
    const document = {
      schemaVersion: SCHEMA_VERSION,
      ...Object.fromEntries(SOURCES.map((source) => [source.key, source.unknown])),
      problems: [],
    };
    expect(Facts.safeParse(document).success).toBe(true);
  });

  it("says which sources start processes: those go first", () => {
    expect(SOURCES.filter((source) => source.startsProcesses).map((source) => source.key)).toEqual([
      "hypervisors",
      "runtime",
      "kata",
      "local",
    ]);
    for (const source of SOURCES) expect(typeof source.startsProcesses).toBe("boolean");
  });
});

// Checked by tsc (test files are part of the project), not at run time.
describe("the types derived from the list", () => {
  it("keep each source's value precisely typed in Facts", () => {
    expectTypeOf<Facts["kvm"]["device"]>().toEqualTypeOf<boolean>();
    expectTypeOf<Facts["arch"]>().toEqualTypeOf<string | null>();
    expectTypeOf<Facts["kata"]>().toEqualTypeOf<KataFacts>();
    expectTypeOf<Facts["schemaVersion"]>().toEqualTypeOf<1>();
    expectTypeOf<keyof Facts>().toEqualTypeOf<"schemaVersion" | (typeof keys)[number] | "problems">();
  });

  it("refuse a source without its unknown value, or with one its schema does not allow", () => {
    const half = {
      key: "gpu",
      schema: z.nullable(z.string()),
      startsProcesses: false,
      detect: async () => null,
    };
    // @ts-expect-error: unknown is missing
    defineSource(half);
    // @ts-expect-error: a number is not a string or null
    defineSource({ ...half, unknown: 0 });
    // @ts-expect-error: startsProcesses is missing
    defineSource({ key: "gpu", schema: z.nullable(z.string()), unknown: null, detect: async () => null });
    expect(defineSource({ ...half, unknown: null }).unknown).toBeNull();
    expect(kata.unknown.installed).toBe(false);
  });
});

describe("a detector that throws", () => {
  it("leaves its source unknown, with the failure recorded, and the rest of the node read", async () => {
    vi.spyOn(kvm, "detect").mockRejectedValue(new Error("boom"));
    const facts = await detectFacts(buildHost(intelContainerd16()).host);
    expect(facts.kvm).toEqual(kvm.unknown);
    const failures = facts.problems.filter((p) => p.reason.startsWith("detector failed:"));
    expect(failures).toHaveLength(1);
    expect(failures[0]?.source).toBe("kvm");
    expect(failures[0]?.reason).toMatch(/^detector failed: Error: boom/);
    expect(facts.cpu.virtualization).toBe("vmx");
    expect(facts.runtime.kind).toBe("containerd");
  });
});
