// What kata-install promises an admin, each finding of the attacks on it reproduced on a test host:
// the admin's text is never guessed at or lost, input errors are said as such (never "a bug"), and
// nothing on the host changes when an input is refused.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BLOCK_END } from "../../src/render/toml-edit.js";
import { answeringHost } from "../helpers/answering.js";
import { artifactDir } from "../helpers/artifacts.js";
import { runCli } from "../helpers/cli.js";
import { removeTestHosts } from "../helpers/test-host.js";
import { snapshot } from "../helpers/tree.js";

afterAll(removeTestHosts);
const artifacts = artifactDir();
afterAll(() => fs.rmSync(artifacts, { recursive: true, force: true }));

/** An Intel/containerd 1.6 test host whose systemctl succeeds and whose socket answers. */
async function node() {
  const host = await answeringHost();
  const cli = (...args: string[]) => runCli([...args, "--host-root", host.root]);
  return { ...host, cli, config: path.join(host.root, "etc/containerd/config.toml") };
}

describe("kata-install's end marker removed and an admin table appended after it", async () => {
  const host = await node();

  it("uninstall refuses naming the file and line and changes nothing; install refuses the same way", () => {
    expect(host.cli("install", "--artifacts", `dir:${artifacts}`).status).toBe(0);
    const text = fs.readFileSync(host.config, "utf8");
    fs.writeFileSync(
      host.config,
      `${text.replace(`${BLOCK_END}\n`, "")}\n[plugins.admin]\n  keep = "mine"\n`,
    );
    const before = snapshot(host.root);
    const uninstall = host.cli("uninstall");
    expect(uninstall.status).toBe(1);
    expect(uninstall.stderr).toMatch(
      /^kata-install: \/etc\/containerd\/config\.toml: kata-install's begin marker \(line \d+\) has no end marker: restore kata-install's markers/,
    );
    expect(uninstall.stderr).not.toContain("bug");
    expect(snapshot(host.root)).toEqual(before);
    const install = host.cli("install", "--artifacts", `dir:${artifacts}`);
    expect(install.status).toBe(1);
    expect(install.stderr).toMatch(
      /config\.toml: kata-install's begin marker \(line \d+\) has no end marker/,
    );
    expect(install.stderr).not.toContain("bug");
    expect(snapshot(host.root)).toEqual(before);
  });
});

describe("kata-install's two markers taken out of config.toml (a tool rewrote it), its handlers left", async () => {
  const host = await node();

  it("uninstall and its dry run refuse, naming the handler tables' lines, and change nothing; with them gone too, uninstall says so", () => {
    expect(host.cli("install", "--artifacts", `dir:${artifacts}`).status).toBe(0);
    const installed = fs.readFileSync(host.config, "utf8");
    const unmarked = installed
      .split("\n")
      .filter((line) => !line.startsWith("# >>> kata-install") && !line.startsWith("# <<< kata-install"))
      .join("\n");
    fs.writeFileSync(host.config, unmarked);
    const before = snapshot(host.root);
    const handlerLine = unmarked.split("\n").findIndex((line) => /runtimes\.kata-qemu\]/.test(line)) + 1;
    expect(handlerLine).toBeGreaterThan(0);
    for (const args of [["uninstall", "--dry-run"], ["uninstall"]]) {
      const run = host.cli(...args);
      expect(run.status, args.join(" ")).toBe(1);
      expect(run.stderr).toMatch(
        new RegExp(
          `^kata-install: /etc/containerd/config\\.toml: kata-install's block markers are gone, but the runtime handlers it wrote are still there \\(.*kata-qemu at line ${handlerLine}[,)]`,
          "m",
        ),
      );
      expect(snapshot(host.root)).toEqual(before);
    }
    // The admin takes the handlers out by hand too: nothing of kata-install's is left in the file,
    // and uninstall says that, rather than that it removed a block.
    const original = unmarked
      .split("\n")
      .filter((_, i, lines) => !lines.slice(0, i + 1).some((l) => /runtimes\.kata-/.test(l)))
      .join("\n");
    fs.writeFileSync(host.config, `${original.trimEnd()}\n`);
    const dry = host.cli("uninstall", "--dry-run");
    expect(dry.status).toBe(0);
    expect(dry.stdout).toContain("kata-install's block already taken out of it");
    const uninstall = host.cli("uninstall");
    expect(uninstall.status).toBe(0);
    expect(uninstall.stdout).toMatch(
      /left \/etc\/containerd\/config\.toml: edited after the install, kata-install's block already taken out of it: nothing of kata-install's left to remove/,
    );
    expect(fs.readFileSync(host.config, "utf8")).toBe(`${original.trimEnd()}\n`);
  });
});

