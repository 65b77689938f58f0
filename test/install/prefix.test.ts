// The prefix is kata-install's only where its journal says so: data already there is refused up
// front, by name, and never deleted or replaced — by install, upgrade or uninstall.
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { answeringHost } from "../helpers/answering.js";
import { artifactDir } from "../helpers/artifacts.js";
import { runCli } from "../helpers/cli.js";
import { removeTestHosts } from "../helpers/test-host.js";
import { snapshot } from "../helpers/tree.js";

afterAll(removeTestHosts);
const artifacts = artifactDir();
const newer = artifactDir("3.10.0");
afterAll(() => {
  for (const d of [artifacts, newer]) fs.rmSync(d, { recursive: true, force: true });
});

async function node() {
  const host = await answeringHost();
  const cli = (...args: string[]) => runCli([...args, "--host-root", host.root]);
  return { ...host, cli };
}

describe("someone's data in the prefix", async () => {
  const host = await node();
  const put = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(host.root, file)), { recursive: true });
    fs.writeFileSync(path.join(host.root, file), text);
  };

  it("a versions/ of someone else's and a file named current: plan fails naming both, install refuses, nothing changes", () => {
    put("opt/kata/versions/v1/important.db", "rows\n");
    put("opt/kata/current", "not a link\n");
    const before = snapshot(host.root);
    const plan = runCli(["plan", "--host-root", host.root, "--artifacts", `dir:${artifacts}`]);
    expect(plan.status).toBe(1);
    expect(plan.stdout).toContain(
      "[ERROR] install-prefix: /opt/kata holds content that is not kata-install's",
    );
    expect(plan.stdout).toContain("/opt/kata/current is not a link, and no kata-install journal records it");
    expect(plan.stdout).toContain("/opt/kata/versions/v1 is not a version kata-install made");
    const run = runCli(["install", "--host-root", host.root, "--artifacts", `dir:${artifacts}`]);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/preflight errors: .*install-prefix/);
    expect(snapshot(host.root)).toEqual(before);
    expect(runCli(["uninstall", "--host-root", host.root]).stdout).toContain("Nothing to uninstall");
    expect(snapshot(host.root)).toEqual(before);
  });
});

describe("data put beside an install of ours", async () => {
  const host = await node();

  it("is refused for an upgrade and left by uninstall, named", () => {
    expect(runCli(["install", "--host-root", host.root, "--artifacts", `dir:${artifacts}`]).status).toBe(0);
    const mine = path.join(host.root, "opt/kata/versions/mine/important.db");
    fs.mkdirSync(path.dirname(mine), { recursive: true });
    fs.writeFileSync(mine, "rows\n");
    const upgrade = runCli(["install", "--host-root", host.root, "--artifacts", `dir:${newer}`]);
    expect(upgrade.status).toBe(1);
    expect(upgrade.stderr).toContain("/opt/kata/versions/mine is not a version kata-install made");
    const uninstall = runCli(["uninstall", "--host-root", host.root]);
    expect(uninstall.status, uninstall.stderr).toBe(0);
    expect(fs.readFileSync(mine, "utf8")).toBe("rows\n");
    expect(fs.readdirSync(path.join(host.root, "opt/kata/versions"))).toEqual(["mine"]);
    expect(uninstall.stdout).toContain(
      "left /opt/kata/versions: a directory kata-install created, not empty",
    );
  });
});
