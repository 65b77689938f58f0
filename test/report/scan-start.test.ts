// The directory's saved facts, as report names them: each file's path as path.join would make it,
// however the directory is spelt.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { listFacts, threadsFor } from "../../src/report/scan-start.js";

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

describe("threadsFor", () => {
  it("one thread for few files, the variable's number when it is one, else null", () => {
    expect(threadsFor(10, {})).toBe(1);
    expect(threadsFor(10, { KATA_INSTALL_REPORT_THREADS: " 3 " })).toBe(3);
    expect(threadsFor(10, { KATA_INSTALL_REPORT_THREADS: "0" })).toBeNull();
    expect(threadsFor(10, { KATA_INSTALL_REPORT_THREADS: "two" })).toBeNull();
  });
});
