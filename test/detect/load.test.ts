// Saved facts stay readable: a document from an earlier kata-install loads (a source it predates
// taken as unknown, with a problem saying so), one from a newer kata-install is refused, and a key
// no fact has is still named.
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { SCHEMA_VERSION } from "../../src/detect/facts.js";
import { iommu } from "../../src/detect/iommu.js";
import { parseFacts } from "../../src/detect/load.js";
import { SOURCES } from "../../src/detect/sources.js";
import { storage } from "../../src/detect/storage.js";
import { migrate } from "../../src/detect/upgrade.js";

const SAVED = fs.readFileSync("test/fixtures/facts/schema-1.json", "utf8");
const saved = () => JSON.parse(SAVED) as Record<string, unknown>;
/** The problem of a source added after the fixture was saved: taken as unknown (upgrade.ts). */
const predates = (key: string) => ({
  source: key,
  reason: `saved by an earlier kata-install, before it read ${key}: taken as unknown`,
});
/** The sources added since the fixture was saved. */
const ADDED = SOURCES.map((source) => source.key as string).filter((key) => !(key in saved()));
/** Problems come sorted by source (problems.ts). */
const sorted = (keys: string[]) => [...new Set(keys)].sort();
const load = (document: unknown) => parseFacts("f.json", JSON.stringify(document));
const detailsOf = (action: () => unknown): string[] => {
  try {
    action();
  } catch (error) {
    return (error as { details?: string[] }).details ?? [String(error)];
  }
  throw new Error("expected an error");
};

describe("a document saved by an earlier kata-install", () => {
  it("loads as it was saved", () => {
    const facts = load(saved());
    expect(facts.kvm.device).toBe(true);
    expect(facts.runtime.kind).toBe("containerd");
    expect(facts.runtime.configProblem).toBeUndefined();
    expect(facts.kata.deploy).toBeUndefined();
    expect(facts.problems).toEqual(sorted(ADDED).map(predates));
  });

  it("without iommu and storage (saved before they were read): both unknown, each with a problem", () => {
    const document = saved();
    delete document.iommu;
    delete document.storage;
    const facts = load(document);
    expect(facts.iommu).toEqual(iommu.unknown);
    expect(facts.storage).toEqual(storage.unknown);
    expect(facts.problems).toEqual(sorted(["iommu", "storage", ...ADDED]).map(predates));
    // The sources it has are kept as saved.
    expect(facts.cpu).toEqual(saved().cpu);
  });

  it("with only its version and problems: every source unknown", () => {
    const facts = load({ schemaVersion: SCHEMA_VERSION, problems: [] });
    for (const source of SOURCES) expect(facts[source.key]).toEqual(source.unknown);
    expect(facts.problems.map((p) => p.source).sort()).toEqual(SOURCES.map((source) => source.key).sort());
  });

  it("keeps the problems it was saved with, in the order a detection gives them", () => {
    const document = saved();
    delete document.iommu;
    document.problems = [{ source: "kernel", path: "/proc/modules", reason: "does not exist" }];
    expect(load(document).problems.map((p) => p.source)).toEqual(sorted(["iommu", "kernel", ...ADDED]));
  });
});

describe("a document this kata-install does not read", () => {
  it("from a newer kata-install is refused, saying so, and nothing else", () => {
    const document = { ...saved(), schemaVersion: SCHEMA_VERSION + 1, gpu: { count: 2 } };
    expect(detailsOf(() => load(document))).toEqual([
      `made by a newer kata-install (schema ${SCHEMA_VERSION + 1}); this one reads up to ${SCHEMA_VERSION}`,
    ]);
  });

  it("a key no fact has is still named, a source missing or not", () => {
    const document = saved();
    delete document.iommu;
    (document.kvm as Record<string, unknown>).devcie = true;
    document.gpu = {};
    expect(detailsOf(() => load(document))).toEqual(["kvm.devcie: no such fact", "gpu: no such fact"]);
  });

  it("a source present but wrong is still wrong: a missing field inside one is not filled", () => {
    const document = saved();
    delete (document.cpu as Record<string, unknown>).flags;
    expect(detailsOf(() => load(document))).toEqual([
      "cpu.flags: Invalid input: expected array, received undefined",
    ]);
  });

  it("of a version older than the first is not taken for one (its sources are not filled in)", () => {
    const details = detailsOf(() => load({ schemaVersion: 0, problems: [] }));
    expect(details[0]).toBe("schemaVersion: Invalid input: expected 1");
    expect(details).toContain("iommu: Invalid input: expected object, received undefined");
  });
});

describe("migrations", () => {
  // A fake history: schema 1 called /dev/kvm "kvmDevice" at the top level, 2 moved it under kvm,
  // 3 renamed kvm.dev to kvm.device.
  const migrations = {
    1: ({ kvmDevice, ...rest }: Record<string, unknown>) => ({ ...rest, kvm: { dev: kvmDevice } }),
    2: (document: Record<string, unknown>) => {
      const { dev, ...kvm } = document.kvm as Record<string, unknown>;
      return { ...document, kvm: { ...kvm, device: dev } };
    },
  };

  it("bring a document up one version at a time, in order", () => {
    expect(migrate({ schemaVersion: 1, kvmDevice: true }, migrations, 3)).toEqual({
      schemaVersion: 3,
      kvm: { device: true },
    });
    expect(migrate({ schemaVersion: 2, kvm: { dev: false } }, migrations, 3)).toEqual({
      schemaVersion: 3,
      kvm: { device: false },
    });
  });

  it("leave a document of the current version alone", () => {
    const document = { schemaVersion: 3, kvm: { device: true } };
    expect(migrate(document, migrations, 3)).toBe(document);
  });

  it("stop where there is no step, for validation to name the version", () => {
    expect(migrate({ schemaVersion: 0, x: 1 }, migrations, 3)).toEqual({ schemaVersion: 0, x: 1 });
  });

  it("refuse a newer document", () => {
    expect(() => migrate({ schemaVersion: 4 }, migrations, 3)).toThrow(
      "made by a newer kata-install (schema 4); this one reads up to 3",
    );
  });
});
