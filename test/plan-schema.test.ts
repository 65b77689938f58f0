// The schema of `plan --json`: every plan printed passes it (it is strict, so a field the schema
// lacks fails), and docs/commands.md documents exactly its fields.
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PlanJson } from "../src/plan-schema.js";
import { artifactDir } from "./helpers/artifacts.js";
import { runCli } from "./helpers/cli.js";
import { amdSnpCrio, gpuDistroQemuK3s, intelContainerd16 } from "./helpers/nodes.js";
import { readmeFields, schemaFields } from "./helpers/schema-fields.js";
import { buildHost, removeTestHosts } from "./helpers/test-host.js";

afterAll(removeTestHosts);
const artifacts = artifactDir();
afterAll(() => fs.rmSync(artifacts, { recursive: true, force: true }));

describe("the plan --json schema", () => {
  it.each([
    ["Intel/containerd 1.6, with pulls measured", intelContainerd16, ["--artifacts", `dir:${artifacts}`]],
    ["AMD SEV-SNP/CRI-O", amdSnpCrio, ["--artifacts", `dir:${artifacts}`]],
    ["a GPU node with the distro's qemu, k3s", gpuDistroQemuK3s, ["--artifacts", `dir:${artifacts}`]],
    ["a node without a release to read", intelContainerd16, []],
  ])("accepts the plan printed for %s", (_, spec, args) => {
    const host = buildHost(spec());
    const doc = JSON.parse(runCli(["plan", "--host-root", host.root, "--json", ...args]).stdout);
    const parsed = PlanJson.safeParse(doc);
    expect(parsed.error?.issues ?? []).toEqual([]);
    expect(doc.changes.length).toBeGreaterThan(0);
  });

  it("refuses a field it does not know, and a hash that is not one", () => {
    const doc = { checks: [], shims: [], dropped: [], artifacts: [], changes: [], actions: [] };
    expect(PlanJson.safeParse(doc).success).toBe(true);
    expect(PlanJson.safeParse({ ...doc, extra: 1 }).success).toBe(false);
    const change = { path: "/x", action: "create", reason: "", diff: "", beforeHash: null, afterHash: "x" };
    expect(PlanJson.safeParse({ ...doc, changes: [change] }).success).toBe(false);
  });

  it("is docs/commands.md's table of the document's fields, field for field", () => {
    const doc = fs.readFileSync(path.resolve("docs/commands.md"), "utf8");
    expect(readmeFields(doc, "### The `plan --json` document")).toEqual(schemaFields(PlanJson));
  });
});
