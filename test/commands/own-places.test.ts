// kata-install's own places under the prefix — .install and what is in it, versions/, current, the
// staging directories — with a link, a FIFO or someone's directory planted where kata-install keeps
// its own: install and uninstall refuse by name before anything is read, written or deleted
// through it, and the whole host tree (sha256 of every file) is as it was.
import { execFileSync } from "node:child_process";
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
afterAll(() => fs.rmSync(artifacts, { recursive: true, force: true }));

async function node() {
  const host = await answeringHost();
  const cli = (...args: string[]) =>
    runCli([
      ...args,
      "--host-root",
      host.root,
      ...(args[0] === "install" ? ["--artifacts", `dir:${artifacts}`] : []),
    ]);
  const at = (p: string) => path.join(host.root, p);
  return { ...host, cli, at };
}

/** The run failed in one line (no stack) that says `what`. */
function refused(run: { status: number | null; stderr: string }, what: string | RegExp): void {
  expect(run.status, run.stderr).toBe(1);
  const last = run.stderr.trimEnd().split("\n").pop() ?? "";
  expect(last).toMatch(/^kata-install: /);
  if (typeof what === "string") expect(last).toContain(what);
  else expect(last).toMatch(what);
  expect(run.stderr).not.toMatch(/\n\s+at /);
  // Never Node's own words ("ENOENT: no such file or directory, rename '…'").
  expect(last).not.toMatch(/\bE[A-Z]+: [a-z]/);
}

describe("the journal directory a link (ln -s ../.. opt/kata/.install, or to nowhere)", () => {
  it.each(["../..", "/nowhere/at/all"])(
    "-> %s: install, uninstall and plan refuse by name (not with a raw rename error); the host is whole",
    async (target) => {
      const host = await node();
      fs.mkdirSync(host.at("opt/kata"), { recursive: true });
      fs.symlinkSync(target, host.at("opt/kata/.install"));
      const before = snapshot(host.root);
      const said = `/opt/kata/.install is a symbolic link (to ${target}), where kata-install keeps a directory of its own`;
      refused(host.cli("install"), said);
      expect(snapshot(host.root)).toEqual(before);
      refused(host.cli("uninstall"), said);
      expect(snapshot(host.root)).toEqual(before);
      refused(host.cli("plan"), said);
    },
  );
});

describe("the journal directory a link to an admin's data", async () => {
  const host = await node();

  it("nothing is written there or deleted from it", () => {
    fs.mkdirSync(host.at("var/lib/admin-data"), { recursive: true });
    fs.writeFileSync(host.at("var/lib/admin-data/important.db"), "rows\n");
    // Even one that looks like kata-install's: a journal is read only from kata-install's own place.
    fs.writeFileSync(host.at("var/lib/admin-data/journal.json"), '{"version":1}\n');
    fs.mkdirSync(host.at("opt/kata"), { recursive: true });
    fs.symlinkSync("/var/lib/admin-data", host.at("opt/kata/.install"));
    const before = snapshot(host.root);
    refused(host.cli("install"), "/opt/kata/.install is a symbolic link (to /var/lib/admin-data)");
    refused(host.cli("uninstall"), "/opt/kata/.install is a symbolic link (to /var/lib/admin-data)");
    expect(snapshot(host.root)).toEqual(before);
  });
});

describe("the staging directory a link to the admin's data, planted before an install", async () => {
  const host = await node();

  it("the plan names it, install refuses, nothing is written there", async () => {
    // The version's id is the source's: a reference install of the same artifacts says it.
    const reference = await node();
    const id = JSON.parse(reference.cli("install", "--json").stdout).artifacts.staged.id as string;
    fs.mkdirSync(host.at("var/lib/admin-data"), { recursive: true });
    fs.writeFileSync(host.at("var/lib/admin-data/important.db"), "rows\n");
    fs.mkdirSync(host.at("opt/kata/versions"), { recursive: true });
    fs.symlinkSync("/var/lib/admin-data", host.at(`opt/kata/versions/${id}.partial`));
    const before = snapshot(host.root);
    const plan = host.cli("plan", "--artifacts", `dir:${artifacts}`);
    expect(plan.stdout).toContain(`/opt/kata/versions/${id}.partial is not a version kata-install made`);
    refused(host.cli("install"), /install-prefix/);
    expect(snapshot(host.root)).toEqual(before);
  });
});

describe("a place of an install of ours replaced afterwards", () => {
  /** The place moved aside and a link to `target` put in its stead. */
  const link =
    (place: string, target: (at: (p: string) => string) => string) => (at: (p: string) => string) => {
      fs.renameSync(at(place), at(`var/lib/moved-${path.basename(place)}`));
      fs.symlinkSync(target(at), at(place));
    };
  /** A directory of the admin's, with a file in it, where a link of ours was. */
  const dir = (place: string) => (at: (p: string) => string) => {
    fs.rmSync(at(place));
    fs.mkdirSync(at(place));
    fs.writeFileSync(at(`${place}/notes`), "mine\n");
  };
  const adminData = () => "/var/lib/admin-data";
  const cases: Array<[string, string, (at: (p: string) => string) => void]> = [
    [
      "versions/ a link to the admin's data",
      "/opt/kata/versions is a symbolic link (to /var/lib/admin-data)",
      link("opt/kata/versions", adminData),
    ],
    [
      "current a directory of the admin's",
      "/opt/kata/current is a directory, where kata-install keeps a symbolic link of its own",
      dir("opt/kata/current"),
    ],
    [
      "the saved originals a link to the admin's data",
      "/opt/kata/.install/original is a symbolic link (to /var/lib/admin-data)",
      link("opt/kata/.install/original", adminData),
    ],
    [
      "the journal a FIFO",
      "/opt/kata/.install/journal.json is a FIFO, where kata-install keeps a regular file of its own",
      (at) => {
        fs.rmSync(at("opt/kata/.install/journal.json"));
        execFileSync("mkfifo", [at("opt/kata/.install/journal.json")]);
      },
    ],
    [
      "the probe cache a link to a file outside the host root",
      "/opt/kata/.install/probes.json is a symbolic link (to ",
      link("opt/kata/.install/probes.json", (at) => at("var/lib/admin-data/important.db")),
    ],
    [
      "a link of ours (bin) made a directory of the admin's",
      "/opt/kata/bin is a directory, where kata-install keeps a symbolic link of its own",
      dir("opt/kata/bin"),
    ],
  ];

  it.each(cases)("%s: uninstall and install refuse by name, nothing changes", async (_name, said, plant) => {
    const host = await node();
    expect(host.cli("install").status).toBe(0);
    fs.mkdirSync(host.at("var/lib/admin-data"), { recursive: true });
    fs.writeFileSync(host.at("var/lib/admin-data/important.db"), "rows\n");
    plant(host.at);
    const before = snapshot(host.root);
    refused(host.cli("uninstall"), said);
    expect(snapshot(host.root)).toEqual(before);
    refused(host.cli("install"), said);
    expect(snapshot(host.root)).toEqual(before);
  });
});
