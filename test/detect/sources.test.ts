// The list of sources is the one place a source is named: the Facts document is made of it, in its
// order, and each source brings what the document needs of it (its value when unknown, whether it
// starts processes). A source added there is added everywhere.
import fs from "node:fs";
import path from "node:path";
import { afterAll, afterEach, describe, expect, expectTypeOf, it, vi } from "vitest";
import * as z from "zod/mini";
import { DetectContext } from "../../src/detect/context.js";
import { detectFacts, Facts, SCHEMA_VERSION } from "../../src/detect/facts.js";
import { type KataFacts, kata } from "../../src/detect/kata.js";
import { kvm } from "../../src/detect/kvm.js";
import { defineSource, type FactSource } from "../../src/detect/source.js";
import { SOURCES } from "../../src/detect/sources.js";
import { gpuDistroQemuK3s, intelContainerd16 } from "../helpers/nodes.js";
import { buildHost, removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);
afterEach(() => {
  vi.restoreAllMocks();
});

const keys = SOURCES.map((source) => source.key);

/** A value of FactSource's shape (defineSource's): its key, schema, unknown value and detect. */
function isSource(value: unknown): value is FactSource {
  if (value === null || typeof value !== "object") return false;
  const v = value as Record<string, unknown>;
  return typeof v.key === "string" && typeof v.detect === "function" && "schema" in v && "unknown" in v;
}

describe("the list of sources", () => {
  it("holds every source a module of src/detect defines: one written and not listed is never read", async () => {
    const dir = path.resolve("src/detect");
    const defined: string[] = [];
    for (const file of fs.readdirSync(dir, { recursive: true }).map(String)) {
      if (!file.endsWith(".ts")) continue;
      const exports = (await import(path.join(dir, file))) as Record<string, unknown>;
      for (const value of Object.values(exports)) if (isSource(value)) defined.push(value.key);
    }
    expect([...new Set(defined)].sort()).toEqual([...keys].sort());
  });

  it("is the Facts document's keys, in its order, between schemaVersion and problems", () => {
    expect(Object.keys(Facts.shape)).toEqual(["schemaVersion", ...keys, "problems"]);
  });

  it("keeps the keys the Facts contract names, in their order: a new source may join, none may go", () => {
    // The contract's stable keys (the design's Facts section), written out because they are a
    // promise to saved documents and other tools, not a copy of the list: renaming or removing
    // one takes a schema version bump.
    const contract = [
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
    ];
    expect(keys.filter((key) => contract.includes(key))).toEqual(contract);
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

  it.each(SOURCES.filter((source) => !source.startsProcesses).map((source) => [source.key, source] as const))(
    "%s says it starts no processes, and starts none (it would hold the others up otherwise)",
    async (_key, source) => {
      // A node with binaries to ask (a distro qemu, k3s), so a source that runs one would here.
      const { host } = buildHost(gpuDistroQemuK3s());
      const run = vi.spyOn(host, "run");
      await source.detect(new DetectContext(host));
      expect(run).not.toHaveBeenCalled();
    },
  );

  it("starts the sources that start processes first, before any other is asked", async () => {
    const asked: string[] = [];
    const sources: readonly FactSource[] = SOURCES; // each spied on alike, whatever its value's type
    for (const source of sources) {
      const detect = source.detect.bind(source);
      vi.spyOn(source, "detect").mockImplementation(async (ctx) => {
        asked.push(source.key);
        return detect(ctx);
      });
    }
    await detectFacts(buildHost(intelContainerd16()).host);
    const first = SOURCES.filter((source) => source.startsProcesses).map((source) => source.key);
    expect(first.length).toBeGreaterThan(0);
    expect(asked.slice(0, first.length).sort()).toEqual([...first].sort());
    expect(asked.sort()).toEqual([...keys].sort());
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
