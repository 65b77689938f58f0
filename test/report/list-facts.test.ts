// The directory's saved facts, as report names them: each file's path as path.join would make it,
// however the directory is spelt.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { listFacts } from "../../src/report/scan.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-list-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
for (const f of ["b.json", "a.json", "..json", "notes.txt"]) fs.writeFileSync(path.join(dir, f), "{}");

describe("listFacts", () => {
  it("names each .json file's node and its path, in the order of node names", () => {
    expect(listFacts(dir)).toEqual([
      [".", path.join(dir, "..json")],
      ["a", path.join(dir, "a.json")],
      ["b", path.join(dir, "b.json")],
    ]);
  });

  it.each([`${dir}/`, `${dir}//`, `${dir}/../${path.basename(dir)}`, path.relative(process.cwd(), dir)])(
    "joins as path.join does, for %s",
    (spelt) => {
      expect(listFacts(spelt).map(([, file]) => file)).toEqual(
        ["..json", "a.json", "b.json"].map((f) => path.join(spelt, f)),
      );
    },
  );
});
