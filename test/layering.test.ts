// The layering check `npm test` runs (dependency-cruiser, .dependency-cruiser.cjs: DESIGN's floors and
// no cycles) shown able to fail — an import up a floor and a cycle in a tree of their own are
// refused — and its list of known violations kept honest: each one it excuses is still there, so a
// fixed one leaves the list (which only shrinks).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(".");
const DEPCRUISE = path.join(ROOT, "node_modules/.bin/depcruise");

/** depcruise's violations of `files` (a glob), cruised from `cwd` with the project's rules. */
function violations(
  cwd: string,
  files: string,
  ignoreKnown: boolean,
): Array<{ rule: string; from: string; to: string }> {
  let out: string;
  try {
    out = execFileSync(
      DEPCRUISE,
      [
        files,
        "--config",
        path.join(ROOT, ".dependency-cruiser.cjs"),
        "--output-type",
        "json",
        ...(ignoreKnown
          ? ["--ignore-known", path.join(ROOT, ".dependency-cruiser-known-violations.json")]
          : []),
      ],
      { cwd, encoding: "utf8", maxBuffer: 64 << 20 },
    );
  } catch (error) {
    out = (error as { stdout: string }).stdout; // exit status 1: violations found
  }
  const result = JSON.parse(out) as {
    summary: { violations: Array<{ rule: { name: string; severity: string }; from: string; to: string }> };
  };
  // A known violation is reported too, with its severity lowered to "ignore".
  return result.summary.violations
    .filter((v) => v.rule.severity !== "ignore")
    .map((v) => ({ rule: v.rule.name, from: v.from, to: v.to }));
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
      const found = violations(tree, "src/**/*.ts", false);
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

  it("excuses only violations that are still there", () => {
    const known = JSON.parse(fs.readFileSync(".dependency-cruiser-known-violations.json", "utf8")) as Array<{
      rule: { name: string };
      from: string;
      to: string;
    }>;
    const now = violations(ROOT, "src/**/*.ts", false);
    const stale = known.filter(
      (k) => !now.some((v) => v.rule === k.rule.name && v.from === k.from && v.to === k.to),
    );
    expect(stale.map((k) => `${k.rule.name}: ${k.from} → ${k.to}`)).toEqual([]);
    expect(violations(ROOT, "src/**/*.ts", true)).toEqual([]);
  });
});
