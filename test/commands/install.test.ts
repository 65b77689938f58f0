// `install` and `uninstall` end to end, as a user runs them, on a test host whose systemctl records
// its calls and whose containerd socket answers.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answeringHost } from "../helpers/answering.js";
import { artifactDir, ociLayoutFrom, sampleContent } from "../helpers/artifacts.js";
import { CLI, runCli } from "../helpers/cli.js";
import { criStandIn, type StandIn } from "../helpers/cri-stand-in.js";
import { intelContainerd16, nestedVmWithoutVmx } from "../helpers/nodes.js";
import { pushLayout, startRegistry } from "../helpers/registry.js";
import { buildRelease } from "../helpers/release.js";
import { buildHost, removeTestHosts } from "../helpers/test-host.js";
import { mtimes, snapshot } from "../helpers/tree.js";

afterAll(removeTestHosts);
const artifacts = artifactDir();
afterAll(() => fs.rmSync(artifacts, { recursive: true, force: true }));

const SYSTEMCTL = 'echo "$@" >> "$(dirname "$0")/../../var/log/systemctl.calls"';
const withoutLog = (tree: Record<string, string>) =>
  Object.fromEntries(Object.entries(tree).filter(([p]) => !p.startsWith("var/log/systemctl.calls")));

/** An Intel/containerd 1.6 test host whose systemctl succeeds and whose containerd socket answers. */
const answering = () => answeringHost(intelContainerd16());

describe("install, again, and uninstall", () => {
  const spec = intelContainerd16();
  spec.commands = { ...spec.commands, "/usr/bin/systemctl": SYSTEMCTL };
  spec.files = { ...spec.files, "/var/log/.keep": "" };
  const host = buildHost(spec);
  const calls = () => fs.readFileSync(path.join(host.root, "var/log/systemctl.calls"), "utf8");
  let server: StandIn;
  let original: Record<string, string>;
  beforeAll(async () => {
    const socket = path.join(host.root, "run/containerd/containerd.sock");
    fs.rmSync(socket);
    server = await criStandIn(socket);
    original = snapshot(host.root);
  });
  afterAll(() => server.close());
  const cli = (...args: string[]) => runCli([...args, "--host-root", host.root]);

  it("installs: artifacts switched in, files written, containerd restarted once", () => {
    const run = cli("install", "--artifacts", `dir:${artifacts}`);
    expect(run.stderr).toMatch(/✔ Render configuration/);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(
      /^Artifacts: version [0-9a-f]{16} \(\d+ files, \d+ bytes\) switched in\.\nPulled \d+ of the release's \d+ artifacts: \d+ of \d+ bytes \(\d+%\)\.\nFiles: 13 written, 0 removed\.\nRuntime: restarted containerd, and it serves the Kata handlers\.\n$/,
    );
    expect(calls()).toBe("restart containerd\n");
    expect(fs.readFileSync(path.join(host.root, "opt/kata/bin/containerd-shim-kata-v2"), "utf8")).toBe(
      sampleContent("base", "bin/containerd-shim-kata-v2", "3.9.0"),
    );
    expect(fs.readFileSync(path.join(host.root, "etc/containerd/config.toml"), "utf8")).toContain(
      "runtimes.kata-qemu]",
    );
  });

  it("a second install changes nothing and restarts nothing", () => {
    // The first install kept what the binaries it installed answered: the second asks none of them.
    const probes = JSON.parse(fs.readFileSync(path.join(host.root, "opt/kata/.install/probes.json"), "utf8"));
    expect(probes["run:/opt/kata/bin/containerd-shim-kata-v2\0--version"].result.stdout).toBe(
      "base bin/containerd-shim-kata-v2 3.9.0\n",
    );
    const times = mtimes(host.root);
    const run = cli("install", "--artifacts", `dir:${artifacts}`);
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(
      "Files: 0 written, 0 removed.\nNothing to do: the node is as the plan wants it.\n",
    );
    expect(calls()).toBe("restart containerd\n");
    expect(mtimes(host.root)).toEqual(times);
    expect(cli("plan", "--detailed-exitcode").status).toBe(0);
  });

  it("facts takes what kata-install's binaries answered from the install's probe cache, as a plan does", () => {
    const file = path.join(host.root, "opt/kata/.install/probes.json");
    const saved = fs.readFileSync(file, "utf8");
    const key = "run:/opt/kata/bin/containerd-shim-kata-v2\0--version";
    const probes = JSON.parse(saved);
    probes[key].result.stdout = "base bin/containerd-shim-kata-v2 9.9.9\n";
    fs.writeFileSync(file, JSON.stringify(probes));
    const before = snapshot(host.root);
    try {
      expect(JSON.parse(cli("facts", "--json").stdout).kata.version).toBe("9.9.9");
      expect(snapshot(host.root)).toEqual(before); // read only
    } finally {
      fs.writeFileSync(file, saved);
    }
  });

  it("uninstall --dry-run shows the restoring diffs and changes nothing", () => {
    const before = snapshot(host.root);
    const run = cli("uninstall", "--dry-run");
    expect(run.status).toBe(0);
    expect(run.stdout).toContain(
      "# modify /etc/containerd/config.toml\n--- a/etc/containerd/config.toml\n+++ b/etc/containerd/config.toml\n",
    );
    expect(run.stdout).toContain(
      "# delete /opt/kata/share/defaults/kata-containers/runtimes/qemu/configuration-qemu.toml",
    );
    // Counted as the uninstall below counts what it did.
    expect(run.stdout).toMatch(
      /\nUninstall would restore 1 file\(s\), remove 12, and the artifacts under \/opt\/kata\.\nRuntime: would restart containerd, and wait until it answers\.\n$/,
    );
    // --json: the same, as one document.
    const json = cli("uninstall", "--dry-run", "--json");
    expect(json.status).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      dryRun: true,
      installed: true,
      restored: ["/etc/containerd/config.toml"],
      restart: { kind: "restart", target: "containerd", owed: false },
    });
    expect(JSON.parse(json.stdout).removed).toHaveLength(12);
    expect(snapshot(host.root)).toEqual(before);
    // An admin's file in a directory kata-install made: uninstall leaves it, and says so first.
    const mine = path.join(host.root, "opt/kata/share/defaults/kata-containers/runtimes/qemu/notes.txt");
    fs.writeFileSync(mine, "mine\n");
    try {
      expect(cli("uninstall", "--dry-run").stdout).toMatch(
        /\n {2}would leave \/opt\/kata\/share\/defaults\/kata-containers\/runtimes\/qemu\/notes\.txt: not kata-install's\n {2}would leave \/opt\/kata\/share\/defaults\/kata-containers\/runtimes\/qemu: a directory kata-install created, not empty: left in place\n/,
      );
    } finally {
      fs.rmSync(mine);
    }
  });

  it("uninstall --dry-run says what uninstall does with files edited since the install", async () => {
    const main = path.join(host.root, "etc/containerd/config.toml");
    const shim = path.join(
      host.root,
      "opt/kata/share/defaults/kata-containers/runtimes/qemu/configuration-qemu.toml",
    );
    const [savedMain, savedShim] = [main, shim].map((f) => fs.readFileSync(f)) as [Buffer, Buffer];
    fs.appendFileSync(main, "# the admin's note\n");
    fs.appendFileSync(shim, "# tuned by hand\n");
    const copy = fs.mkdtempSync(path.join(path.dirname(host.root), "edited-"));
    try {
      const dry = cli("uninstall", "--dry-run");
      expect(dry.status).toBe(0);
      // The admin's edit survives in what the dry run shows, and nothing of it is deleted.
      expect(dry.stdout).not.toContain(
        "# delete /opt/kata/share/defaults/kata-containers/runtimes/qemu/configuration-qemu.toml",
      );
      expect(dry.stdout).toContain(" # the admin's note\n");
      const said = (text: string, verb: string) =>
        text
          .split("\n")
          .filter((l) => l.startsWith(`  ${verb} `))
          .map((l) => l.slice(verb.length + 3));
      // The same node, uninstalled for real: the dry run said what it did.
      // cp -a, as an admin would: the test host holds device nodes Node's copy refuses.
      execFileSync("cp", ["-a", `${host.root}/.`, copy]);
      const socket = path.join(copy, "run/containerd/containerd.sock");
      fs.rmSync(socket);
      const answer = await criStandIn(socket);
      try {
        const real = runCli(["uninstall", "--host-root", copy]);
        expect(real.status).toBe(0);
        const counts = /^Restored (\d+) file\(s\), removed (\d+)/.exec(real.stdout);
        expect(dry.stdout).toContain(
          `Uninstall would restore ${counts?.[1]} file(s), remove ${counts?.[2]},`,
        );
        expect(said(dry.stdout, "would leave")).toEqual(said(real.stdout, "left"));
        const [first, second, ...dirs] = said(real.stdout, "left");
        expect([first, second]).toEqual([
          "/etc/containerd/config.toml: edited after the install: only kata-install's block was removed, the rest kept as it is",
          "/opt/kata/share/defaults/kata-containers/runtimes/qemu/configuration-qemu.toml: edited after the install: left in place",
        ]);
        // The shim's directory and those above it that kata-install made stay with the edited file.
        expect(dirs[0]).toBe(
          "/opt/kata/share/defaults/kata-containers/runtimes/qemu: a directory kata-install created, not empty: left in place",
        );
        for (const dir of dirs)
          expect(dir).toMatch(/^\/opt\S*: a directory kata-install created, not empty: left in place$/);
      } finally {
        answer.close();
      }
    } finally {
      fs.rmSync(copy, { recursive: true, force: true });
      fs.writeFileSync(main, savedMain);
      fs.writeFileSync(shim, savedShim);
    }
  });

  it("uninstall gives every file back, byte for byte, and restarts containerd", () => {
    const run = cli("uninstall");
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(
      "Restored 1 file(s), removed 12, and the artifacts.\nRuntime: restarted containerd, and it answers.\n",
    );
    expect(calls()).toBe("restart containerd\nrestart containerd\n");
    expect(withoutLog(snapshot(host.root))).toEqual(withoutLog(original));
    const again = cli("uninstall");
    expect(again).toMatchObject({
      status: 0,
      stdout: expect.stringMatching(
        /^Nothing to uninstall: no kata-install journal at \/opt\/kata\/\.install\/journal\.json \(looked where INSTALLATION_PREFIX=\(unset\), MULTI_INSTALL_SUFFIX=\(unset\) put Kata/,
      ),
    });
    // --json, with or without --dry-run: one document that says so.
    for (const args of [
      ["uninstall", "--json"],
      ["uninstall", "--dry-run", "--json"],
    ]) {
      const json = cli(...args);
      expect(json.status, args.join(" ")).toBe(0);
      const doc = JSON.parse(json.stdout);
      expect(doc.message).toMatch(
        /^Nothing to uninstall: no kata-install journal at \/opt\/kata\/\.install\/journal\.json/,
      );
      expect(args.includes("--dry-run") ? doc.installed : doc.nothingInstalled, args.join(" ")).toBe(
        !args.includes("--dry-run"),
      );
    }
  });
});

