// A report over saved facts reads documents of earlier kata-installs as `--facts FILE` does (a
// source they predate taken as unknown), every node of a kind alike, and names a newer one.
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SCHEMA_VERSION } from "../../src/detect/facts.js";
import { prepare } from "../../src/inputs/prepare.js";
import { fromFactsDir } from "../../src/report/sources.js";
import { editFacts, factsDir } from "../helpers/cluster.js";

const made: string[] = [];
afterAll(() => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});

describe("saved facts of several kata-installs", async () => {
  const dir = await factsDir(3);
  made.push(dir);
  const edit = (name: string, change: (document: Record<string, unknown>) => void) =>
    editFacts(dir, name, change);
  // n0000 is the first of its kind (validated whole); n0001 is summarised on its fingerprint alone.
  edit("n0001", (document) => {
    delete document.kata;
    delete document.iommu;
  });
  edit("n0002", (document) => {
    document.schemaVersion = SCHEMA_VERSION + 1;
  });
  const loaded = await fromFactsDir(dir, await prepare({ hostRoot: "/", env: {}, overrides: null }));

  it("an earlier one's node is reported like the others of its kind", () => {
    expect(loaded.nodes.map((n) => n.name)).toEqual(["n0000", "n0001"]);
    expect(loaded.decisions).toBe(1);
    const [first, earlier] = loaded.nodes;
    expect(earlier?.summary).toEqual(first?.summary);
    expect(earlier?.summary.kata).toBeNull();
  });

  it("a newer one's is left out, saying why", () => {
    expect(loaded.skipped).toEqual([
      {
        source: path.join(dir, "n0002.json"),
        reason: `made by a newer kata-install (schema ${SCHEMA_VERSION + 1}); this one reads up to ${SCHEMA_VERSION}`,
      },
    ]);
  });
});