describe("garbage in config.toml", async () => {
  const host = await node();

  it("is the admin's to fix, said with its line: not a bug, nothing written", () => {
    fs.writeFileSync(host.config, 'version = 2\n[plugins\nx = "\n');
    const before = snapshot(host.root);
    const plan = host.cli("plan");
    expect(plan.status).toBe(1);
    expect(plan.stderr).toMatch(
      /\/etc\/containerd\/config\.toml is not valid TOML \(.*line 2.*\): containerd cannot read it either/,
    );
    expect(plan.stderr).not.toContain("bug");
    expect(host.cli("install", "--artifacts", `dir:${artifacts}`).status).toBe(1);
    expect(snapshot(host.root)).toEqual(before);
  });
});

describe("a full disk under the prefix", async () => {
  const host = await node();
  const opt = path.join(host.root, "opt");
  beforeAll(() => {
    fs.mkdirSync(opt, { recursive: true });
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", opt]);
    // Room for the journal and a little more, not for the artifacts.
    fs.writeFileSync(path.join(opt, "filler"), Buffer.alloc(230 * 1024));
  });
  afterAll(() => execFileSync("umount", [opt]));

  it("install fails in one line naming where, and the node is as before: no temp file, no staging, no lock", () => {
    const before = snapshot(host.root);
    const run = host.cli("install", "--artifacts", `dir:${artifacts}`);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(
      /\nkata-install: cannot write .*: no space left on device \(ENOSPC\): free space on that file system, then run kata-install again\n$/,
    );
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(snapshot(host.root)).toEqual(before);
    expect(fs.existsSync(path.join(host.root, "run/lock/kata-install.lock"))).toBe(false);
  });
});

describe("host files are the host's, links followed inside the host root", async () => {
  const host = await node();

  it("the node's overrides file, a link to another file of the node, is read there", () => {
    const site = path.join(host.root, "etc/site/kata.toml");
    fs.mkdirSync(path.dirname(site), { recursive: true });
    fs.writeFileSync(site, 'shims = ["qemu"]\n');
    fs.mkdirSync(path.join(host.root, "etc/kata-containers"), { recursive: true });
    fs.symlinkSync("/etc/site/kata.toml", path.join(host.root, "etc/kata-containers/kata-install.toml"));
    const plan = host.cli("plan");
    expect(plan.stderr).not.toContain("cannot read");
    expect(plan.stdout).toMatch(/Shims:\n {2}\+ qemu: pinned by overrides .*etc\/site\/kata\.toml:1 shims\n/);
  });

  it("a host binary that is an absolute link runs the host's file, not this machine's", () => {
    const real = path.join(host.root, "opt/ctr/containerd");
    fs.mkdirSync(path.dirname(real), { recursive: true });
    fs.writeFileSync(real, '#!/bin/sh\necho "containerd github.com/containerd/containerd 1.6.99 "\n', {
      mode: 0o755,
    });
    fs.rmSync(path.join(host.root, "usr/bin/containerd"));
    fs.symlinkSync("/opt/ctr/containerd", path.join(host.root, "usr/bin/containerd"));
    const facts = JSON.parse(host.cli("facts", "--json").stdout);
    expect(facts.runtime.version).toBe("1.6.99");
  });
});

