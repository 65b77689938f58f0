// The layering check `npm test` runs (dependency-cruiser, .dependency-cruiser.cjs: DESIGN's floors and
// no cycles) shown able to fail — an import up a floor and a cycle in a tree of their own are
// refused — and finding nothing in the code.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(".");
const DEPCRUISE = path.join(ROOT, "node_modules/.bin/depcruise");

/** depcruise's violations of `files` (a glob), cruised from `cwd` with the project's rules. */
function violations(cwd: string, files: string): Array<{ rule: string; from: string; to: string }> {
  let out: string;
  try {
    out = execFileSync(
      DEPCRUISE,
      [files, "--config", path.join(ROOT, ".dependency-cruiser.cjs"), "--output-type", "json"],
      { cwd, encoding: "utf8", maxBuffer: 64 << 20 },
    );
  } catch (error) {
    out = (error as { stdout: string }).stdout; // exit status 1: violations found
  }
  const result = JSON.parse(out) as {
    summary: { violations: Array<{ rule: { name: string }; from: string; to: string }> };
  };
  return result.summary.violations.map((v) => ({ rule: v.rule.name, from: v.from, to: v.to }));
}

describe("the layering check", () => {
  it("refuses an import up a floor and an import cycle", () => {
    const tree = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-layering-"));
    try {
      const write = (file: string, text: string) => {
        fs.mkdirSync(path.dirname(path.join(tree, file)), { recursive: true });
        fs.writeFileSync(path.join(tree, file), text);
      };
      write("src/install/apply.ts", "export const apply = 1;\n");
      write("src/detect/kvm.ts", 'import { apply } from "../install/apply.js";\nexport const kvm = apply;\n');
      write("src/render/a.ts", 'import { b } from "./b.js";\nexport const a = () => b;\n');
      write("src/render/b.ts", 'import { a } from "./a.js";\nexport const b = () => a;\n');
      fs.copyFileSync(path.join(ROOT, "tsconfig.json"), path.join(tree, "tsconfig.json"));
      const found = violations(tree, "src/**/*.ts");
      expect(found).toContainEqual({
        rule: "floor-detect",
        from: "src/detect/kvm.ts",
        to: "src/install/apply.ts",
      });
      // A cycle is reported once, from the module the cruise met first.
      const cycles = found.filter((v) => v.rule === "no-cycles");
      expect(cycles.length).toBeGreaterThan(0);
      for (const c of cycles) expect(["src/render/a.ts", "src/render/b.ts"]).toContain(c.from);
    } finally {
      fs.rmSync(tree, { recursive: true, force: true });
    }
  });

  it("puts every folder and file under src/ on a floor", () => {
    // Loaded as Node loads it (an import's interop would copy only its enumerable keys).
    const { floors } = createRequire(import.meta.url)(path.join(ROOT, ".dependency-cruiser.cjs")) as {
      floors: string[][];
    };
    const named = new Set(floors.flat());
    const top = fs.readdirSync(path.join(ROOT, "src")).map((f) => f.replace(/\.ts$/, ""));
    expect(top.filter((t) => !named.has(t))).toEqual([]);
  });

  it("finds none in the code: every module on its floor, no import cycle", () => {
    expect(violations(ROOT, "src/**/*.ts")).toEqual([]);
  });
});