describe("a new Kata release in the source, under the same artifact names", () => {
  it("is shown in the plan, switched in without restarting the runtime, and then nothing more", async () => {
    const spec = intelContainerd16();
    spec.commands = { ...spec.commands, "/usr/bin/systemctl": SYSTEMCTL };
    spec.files = { ...spec.files, "/var/log/.keep": "" };
    const host = buildHost(spec);
    const calls = () => fs.readFileSync(path.join(host.root, "var/log/systemctl.calls"), "utf8");
    const newer = artifactDir("3.10.0");
    const socket = path.join(host.root, "run/containerd/containerd.sock");
    fs.rmSync(socket);
    const server = await criStandIn(socket);
    try {
      const first = runCli(["install", "--host-root", host.root, "--artifacts", `dir:${artifacts}`]);
      expect(first.status, first.stderr).toBe(0);
      expect(calls()).toBe("restart containerd\n");
      const dry = runCli(["plan", "--host-root", host.root, "--artifacts", `dir:${newer}`]);
      // Named by the releases' numbers (the ids tell two builds of one number apart); newer: no warning.
      expect(dry.stdout).toMatch(
        new RegExp(
          `pull-artifact base: dir:${newer} holds Kata 3\\.10\\.0 \\(version \\w{16}\\); /opt/kata has Kata 3\\.9\\.0 \\(version \\w{16}\\)`,
        ),
      );
      expect(dry.stdout).not.toContain("release-downgrade");
      const upgrade = runCli(["install", "--host-root", host.root, "--artifacts", `dir:${newer}`]);
      expect(upgrade.status, upgrade.stderr).toBe(0);
      expect(upgrade.stdout).toMatch(/^Artifacts: version \w{16} \(\d+ files, \d+ bytes\) switched in\.$/m);
      expect(upgrade.stdout).toContain("Files: 0 written, 0 removed.");
      expect(fs.readFileSync(path.join(host.root, "opt/kata/bin/containerd-shim-kata-v2"), "utf8")).toBe(
        sampleContent("base", "bin/containerd-shim-kata-v2", "3.10.0"),
      );
      expect(calls()).toBe("restart containerd\n");
      // facts says the release now installed, not the one it read before the switch.
      const facts = JSON.parse(runCli(["facts", "--json", "--host-root", host.root]).stdout);
      expect(facts.kata.version).toBe("3.10.0");
      const again = runCli(["install", "--host-root", host.root, "--artifacts", `dir:${newer}`]);
      expect(again.stdout).toContain("Nothing to do: the node is as the plan wants it.");
      // Back to the older release (an image tag rolled back): said, not refused.
      const back = runCli(["plan", "--host-root", host.root, "--artifacts", `dir:${artifacts}`]);
      expect(back.status, back.stderr).toBe(0);
      expect(back.stdout).toContain(
        `[WARNING] release-downgrade: this installs Kata 3.9.0 (dir:${artifacts}) over the node's Kata 3.10.0: an older release`,
      );
      // And install says it too (its log has no plan), on stderr and in --json.
      const down = runCli(["install", "--json", "--host-root", host.root, "--artifacts", `dir:${artifacts}`]);
      expect(down.status, down.stderr).toBe(0);
      expect(down.stderr).toContain(
        `kata-install: warning: release-downgrade: this installs Kata 3.9.0 (dir:${artifacts}) over the node's Kata 3.10.0: an older release\n`,
      );
      expect(JSON.parse(down.stdout).warnings).toContainEqual({
        id: "release-downgrade",
        message: `this installs Kata 3.9.0 (dir:${artifacts}) over the node's Kata 3.10.0: an older release`,
      });
    } finally {
      server.close();
      fs.rmSync(newer, { recursive: true, force: true });
    }
  });
});