describe("files that are not files", async () => {
  const host = await node();

  it("a FIFO as config.toml: facts, plan and install answer at once, naming it; the lock is not left", () => {
    fs.rmSync(host.config);
    execFileSync("mkfifo", [host.config]);
    const facts = JSON.parse(host.cli("facts", "--json").stdout);
    expect(facts.runtime.configProblem).toBe("is a FIFO, not a regular file");
    const plan = host.cli("plan");
    expect(plan.status).toBe(1);
    expect(plan.stdout).toContain(
      "[ERROR] containerd-config-readable: /etc/containerd/config.toml: is a FIFO, not a regular file",
    );
    expect(plan.stdout).not.toContain("version 1 schema");
    const install = host.cli("install", "--artifacts", `dir:${artifacts}`);
    expect(install.status).toBe(1);
    expect(install.stderr).toContain("containerd-config-readable");
    expect(fs.existsSync(path.join(host.root, "run/lock/kata-install.lock"))).toBe(false);
  });

  it("a directory as config.toml is said to be one, not a version 1 schema", () => {
    fs.rmSync(host.config);
    fs.mkdirSync(host.config);
    const plan = host.cli("plan");
    expect(plan.stdout).toContain(
      "[ERROR] containerd-config-readable: /etc/containerd/config.toml: is a directory",
    );
    expect(plan.stdout).not.toContain("version 1 schema");
  });

  it("a link loop as config.toml is named, not taken for a missing file to create", () => {
    fs.rmSync(host.config, { recursive: true, force: true });
    fs.symlinkSync("/etc/containerd/loop.toml", host.config);
    fs.symlinkSync("/etc/containerd/config.toml", path.join(host.root, "etc/containerd/loop.toml"));
    const before = snapshot(host.root);
    const plan = host.cli("plan");
    expect(plan.stdout).toContain(
      "[ERROR] containerd-config-readable: /etc/containerd/config.toml: too many symbolic links",
    );
    expect(host.cli("install", "--artifacts", `dir:${artifacts}`).status).toBe(1);
    expect(snapshot(host.root)).toEqual(before);
  });

  it.each([
    ["its target's directory missing", false],
    ["its target's directory there", true],
  ])(
    "a dangling link as config.toml (%s): named by plan, refused by install, nothing written",
    (_name, dirThere) => {
      fs.rmSync(host.config, { recursive: true, force: true });
      for (const name of fs.readdirSync(path.dirname(host.config)))
        if (name.startsWith("loop")) fs.rmSync(path.join(path.dirname(host.config), name));
      fs.rmSync(path.join(host.root, "mnt"), { recursive: true, force: true });
      if (dirThere) fs.mkdirSync(path.join(host.root, "mnt/cfg-volume"), { recursive: true });
      fs.symlinkSync("/mnt/cfg-volume/containerd.toml", host.config);
      const before = snapshot(host.root);
      const plan = host.cli("plan");
      expect(plan.status).toBe(1);
      expect(plan.stdout).toContain(
        "[ERROR] containerd-config-readable: /etc/containerd/config.toml: is a symbolic link to /mnt/cfg-volume/containerd.toml, which does not exist",
      );
      const install = host.cli("install", "--artifacts", `dir:${artifacts}`);
      expect(install.status).toBe(1);
      expect(install.stderr).toContain("containerd-config-readable");
      expect(snapshot(host.root)).toEqual(before);
      expect(fs.readlinkSync(host.config)).toBe("/mnt/cfg-volume/containerd.toml");
    },
  );

  it("config.toml a link to a volume's file: install writes the file, uninstall gives it back byte for byte, the link stays the admin's", () => {
    fs.rmSync(host.config, { recursive: true, force: true });
    fs.rmSync(path.join(host.root, "mnt"), { recursive: true, force: true });
    const target = path.join(host.root, "mnt/cfg-volume/containerd.toml");
    fs.mkdirSync(path.dirname(target), { recursive: true });
    const original =
      'version = 2\n\n[plugins."io.containerd.grpc.v1.cri".containerd]\n  default_runtime_name = "runc"\n\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\n  runtime_type = "io.containerd.runc.v2"\n';
    fs.writeFileSync(target, original);
    fs.symlinkSync("/mnt/cfg-volume/containerd.toml", host.config);
    const install = host.cli("install", "--artifacts", `dir:${artifacts}`);
    expect(install.status, install.stderr).toBe(0);
    expect(fs.readlinkSync(host.config)).toBe("/mnt/cfg-volume/containerd.toml");
    expect(fs.readFileSync(target, "utf8")).toContain("kata");
    const uninstall = host.cli("uninstall");
    expect(uninstall.status, uninstall.stderr).toBe(0);
    expect(fs.readlinkSync(host.config)).toBe("/mnt/cfg-volume/containerd.toml");
    expect(fs.readFileSync(target, "utf8")).toBe(original);
    fs.rmSync(host.config);
  });

  it("a FIFO as the overrides file is refused by type, at once", () => {
    const fifo = path.join(host.root, "..", `${path.basename(host.root)}.fifo.toml`);
    execFileSync("mkfifo", [fifo]);
    const run = host.cli("plan", "--overrides", fifo);
    fs.rmSync(fifo);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("is a FIFO, not a regular file: it must be a TOML file");
  });
});

describe("a containerd config that is not UTF-8 text, or too large", () => {
  const cases: Array<[string, (config: string) => void, string]> = [
    [
      "Latin-1 bytes in a comment",
      (config) => fs.appendFileSync(config, Buffer.from("# caf\xe9 du mat\xe9riel\n", "latin1")),
      "is not valid UTF-8 text",
    ],
    [
      "5 MiB of comments",
      (config) => fs.appendFileSync(config, `${"# padding\n".repeat(5 << 17)}`),
      "is larger than 4194304 bytes",
    ],
  ];

  it.each(cases)(
    "%s: the plan says so by name; install refuses so on every run, never 'changed since the plan'",
    async (_name, spoil, said) => {
      const host = await node();
      spoil(host.config);
      const plan = host.cli("plan");
      expect(plan.status).toBe(1);
      expect(plan.stdout).toContain(
        `[ERROR] containerd-config-readable: /etc/containerd/config.toml: ${said}`,
      );
      const before = snapshot(host.root);
      for (let run = 0; run < 2; run++) {
        const install = host.cli(
          "install",
          "--artifacts",
          `dir:${artifacts}`,
          "--ignore-preflight-errors",
          "all",
        );
        expect(install.status).toBe(1);
        expect(install.stderr).toMatch(
          new RegExp(
            `\\nkata-install: /etc/containerd/config\\.toml ${said}: .*\\(nothing was written\\)\\n$`,
          ),
        );
        expect(install.stderr).not.toContain("changed since the plan");
        expect(snapshot(host.root)).toEqual(before);
      }
    },
  );
});
