// The repository's GitHub workflows, checked by GitHub's own workflow parser (@actions/workflow-parser,
// the schema Actions itself validates with): a key Actions does not take, a misplaced one or a bad
// expression fails here, not on the first tag. And what the release workflow publishes is what it
// says: both architectures, and the Kata release the repository names.
import fs from "node:fs";
import path from "node:path";
import { NoOperationTraceWriter, parseWorkflow } from "@actions/workflow-parser";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

const DIR = ".github/workflows";
const files = fs.readdirSync(DIR).filter((f) => /\.ya?ml$/.test(f));

describe("the GitHub workflows", () => {
  it("are there: the tests on pull requests, the release on tags", () => {
    expect(files.sort()).toEqual(["release.yml", "test.yml"]);
    expect(parse(fs.readFileSync(path.join(DIR, "test.yml"), "utf8")).on).toHaveProperty("pull_request");
    expect(parse(fs.readFileSync(path.join(DIR, "release.yml"), "utf8")).on.push.tags).toEqual(["v*"]);
  });

  it.each(files)("%s: valid for GitHub Actions", (file) => {
    const parsed = parseWorkflow(
      { name: file, content: fs.readFileSync(path.join(DIR, file), "utf8") },
      new NoOperationTraceWriter(),
    );
    expect(parsed.context.errors.getErrors().map((e) => e.message)).toEqual([]);
    expect(parsed.value).toBeDefined();
  });

  it("a misplaced key is an error the check reports (the check can fail)", () => {
    const parsed = parseWorkflow(
      { name: "bad.yml", content: "on: push\njobs:\n  a:\n    runs-on: ubuntu-24.04\n    stepz: []\n" },
      new NoOperationTraceWriter(),
    );
    expect(parsed.context.errors.getErrors().length).toBeGreaterThan(0);
  });

  it("release: both architectures of the image and of the artifacts, the Kata release the repository names", () => {
    const release = fs.readFileSync(path.join(DIR, "release.yml"), "utf8");
    expect(release).toContain("platforms: linux/amd64,linux/arm64");
    expect(release).toContain("for arch in amd64 arm64; do");
    expect(release).toContain("skopeo copy --all");
    expect(fs.readFileSync(".github/kata-release", "utf8")).toMatch(/^\d+\.\d+\.\d+\n$/);
  });
});
