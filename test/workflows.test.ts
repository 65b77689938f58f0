// The repository's GitHub workflows, checked by GitHub's own workflow parser (@actions/workflow-parser,
// the schema Actions itself validates with): a key Actions does not take, a misplaced one or a bad
// expression fails here, not on the first tag. And what the release workflow publishes is what it
// says: both architectures, and the Kata release the repository names.
import fs from "node:fs";
import path from "node:path";
import { NoOperationTraceWriter, parseWorkflow } from "@actions/workflow-parser";
import { parse as parseToml } from "smol-toml";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

const DIR = ".github/workflows";
/** An Actions expression as a workflow writes it: $ and {{ … }}. */
const expression = (text: string) => `$${"{{"} ${text} }}`;
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

  it("publishes what `manifests` names by default: this version's image, the Kata release's artifacts", () => {
    const release = parse(fs.readFileSync(path.join(DIR, "release.yml"), "utf8"));
    const pkg = JSON.parse(fs.readFileSync("package.json", "utf8"));
    const owner = /github\.com\/([^/]+)\//.exec(pkg.repository.url)?.[1];
    const values = parseToml(fs.readFileSync("templates/k8s/values.toml", "utf8"));
    const at = (name: string) =>
      String(release.env[name]).replace(expression("github.repository_owner"), String(owner));
    // The image job tags with the pushed tag (v<version>); the defaults name that tag.
    expect(JSON.stringify(release.jobs.image)).toContain(
      `${expression("env.IMAGE")}:${expression("github.ref_name")}`,
    );
    expect(values.image).toBe(`${at("IMAGE")}:v${pkg.version}`);
    expect(values.artifacts).toBe(`registry:${at("ARTIFACTS")}`);
    expect(`${values.kata_version}\n`).toBe(fs.readFileSync(".github/kata-release", "utf8"));
    expect(values.artifacts_tag).toBe("");
  });
});