describe("an upgrade that changes one artifact", () => {
  it("pulls and writes that artifact only; the others are taken from the installed version by digest, said in the plan", async () => {
    const spec = intelContainerd16();
    spec.commands = { ...spec.commands, "/usr/bin/systemctl": SYSTEMCTL };
    spec.files = { ...spec.files, "/var/log/.keep": "" };
    const host = buildHost(spec);
    // The same release, but a rebuilt Go shim: only the base artifact differs.
    const rebuilt = artifactDir();
    const shim = path.join(rebuilt, "base/opt/kata/bin/containerd-shim-kata-v2");
    fs.writeFileSync(shim, "a rebuilt shim binary\n");
    const shimBytes = fs.statSync(shim).size;
    const socket = path.join(host.root, "run/containerd/containerd.sock");
    fs.rmSync(socket);
    const server = await criStandIn(socket);
    const kernel = "opt/kata/share/kata-containers/vmlinux.container";
    try {
      const first = runCli(["install", "--host-root", host.root, "--artifacts", `dir:${artifacts}`]);
      expect(first.status, first.stderr).toBe(0);
      const kernelInode = fs.statSync(path.join(host.root, kernel)).ino;
      const kernelText = fs.readFileSync(path.join(host.root, kernel), "utf8");

      const plan = runCli(["plan", "--json", "--host-root", host.root, "--artifacts", `dir:${rebuilt}`]);
      const doc = JSON.parse(plan.stdout);
      expect(doc.actions.filter((a: { kind: string }) => a.kind === "pull-artifact")).toEqual([
        expect.objectContaining({
          target: "base",
          reason: expect.stringMatching(
            /holds another build of Kata 3\.9\.0 \(version \w{16}\) than the one under \/opt\/kata \(\w{16}\): this artifact changed$/,
          ),
        }),
      ]);
      const installedArtifacts = doc.artifacts.filter((a: { from: string }) => a.from === "bundled").length;
      expect(doc.transfer).toMatchObject({
        images: 1,
        reused: { images: installedArtifacts - 1, version: expect.stringMatching(/^\w{16}$/) },
      });
      const text = runCli(["plan", "--host-root", host.root, "--artifacts", `dir:${rebuilt}`]).stdout;
      expect(text).toMatch(
        /Pulls 1 of the release's \d+ artifacts: \d+ of \d+ bytes \(\d+%\)\. \d+ more \(\d+ bytes\) unchanged since version \w{16}: taken from the node, not pulled\./,
      );

      const upgrade = runCli(["install", "--host-root", host.root, "--artifacts", `dir:${rebuilt}`]);
      expect(upgrade.status, upgrade.stderr).toBe(0);
      // Written: the base artifact's bytes alone (its shim and the rest of base), nothing else.
      const baseBytes = fs
        .readdirSync(path.join(rebuilt, "base/opt/kata"), { recursive: true })
        .map((f) => fs.lstatSync(path.join(rebuilt, "base/opt/kata", String(f))))
        .reduce((n, st) => n + (st.isFile() ? st.size : 0), 0);
      expect(upgrade.stdout).toMatch(
        new RegExp(`^Artifacts: version \\w{16} \\(\\d+ files, ${baseBytes} bytes\\) switched in\\.$`, "m"),
      );
      expect(upgrade.stdout).toMatch(/^Pulled 1 of the release's \d+ artifacts: /m);
      expect(fs.readFileSync(path.join(host.root, "opt/kata/bin/containerd-shim-kata-v2"), "utf8")).toBe(
        "a rebuilt shim binary\n",
      );
      expect(shimBytes).toBeLessThanOrEqual(baseBytes);
      // The kernel is the installed one's own file, linked into the new version: the same inode.
      expect(fs.statSync(path.join(host.root, kernel)).ino).toBe(kernelInode);
      expect(fs.readFileSync(path.join(host.root, kernel), "utf8")).toBe(kernelText);
      const again = runCli(["install", "--host-root", host.root, "--artifacts", `dir:${rebuilt}`]);
      expect(again.stdout).toContain("Nothing to do: the node is as the plan wants it.");
      // Uninstall still takes everything back.
      expect(runCli(["uninstall", "--host-root", host.root]).status).toBe(0);
      expect(fs.existsSync(path.join(host.root, "opt/kata/versions"))).toBe(false);
    } finally {
      server.close();
      fs.rmSync(rebuilt, { recursive: true, force: true });
    }
  });
});

describe("an admin's files in Kata's places (/opt/kata/bin, share/kata-containers: links into the version)", () => {
  it("an upgrade says and keeps them (versions/<id>.kept); installs go on beside them; uninstall keeps them too, byte for byte", async () => {
    const host = await answeringHost();
    const cli = (...args: string[]) => runCli([...args, "--host-root", host.root]);
    const rebuilt = artifactDir();
    fs.writeFileSync(path.join(rebuilt, "base/opt/kata/bin/containerd-shim-kata-v2"), "a rebuilt shim\n");
    try {
      expect(cli("install", "--artifacts", `dir:${artifacts}`).status).toBe(0);
      const version = fs.readlinkSync(path.join(host.root, "opt/kata/current")).replace("versions/", "");
      const tool = path.join(host.root, "opt/kata/bin/my-tool");
      const image = path.join(host.root, "opt/kata/share/kata-containers/custom.img");
      fs.writeFileSync(tool, "#!/bin/sh\necho mine\n", { mode: 0o755 });
      fs.writeFileSync(image, "IMG");
      fs.mkdirSync(path.join(host.root, "opt/kata/bin/empty-of-mine"));
      const kept = [
        `/opt/kata/versions/${version}.kept/bin/empty-of-mine`,
        `/opt/kata/versions/${version}.kept/bin/my-tool`,
        `/opt/kata/versions/${version}.kept/share/kata-containers/custom.img`,
      ];
      // Nothing to switch: the plan has nothing to say of them.
      expect(cli("plan", "--json", "--artifacts", `dir:${artifacts}`).stdout).not.toContain(
        "kept-in-version",
      );
      const plan = cli("plan", "--json", "--artifacts", `dir:${rebuilt}`);
      expect(JSON.parse(plan.stdout).checks).toContainEqual(
        expect.objectContaining({
          id: "kept-in-version",
          severity: "warning",
          message: `not kata-install's, in the installed version this install replaces: /opt/kata/bin/empty-of-mine (kept as ${kept[0]}), /opt/kata/bin/my-tool (kept as ${kept[1]}), /opt/kata/share/kata-containers/custom.img (kept as ${kept[2]}): kept, and no longer reached through /opt/kata's links once the version is replaced`,
        }),
      );
      const upgrade = cli("install", "--artifacts", `dir:${rebuilt}`);
      expect(upgrade.status, upgrade.stderr).toBe(0);
      expect(upgrade.stdout).toContain(
        `  kept ${kept[1]}: not kata-install's (it was /opt/kata/bin/my-tool); the version it was in is gone\n`,
      );
      // Kept with their bytes and mode, the admin's empty directory too; nothing else of the old version.
      const at = (entry: string) => path.join(host.root, entry);
      expect(fs.readFileSync(at(kept[1] as string), "utf8")).toBe("#!/bin/sh\necho mine\n");
      expect(fs.statSync(at(kept[1] as string)).mode & 0o777).toBe(0o755);
      expect(fs.readFileSync(at(kept[2] as string), "utf8")).toBe("IMG");
      expect(fs.existsSync(at(`/opt/kata/versions/${version}`))).toBe(false);
      const left = fs.readdirSync(at(`/opt/kata/versions/${version}.kept`), { recursive: true }).map(String);
      expect(left.sort()).toEqual([
        "bin",
        "bin/empty-of-mine",
        "bin/my-tool",
        "share",
        "share/kata-containers",
        "share/kata-containers/custom.img",
      ]);
      // Installs go on beside what was kept: the DaemonSet pod's restart, the old release again.
      expect(cli("install", "--artifacts", `dir:${rebuilt}`).stdout).toContain("Nothing to do");
      const back = cli("install", "--artifacts", `dir:${artifacts}`);
      expect(back.status, back.stderr).toBe(0);
      expect(fs.readlinkSync(at("/opt/kata/current"))).toBe(`versions/${version}`);
      // The admin puts one in the version now current: uninstall (and its dry run) keep it in a
      // .kept of its own, and a new install goes on beside them.
      fs.writeFileSync(path.join(host.root, "opt/kata/bin/other-tool"), "x");
      const keptAgain = `/opt/kata/versions/${version}.kept.1/bin/other-tool`;
      const said = `${keptAgain}: not kata-install's (reached as /opt/kata/bin/other-tool while Kata was installed): kept there\n`;
      expect(cli("uninstall", "--dry-run").stdout).toContain(`  would leave ${said}`);
      const uninstall = cli("uninstall");
      expect(uninstall.status, uninstall.stderr).toBe(0);
      expect(uninstall.stdout).toContain(`  left ${said}`);
      expect(fs.readFileSync(at(keptAgain), "utf8")).toBe("x");
      expect(fs.readFileSync(at(kept[1] as string), "utf8")).toBe("#!/bin/sh\necho mine\n");
      expect(fs.existsSync(at("/opt/kata/current"))).toBe(false);
      expect(fs.existsSync(at("/opt/kata/bin"))).toBe(false);
      const again = cli("install", "--artifacts", `dir:${artifacts}`);
      expect(again.status, again.stderr).toBe(0);
    } finally {
      host.close();
      fs.rmSync(rebuilt, { recursive: true, force: true });
    }
  });
});

describe("an upgrade cut short, or rolled back, and tried again", () => {
  it("the retry installs the whole new release: the rollback put back where the old version came from", async () => {
    const newer = artifactDir("4.1.0");
    try {
      for (const cut of ["switch:before", "switch:after", "a write after the switch"]) {
        const host = await answeringHost(intelContainerd16());
        const install = (source: string, env: Record<string, string> = {}) =>
          runCli(["install", "--host-root", host.root, "--artifacts", `dir:${source}`], { env });
        expect(install(artifacts).status).toBe(0);
        // Killed at the switch, or failed after it (the runtime's restart), and rolled back.
        const failed =
          cut === "a write after the switch"
            ? install(newer, { KATA_INSTALL_FAULT: "write:1@configuration-qemu" })
            : install(newer, { KATA_INSTALL_CRASH_AT: cut });
        expect(failed.status, cut).not.toBe(0);
        const retry = install(newer);
        expect(retry.status, `${cut}: ${retry.stderr}`).toBe(0);
        expect(retry.stdout, cut).toMatch(
          /^Artifacts: version \w{16} \(\d+ files, \d+ bytes\) switched in\.$/m,
        );
        expect(retry.stdout, cut).not.toContain("taken from the node");
        for (const file of ["bin/containerd-shim-kata-v2", "bin/qemu-system-x86_64"])
          expect(fs.readFileSync(path.join(host.root, "opt/kata", file), "utf8"), `${cut}: ${file}`).toBe(
            sampleContent(file.includes("qemu") ? "qemu" : "base", file, "4.1.0"),
          );
        const plan = runCli([
          "plan",
          "--host-root",
          host.root,
          "--artifacts",
          `dir:${newer}`,
          "--detailed-exitcode",
        ]);
        expect(plan.status, `${cut}: ${plan.stdout.slice(-400)}`).toBe(0);
        host.close();
      }
    } finally {
      fs.rmSync(newer, { recursive: true, force: true });
    }
  });
});

describe("the node's own overrides file, the node seen under another root", () => {
  it("the drop-in names the file by its path on the node: the same node under another root plans no change", async () => {
    const spec = intelContainerd16();
    spec.files = {
      ...spec.files,
      "/etc/kata-containers/kata-install.toml": '[config.qemu]\n"hypervisor.qemu.default_vcpus" = 2\n',
    };
    const host = await answeringHost(spec);
    expect(runCli(["install", "--artifacts", `dir:${artifacts}`, "--host-root", host.root]).status).toBe(0);
    const dropIn = "opt/kata/share/defaults/kata-containers/runtimes/qemu/config.d/50-kata-install.toml";
    const text = fs.readFileSync(path.join(host.root, dropIn), "utf8");
    expect(text).toContain(
      '# overrides /etc/kata-containers/kata-install.toml:2 config.qemu."hypervisor.qemu.default_vcpus"\ndefault_vcpus = 2\n',
    );
    expect(text).not.toContain(host.root);
    // The same node mounted elsewhere (a DaemonSet's /host, or the node itself): nothing to write.
    const elsewhere = `${host.root}-elsewhere`;
    execFileSync("cp", ["-a", host.root, elsewhere]); // devices, sockets and links as they are
    try {
      const args = ["--artifacts", `dir:${artifacts}`, "--host-root", elsewhere, "--json"];
      const plan = JSON.parse(runCli(["plan", ...args]).stdout);
      expect(plan.changes).toEqual([]);
      // Messages on this machine still name where the file is here.
      const explained = runCli(["explain", "--host-root", elsewhere, "qemu:default_vcpus"]);
      expect(explained.stdout).toContain(
        `set by overrides ${elsewhere}/etc/kata-containers/kata-install.toml:2`,
      );
    } finally {
      fs.rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});

describe("install refuses, and writes nothing", () => {
  it("a node with preflight errors", () => {
    const host = buildHost(nestedVmWithoutVmx());
    const before = snapshot(host.root);
    const run = runCli(["install", "--host-root", host.root, "--artifacts", `dir:${artifacts}`]);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(
      /kata-install: preflight errors: .*nested-virtualization \(.*Nothing was installed/,
    );
    expect(snapshot(host.root)).toEqual(before);
  });

  it("artifacts to pull but no source; an unknown source kind", () => {
    const host = buildHost(intelContainerd16());
    const before = snapshot(host.root);
    const run = runCli(["install", "--host-root", host.root]);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(
      /preflight errors: artifact-source \(artifacts to install \(base, .*\) but no source to pull them from, nor a Kata release to read the shims' configuration from\)/,
    );
    expect(snapshot(host.root)).toEqual(before);
    expect(runCli(["install", "--host-root", host.root, "--artifacts", "ftp://x"]).stderr).toMatch(
      /expected registry:HOST\/REPOSITORY .* or dir:DIR/,
    );
  });

  it("--detailed-exitcode without --dry-run (a script that meant a plan); a --runtime-timeout the install would refuse, with --dry-run too", () => {
    const host = buildHost(intelContainerd16());
    const before = snapshot(host.root);
    const source = ["--host-root", host.root, "--artifacts", `dir:${artifacts}`];
    const run = runCli(["install", "--detailed-exitcode", ...source]);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(
      /^kata-install: --detailed-exitcode goes with --dry-run .*Nothing was installed/m,
    );
    expect(snapshot(host.root)).toEqual(before);
    // With --dry-run it is plan's exit code: changes pending.
    expect(runCli(["install", "--dry-run", "--detailed-exitcode", ...source]).status).toBe(2);
    for (const bad of ["abc", "0", "-1", " "]) {
      const dry = runCli(["install", "--dry-run", "--runtime-timeout", bad, ...source]);
      expect(dry.status, bad).toBe(1);
      expect(dry.stderr).toContain(`--runtime-timeout ${bad}: expected a number of seconds`);
    }
    expect(snapshot(host.root)).toEqual(before);
  });

  it("a node whose runtime cannot be restarted (no systemctl): said by preflight and plan; not to be ignored, and nothing written", async () => {
    const host = await answeringHost({ ...intelContainerd16(), systemctl: false });
    const before = snapshot(host.root);
    const error =
      "containerd is restarted through systemctl once its configuration changes, and the host has no systemctl in its PATH (/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin): the runtime would keep its old configuration, and install writes nothing\n";
    const preflight = runCli(["preflight", "--host-root", host.root]);
    expect(preflight.status).toBe(1);
    expect(preflight.stdout).toMatch(/\[ERROR\] +restart-command +containerd is restarted/);
    expect(preflight.stdout).toContain(error);
    const plan = runCli(["plan", "--host-root", host.root, "--artifacts", `dir:${artifacts}`]);
    expect(plan.status).toBe(1);
    expect(plan.stdout).toContain(`[ERROR] restart-command: ${error}`);
    const refused = runCli(["install", "--host-root", host.root, "--artifacts", `dir:${artifacts}`]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/preflight errors: restart-command \(containerd is restarted through/);
    expect(snapshot(host.root)).toEqual(before);
    // Not a check to ignore: a restart that cannot start would leave the runtime on what it had.
    const ignored = runCli([
      "install",
      "--host-root",
      host.root,
      "--artifacts",
      `dir:${artifacts}`,
      "--ignore-preflight-errors",
      "all",
    ]);
    expect(ignored.status).toBe(1);
    expect(ignored.stderr).toMatch(/preflight errors: restart-command \(.*\(they cannot be ignored\)/);
    expect(snapshot(host.root)).toEqual(before);
    host.close();
    // The same node with systemctl: the check passes.
    const withSystemctl = buildHost(intelContainerd16());
    expect(runCli(["preflight", "--host-root", withSystemctl.root]).stdout).toMatch(
      /\n {2}\[ok\] +restart-command\n/,
    );
  });
});

describe("install from an OCI layout", () => {
  it("installs from images tagged by artifact name, and uninstalls back to the original tree", async () => {
    const host = await answering();
    const original = snapshot(host.root);
    const layout = ociLayoutFrom(artifacts);
    try {
      const run = runCli(["install", "--host-root", host.root, "--artifacts", `oci-layout:${layout}`]);
      expect(run.status, run.stderr).toBe(0);
      expect(fs.readFileSync(path.join(host.root, "opt/kata/bin/qemu-system-x86_64"), "utf8")).toBe(
        sampleContent("qemu", "bin/qemu-system-x86_64", "3.9.0"),
      );
      const undone = runCli(["uninstall", "--host-root", host.root]);
      expect(undone.status, undone.stderr).toBe(0);
      expect(snapshot(host.root)).toEqual(original);
    } finally {
      fs.rmSync(layout, { recursive: true, force: true });
      host.close();
    }
  });
});

describe("an OCI layout copied in part", () => {
  // A layout `artifacts split` made: its manifests list the files, so a plan reads no layer.
  const { dir, tarballs } = buildRelease("x86_64");
  const layout = path.join(dir, "layout");
  beforeAll(() => {
    const split = runCli(["artifacts", "split", ...tarballs, "--out", `oci-layout:${layout}`]);
    expect(split.status, split.stderr).toBe(0);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  /** A copy of the layout without the layer of `missing`, and that of `short` cut to 100 bytes. */
  const broken = (name: string, missing: string, short?: string) => {
    const copy = path.join(dir, name);
    fs.cpSync(layout, copy, { recursive: true });
    const blobs = path.join(copy, "blobs/sha256");
    const index = JSON.parse(fs.readFileSync(path.join(copy, "index.json"), "utf8"));
    const layerOf = (artifact: string): string => {
      const tagged = index.manifests.find(
        (m: { annotations: Record<string, string> }) =>
          m.annotations["org.opencontainers.image.ref.name"] === artifact,
      );
      const manifest = JSON.parse(fs.readFileSync(path.join(blobs, tagged.digest.slice(7)), "utf8"));
      return manifest.layers[0].digest as string;
    };
    const layers = { missing: layerOf(missing), short: short === undefined ? "" : layerOf(short) };
    fs.rmSync(path.join(blobs, layers.missing.slice(7)));
    if (short !== undefined) fs.truncateSync(path.join(blobs, layers.short.slice(7)), 100);
    return { copy, layers };
  };

  it("a layer blob missing or cut short is a plan error naming it, and install refuses before pulling any", () => {
    const host = buildHost(intelContainerd16());
    const before = snapshot(host.root);
    expect(
      runCli(["plan", "--host-root", host.root, "--artifacts", `oci-layout:${layout}`]).stdout,
    ).not.toContain("artifact-blobs");
    const { copy, layers } = broken("part", "qemu", "guest-kernel");
    const args = ["--host-root", host.root, "--artifacts", `oci-layout:${copy}`];
    const plan = runCli(["plan", ...args]);
    expect(plan.status).toBe(1);
    expect(plan.stdout).toContain(
      `[ERROR] artifact-blobs: oci-layout:${copy} cannot give every artifact to install: guest-kernel: layer ${layers.short} is 100 bytes, not the `,
    );
    expect(plan.stdout).toContain(`; qemu: layer ${layers.missing} is missing`);
    const run = runCli(["install", ...args]);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/preflight errors: artifact-blobs \(/);
    expect(snapshot(host.root)).toEqual(before);
  });

  it("so is the layer of a repair pull (a file of the installed version removed by hand)", async () => {
    const host = await answering();
    try {
      const installed = runCli(["install", "--host-root", host.root, "--artifacts", `oci-layout:${layout}`]);
      expect(installed.status, installed.stderr).toBe(0);
      fs.rmSync(path.join(host.root, "opt/kata/current/bin/qemu-system-x86_64"));
      const { copy, layers } = broken("repair", "qemu");
      const plan = runCli(["plan", "--host-root", host.root, "--artifacts", `oci-layout:${copy}`]);
      expect(plan.stdout).toMatch(/\n {2}pull-artifact qemu: repair: /);
      expect(plan.stdout).toContain(
        `[ERROR] artifact-blobs: oci-layout:${copy} cannot give every artifact to install: qemu: layer ${layers.missing} is missing`,
      );
    } finally {
      host.close();
    }
  });
});

describe("a file of the installed version that a repair could not put back", () => {
  it("a directory where its file was, a link where its directory was: the plan's artifact-paths error says so, and install refuses with nothing changed", async () => {
    const host = await answering();
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-elsewhere-"));
    try {
      const cli = (...args: string[]) =>
        runCli([...args, "--host-root", host.root, "--artifacts", `dir:${artifacts}`]);
      expect(cli("install").status).toBe(0);
      const version = fs.readlinkSync(path.join(host.root, "opt/kata/current"));
      const qemu = path.join(host.root, "opt/kata", version, "bin/qemu-system-x86_64");
      fs.rmSync(qemu);
      fs.mkdirSync(qemu);
      fs.writeFileSync(path.join(qemu, "notes"), "the admin's");
      const plan = cli("plan");
      expect(plan.status).toBe(1);
      expect(plan.stdout).toContain(
        `qemu: hypervisor.qemu.path = /opt/kata/bin/qemu-system-x86_64: not a regular file, and it cannot be put back: /opt/kata/${version}/bin/qemu-system-x86_64 is a directory where kata-install's file was; move that away (it is not kata-install's), then install again`,
      );
      expect(plan.stdout).not.toContain("repair:");
      const before = snapshot(host.root);
      const install = cli("install");
      expect(install.status).toBe(1);
      expect(install.stderr).toMatch(
        /preflight errors: artifact-paths \(.*is a directory where kata-install's file was/,
      );
      expect(snapshot(host.root)).toEqual(before);
      // Moved away, the repair is planned and done again.
      fs.rmSync(qemu, { recursive: true });
      const kc = path.join(host.root, "opt/kata", version, "share/kata-containers");
      fs.renameSync(kc, path.join(elsewhere, "kc"));
      fs.symlinkSync(path.join(elsewhere, "kc"), kc);
      const linked = cli("plan");
      expect(linked.status).toBe(1);
      expect(linked.stdout).toContain(
        `cannot be put back: /opt/kata/${version}/share/kata-containers is a link (to ${path.join(elsewhere, "kc")}) where kata-install's directory was`,
      );
      fs.rmSync(kc);
      fs.renameSync(path.join(elsewhere, "kc"), kc);
      expect(cli("plan").stdout).toMatch(/\n {2}pull-artifact qemu: repair: /);
      const repaired = cli("install");
      expect(repaired.status, repaired.stderr).toBe(0);
      expect(repaired.stdout).toMatch(/were not as installed: put back\./);
    } finally {
      host.close();
      fs.rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});

describe("an install given --shims, then a run without", () => {
  it("says the flag is not remembered, and what the rules' shims change; a pin, or an install without, quiets it", async () => {
    const host = await answering();
    try {
      const at = ["--host-root", host.root, "--artifacts", `dir:${artifacts}`];
      expect(runCli(["install", ...at, "--shims", "qemu"]).status).toBe(0);
      const warning =
        "shims-unpinned: the last install was given --shims qemu; this run names no shims, so it installs the ones the rules choose: adds clh, clh-runtime-rs, dragonball, qemu-runtime-rs";
      expect(runCli(["plan", ...at]).stdout).toContain(`[WARNING] ${warning}\n`);
      // A pin, however given, is what this run installs: nothing to say.
      expect(runCli(["plan", ...at, "--shims", "qemu"]).stdout).not.toContain("shims-unpinned");
      expect(runCli(["plan", ...at], { env: { SHIMS: "qemu" } }).stdout).not.toContain("shims-unpinned");
      // A no-op install keeps the record; one that changes the node without --shims drops it.
      expect(runCli(["install", ...at, "--shims", "qemu"]).stdout).toContain("Nothing to do");
      const unpinned = runCli(["install", ...at]);
      expect(unpinned.status, unpinned.stderr).toBe(0);
      expect(unpinned.stderr).toContain(`kata-install: warning: ${warning}\n`);
      expect(runCli(["plan", ...at]).stdout).not.toContain("shims-unpinned");
    } finally {
      host.close();
    }
  });
});

describe("a runtime that does not come back after its restart", () => {
  it("the run is rolled back, the restart on the old files owed and shown; the next install pays it", async () => {
    // systemctl succeeds, but nothing answers on containerd's socket.
    const spec = intelContainerd16();
    spec.commands = { ...spec.commands, "/usr/bin/systemctl": "exit 0" };
    const host = buildHost(spec);
    const socket = path.join(host.root, "run/containerd/containerd.sock");
    const original = snapshot(host.root);
    const run = runCli([
      "install",
      "--host-root",
      host.root,
      "--artifacts",
      `dir:${artifacts}`,
      "--runtime-timeout",
      "0.3",
    ]);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(
      /\nkata-install: containerd after systemctl restart: no answer on \/run\/containerd\/containerd\.sock within 300 ms \(\w+\)\. Everything this run changed was rolled back: containerd's configuration and Kata's files are as they were before it; containerd was restarted on them too and did not answer either, so it may still run on the configuration that was rolled back\. A restart of containerd is still owed: `kata-install plan --host-root \S+` shows it, and the next `kata-install install --host-root \S+` does it \(or restart containerd yourself once it is mended\)\.\n$/,
    );
    // Byte for byte as before, but for the journal that says a restart is owed: the runtime may
    // have loaded the files that were rolled back, and its second restart did not answer either.
    const after = snapshot(host.root);
    const ours = Object.keys(after).filter((p) => !(p in original));
    expect(ours.sort()).toEqual(["opt", "opt/kata", "opt/kata/.install", "opt/kata/.install/journal.json"]);
    for (const p of Object.keys(original)) expect(after[p], p).toEqual(original[p]);
    const plan = runCli(["plan", "--host-root", host.root]);
    expect(plan.stdout).toMatch(
      /\n {2}restart-runtime containerd: .*; the restart an earlier run failed to finish is still owed, too\n/,
    );
    // The runtime answers again: the next install does the work and the restart owed, once.
    fs.rmSync(socket);
    const server = await criStandIn(socket);
    try {
      const again = runCli(["install", "--host-root", host.root, "--artifacts", `dir:${artifacts}`]);
      expect(again.status, again.stderr).toBe(0);
      expect(again.stdout).toContain("Runtime: restarted containerd, and it serves the Kata handlers.");
      expect(runCli(["plan", "--host-root", host.root, "--detailed-exitcode"]).status).toBe(0);
    } finally {
      server.close();
    }
  });
});

describe("a runtime that does not come back on the new files, but does on the old ones", () => {
  it("the run is rolled back, and the error says the runtime runs on its old configuration again", () => {
    // The first restart finds nothing on the socket; the second (after the rollback) starts a listener.
    const spec = intelContainerd16();
    spec.commands = {
      ...spec.commands,
      "/usr/bin/systemctl": [
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion
        'root="${0%/usr/bin/systemctl}"',
        'n=$(cat "$root/restarts" 2>/dev/null || echo 0); n=$((n + 1)); echo "$n" > "$root/restarts"',
        'if [ "$n" -ge 2 ]; then',
        '  sock="$root/run/containerd/containerd.sock"; rm -f "$sock"',
        "  python3 -c 'import socket, sys, time; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(); time.sleep(4)' \"$sock\" >/dev/null 2>&1 &",
        '  while [ ! -S "$sock" ]; do sleep 0.05; done',
        "fi",
        "exit 0",
      ].join("\n"),
    };
    const host = buildHost(spec);
    const config = path.join(host.root, "etc/containerd/config.toml");
    const before = fs.readFileSync(config);
    const run = runCli([
      "install",
      "--host-root",
      host.root,
      "--artifacts",
      `dir:${artifacts}`,
      "--runtime-timeout",
      "1",
    ]);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(
      /\nkata-install: containerd after systemctl restart: no answer on \/run\/containerd\/containerd\.sock within 1 s \(\w+\)\. Everything this run changed was rolled back: containerd's configuration and Kata's files are as they were before it, and containerd was restarted on them and answers\. Find why it did not come back on the new one \(`journalctl -u containerd`\), then install again\.\n$/,
    );
    expect(fs.readFileSync(path.join(host.root, "restarts"), "utf8")).toBe("2\n");
    expect(fs.readFileSync(config)).toEqual(before);
    // Nothing is owed: the restart on the old files answered.
    expect(runCli(["plan", "--host-root", host.root]).stdout).not.toMatch(/still owed/);
  });
});

describe("killed right after the runtime restarted on the new files, before they were committed", () => {
  it("the next plan shows the restart owed; the next install rolls back, applies again and restarts", async () => {
    const host = await answering();
    try {
      const cut = runCli(["install", "--host-root", host.root, "--artifacts", `dir:${artifacts}`], {
        env: { KATA_INSTALL_CRASH_AT: "restart:after" },
      });
      expect(cut.status).toBeNull(); // killed
      // The files are rolled back by the next run; the runtime may have loaded them: it is owed a restart.
      const plan = runCli(["plan", "--host-root", host.root]);
      expect(plan.stdout).toMatch(
        /restart-runtime containerd: .*(the restart is still owed|is still owed, too)/,
      );
      // And that it is a plan of the node as the cut left it, which the next install rolls back first.
      expect(plan.stdout).toMatch(
        /\n {2}\[WARNING\] cut-short: an install here was cut short .*: the next install rolls it back first/,
      );
      const again = runCli(["install", "--host-root", host.root, "--artifacts", `dir:${artifacts}`]);
      expect(again.status, again.stderr).toBe(0);
      expect(again.stdout).toContain("An earlier install had been cut short: it was rolled back first.");
      expect(again.stdout).toContain("Runtime: restarted containerd, and it serves the Kata handlers.");
      expect(runCli(["plan", "--host-root", host.root, "--detailed-exitcode"]).status).toBe(0);
    } finally {
      host.close();
    }
  });
});

/** A first install killed right after containerd restarted on Kata's handlers; the tree from before it. */
async function cutAfterRestart() {
  const spec = intelContainerd16();
  spec.commands = { ...spec.commands, "/usr/bin/systemctl": SYSTEMCTL };
  spec.files = { ...spec.files, "/var/log/.keep": "" };
  const host = await answeringHost(spec);
  const original = withoutLog(snapshot(host.root));
  const cut = runCli(["install", "--host-root", host.root, "--artifacts", `dir:${artifacts}`], {
    env: { KATA_INSTALL_CRASH_AT: "restart:after" },
  });
  expect(cut.status).toBeNull();
  return { host, original };
}

describe("uninstall after a first install was cut short", () => {
  it("says it rolled the install back, and pays the restart the cut left owed", async () => {
    const { host, original } = await cutAfterRestart();
    try {
      const calls = () => fs.readFileSync(path.join(host.root, "var/log/systemctl.calls"), "utf8");
      expect(calls()).toBe("restart containerd\n");
      expect(runCli(["uninstall", "--dry-run", "--host-root", host.root]).stdout).toMatch(
        /^An install was cut short: uninstall would roll it back first\.\n/,
      );
      const run = runCli(["uninstall", "--host-root", host.root]);
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout).toBe(
        "An earlier install had been cut short: it was rolled back first. Nothing else was installed.\nRuntime: restarted containerd, and it answers.\n",
      );
      // containerd may hold the handlers it loaded: it is restarted on the node's own files again.
      expect(calls()).toBe("restart containerd\nrestart containerd\n");
      // But for /run/lock, which every node has and this bare tree lacked: the killed run made it,
      // and no later run can know it was not the node's.
      const { "run/lock": made, ...after } = withoutLog(snapshot(host.root));
      expect(made).toBe("dir 755 0:0");
      expect(after).toEqual(original);
    } finally {
      host.close();
    }
  });
});

describe("uninstall --json after a first install was cut short", () => {
  it("says what the text says: the rollback, and the restart it paid", async () => {
    const { host } = await cutAfterRestart();
    try {
      const run = runCli(["uninstall", "--json", "--host-root", host.root]);
      expect(run.status, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({
        recovered: true,
        restarted: { kind: "restart-runtime", target: "containerd" },
        message:
          "An earlier install had been cut short: it was rolled back first. Nothing else was installed.\nRuntime: restarted containerd, and it answers.",
      });
    } finally {
      host.close();
    }
  });
});

describe("uninstall after a first install was cut short before it wrote anything", () => {
  it("says it rolled it back, and that nothing of kata-install's is left", async () => {
    const host = await answering();
    try {
      const cut = runCli(["install", "--host-root", host.root, "--artifacts", `dir:${artifacts}`], {
        env: { KATA_INSTALL_CRASH_AT: "stage:begin" },
      });
      expect(cut.status).toBeNull();
      const run = runCli(["uninstall", "--host-root", host.root]);
      expect(run.status, run.stderr).toBe(0);
      // Not "nothing to uninstall": the rollback took the staged artifacts away.
      expect(run.stdout).toBe(
        "An earlier install had been cut short: it was rolled back first. Nothing of kata-install's is left installed.\n",
      );
      expect(fs.existsSync(path.join(host.root, "opt/kata/.install/journal.json"))).toBe(false);
    } finally {
      host.close();
    }
  });
});

describe("two installs at once", () => {
  it("one waits for nothing: it fails clearly on the lock, or finds the work done; the node is one install's", async () => {
    const spec = intelContainerd16();
    spec.commands = { ...spec.commands, "/usr/bin/systemctl": "exit 0" };
    const host = buildHost(spec);
    const socket = path.join(host.root, "run/containerd/containerd.sock");
    fs.rmSync(socket);
    const server = await criStandIn(socket);
    try {
      const start = () =>
        new Promise<{ status: number | null; stderr: string }>((resolve) => {
          const child = spawn(process.execPath, [
            CLI,
            "install",
            "--host-root",
            host.root,
            "--artifacts",
            `dir:${artifacts}`,
          ]);
          let stderr = "";
          child.stderr.on("data", (d: Buffer) => (stderr += d));
          child.on("close", (status) => resolve({ status, stderr }));
        });
      const runs = await Promise.all([start(), start()]);
      expect(
        runs.some((r) => r.status === 0),
        runs.map((r) => r.stderr).join("\n---\n"),
      ).toBe(true);
      for (const r of runs.filter((x) => x.status !== 0)) {
        expect(r.stderr).toMatch(/another kata-install \(pid \d+\) is installing on this node/);
      }
      expect(runCli(["plan", "--host-root", host.root, "--detailed-exitcode"]).status).toBe(0);
    } finally {
      server.close();
    }
  });
});

describe("install from a registry", () => {
  it("pulls the artifact images by tag over HTTP on loopback, and installs them", async () => {
    const registry = await startRegistry();
    const layout = ociLayoutFrom(artifacts);
    try {
      pushLayout(layout, registry.host, "kata-containers", "3.9.0");
      const host = await answering();
      const run = runCli([
        "install",
        "--host-root",
        host.root,
        "--artifacts",
        `registry:${registry.host}/kata-containers`,
        "--artifacts-tag",
        "3.9.0",
      ]);
      host.close();
      expect(run.status, run.stderr).toBe(0);
      expect(fs.readFileSync(path.join(host.root, "opt/kata/libexec/virtiofsd"), "utf8")).toBe(
        sampleContent("virtiofsd", "libexec/virtiofsd", "3.9.0"),
      );
    } finally {
      await registry.stop();
      fs.rmSync(layout, { recursive: true, force: true });
    }
  });
});

describe("a file of the installed version rewritten in place, the same size, its mtime set back", () => {
  it("is not reused by the next upgrade: pulled again, the rewrite gone", async () => {
    const host = await answeringHost(intelContainerd16());
    const rebuilt = artifactDir();
    fs.writeFileSync(
      path.join(rebuilt, "base/opt/kata/bin/containerd-shim-kata-v2"),
      "a rebuilt shim binary\n",
    );
    const kernel = path.join(host.root, "opt/kata/share/kata-containers/vmlinux.container");
    try {
      expect(runCli(["install", "--host-root", host.root, "--artifacts", `dir:${artifacts}`]).status).toBe(0);
      const shipped = fs.readFileSync(kernel);
      // Someone's bytes in Kata's kernel, as long as Kata's, with its times put back exactly
      // (touch -r from a copy that kept them): inode, size and mtime are what kata-install wrote.
      const times = `${kernel}.times`;
      execFileSync("cp", ["-p", kernel, times]);
      fs.writeFileSync(kernel, Buffer.alloc(shipped.length, "x"));
      execFileSync("touch", ["-r", times, kernel]);
      fs.rmSync(times);
      const upgrade = runCli(["install", "--host-root", host.root, "--artifacts", `dir:${rebuilt}`]);
      expect(upgrade.status, upgrade.stderr).toBe(0);
      expect(fs.readFileSync(kernel)).toEqual(shipped);
    } finally {
      fs.rmSync(rebuilt, { recursive: true, force: true });
    }
  });
});
