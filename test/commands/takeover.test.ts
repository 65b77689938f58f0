// Taking over a node kata-deploy 4.1 installed, in place: its handlers keep their names (the
// cluster's RuntimeClasses point at them), its drop-ins and imports go in the same transaction that
// writes kata-install's, its /opt/kata becomes kata-install's versioned layout by renames that leave
// running VMs their open files, and uninstall then removes Kata without bringing back a line of
// kata-deploy's (no import left to dangle: kata-deploy's own incident #13141).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { parse } from "smol-toml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dig } from "../../src/detect/toml.js";
import { answeringHost } from "../helpers/answering.js";
import { artifactDir } from "../helpers/artifacts.js";
import { runCli } from "../helpers/cli.js";
import {
  deployHandler,
  KATA_DEPLOY_HEADER,
  kataDeployTree as kataDeployTreeOf,
} from "../helpers/kata-deploy-node.js";
import {
  amdSnpCrio,
  arm64Containerd20,
  CONTAINERD_V2_MAIN,
  intelContainerd16,
  k3sImportingDropIns,
} from "../helpers/nodes.js";
import { containerdOf } from "../helpers/real-tools.js";
import { type NodeSpec, removeTestHosts } from "../helpers/test-host.js";
import { snapshot } from "../helpers/tree.js";

afterAll(removeTestHosts);
const artifacts = artifactDir();
const armArtifacts = artifactDir("3.9.0", "aarch64");
afterAll(() => {
  for (const d of [artifacts, armArtifacts]) fs.rmSync(d, { recursive: true, force: true });
});

const HEADER = KATA_DEPLOY_HEADER;
const kataDeployTree = (root: string, shims: string[], prefix?: string) =>
  kataDeployTreeOf(artifacts, root, shims, prefix);

const ADMIN_HANDLER = `
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.kata-qemu-mylab]
  runtime_type = "io.containerd.kata-qemu-mylab.v2"
`;

/** The host, its socket answering, systemctl succeeding. */
async function nodeOf(spec: NodeSpec, edit: (root: string) => void) {
  const host = await answeringHost(spec, edit);
  const cli = (...args: string[]) => runCli([...args, "--host-root", host.root]);
  return { ...host, cli };
}

const read = (root: string, file: string) => fs.readFileSync(path.join(root, file), "utf8");

describe("a containerd 1.6 node kata-deploy installed (handlers in config.toml itself)", () => {
  let host: Awaited<ReturnType<typeof nodeOf>>;
  let adminOnly = "";
  beforeAll(async () => {
    host = await nodeOf(intelContainerd16(), (root) => {
      kataDeployTree(root, ["qemu"]);
      const config = path.join(root, "etc/containerd/config.toml");
      adminOnly = `${CONTAINERD_V2_MAIN}${ADMIN_HANDLER}`;
      fs.writeFileSync(config, `${adminOnly}\n${deployHandler("io.containerd.grpc.v1.cri", "qemu")}`);
      fs.writeFileSync(`${config}.bak`, CONTAINERD_V2_MAIN);
    });
  });

  it("facts recognise kata-deploy's install", () => {
    const facts = JSON.parse(host.cli("facts", "--json").stdout);
    expect(facts.kata).toMatchObject({
      managedBy: "kata-deploy",
      prefix: "/opt/kata",
      deploy: { shims: ["qemu"] },
    });
  });

  it("the plan is the takeover, in full", () => {
    const plan = host.cli("plan", "--artifacts", `dir:${artifacts}`, "--shims", "qemu");
    expect(plan.status, plan.stdout.slice(0, 600)).toBe(0);
    expect(plan.stdout).toMatch(
      /\n {2}take-over \/opt\/kata: kata-deploy's install \(shims qemu; 0 runtime drop-in\(s\)\) becomes kata-install's/,
    );
    expect(plan.stdout).toContain(
      "+++ b/opt/kata/share/defaults/kata-containers/runtimes/qemu/configuration-qemu.toml",
    );
  });

  it("without a pin, the shims beyond kata-deploy's are said to be new here", () => {
    const plan = host.cli("plan", "--artifacts", `dir:${artifacts}`);
    expect(plan.status, plan.stdout.slice(0, 600)).toBe(0);
    expect(plan.stdout).toMatch(
      /\n {2}\+ clh: .* — new here: kata-deploy served only qemu \(pin the shims to keep its set\)\n/,
    );
    expect(plan.stdout).toMatch(/\n {2}\+ qemu: QEMU with the Go runtime[^\n—]*\n/);
  });

  it("install: one definition per handler, the admin's kata-qemu-mylab kept, a running VM's open binary still readable", () => {
    // A "running VM" holds kata-deploy's qemu open.
    const qemu = path.join(host.root, "opt/kata/bin/qemu-system-x86_64");
    const bytes = fs.readFileSync(qemu);
    const fd = fs.openSync(qemu, "r");
    try {
      const run = host.cli("install", "--artifacts", `dir:${artifacts}`, "--shims", "qemu");
      expect(run.status, run.stderr).toBe(0);
      const buffer = Buffer.alloc(bytes.length);
      fs.readSync(fd, buffer, 0, bytes.length, 0);
      expect(buffer.equals(bytes)).toBe(true);
    } finally {
      fs.closeSync(fd);
    }
    const config = read(host.root, "etc/containerd/config.toml");
    expect(config.match(/runtimes\.kata-qemu\]/g)).toHaveLength(1);
    expect(config).toContain("runtimes.kata-qemu-mylab]");
    // The real containerd reads it: one kata-qemu, ours.
    const dumped = parse(
      execFileSync(
        containerdOf("1.6").containerd,
        ["--config", path.join(host.root, "etc/containerd/config.toml"), "config", "dump"],
        {
          encoding: "utf8",
        },
      ),
    ) as Record<
      string,
      Record<string, Record<string, Record<string, Record<string, { options?: { ConfigPath?: string } }>>>>
    >;
    const runtimes = dumped.plugins?.["io.containerd.grpc.v1.cri"]?.containerd?.runtimes ?? {};
    expect(runtimes["kata-qemu"]?.options?.ConfigPath).toBe(
      "/opt/kata/share/defaults/kata-containers/runtimes/qemu/configuration-qemu.toml",
    );
    expect(Object.keys(runtimes).sort()).toEqual(["kata-qemu", "kata-qemu-mylab", "runc"]);
    // /opt/kata is kata-install's now; kata-deploy's tree is gone once ours was committed.
    expect(fs.readlinkSync(path.join(host.root, "opt/kata/bin"))).toBe("current/bin");
    expect(fs.readdirSync(path.join(host.root, "opt/kata/versions"))).toHaveLength(1);
    expect(
      host.cli("plan", "--artifacts", `dir:${artifacts}`, "--shims", "qemu", "--detailed-exitcode").status,
    ).toBe(0);
  });

  it("uninstall removes Kata whole: config.toml is the admin's own, kata-deploy's handler not brought back", () => {
    const run = host.cli("uninstall");
    expect(run.status, run.stderr).toBe(0);
    expect(read(host.root, "etc/containerd/config.toml")).toBe(`${adminOnly}\n`);
    expect(fs.existsSync(path.join(host.root, "opt/kata"))).toBe(false);
    // kata-deploy's own backup is the admin's to keep or remove: untouched.
    expect(read(host.root, "etc/containerd/config.toml.bak")).toBe(CONTAINERD_V2_MAIN);
  });
});

describe("a containerd 1.7 node kata-deploy installed with DEBUG (debug handlers, containerd's log level)", () => {
  let host: Awaited<ReturnType<typeof nodeOf>>;
  const debugDir = "/opt/kata/share/defaults/kata-containers/custom-runtimes/kata-qemu-debug";
  let adminOnly = "";
  beforeAll(async () => {
    const spec = intelContainerd16();
    spec.commands = {
      ...spec.commands,
      "/usr/bin/containerd": 'echo "containerd containerd.io 1.7.27 05044ec0"',
    };
    host = await nodeOf(spec, (root) => {
      kataDeployTree(root, ["qemu"]);
      // Its debug variant: the shim's configuration copied, with its drop-ins.
      const dir = path.join(root, debugDir);
      fs.mkdirSync(path.join(dir, "config.d"), { recursive: true });
      fs.writeFileSync(path.join(dir, "configuration-qemu.toml"), `${HEADER}[hypervisor.qemu]\n`);
      fs.writeFileSync(path.join(dir, "config.d/20-debug.toml"), "[runtime]\nenable_debug = true\n");
      // containerd 1.x: kata-deploy writes into config.toml itself, [debug] level included.
      adminOnly = `${CONTAINERD_V2_MAIN}${ADMIN_HANDLER}`;
      fs.writeFileSync(
        path.join(root, "etc/containerd/config.toml"),
        `${adminOnly}\n${deployHandler("io.containerd.grpc.v1.cri", "qemu")}\n${deployHandler("io.containerd.grpc.v1.cri", "qemu-debug", `${debugDir}/configuration-qemu.toml`)}\n[debug]\n  level = "debug"\n`,
      );
    });
  });
  const cli = (...args: string[]) => runCli([...args, "--host-root", host.root], { env: { DEBUG: "true" } });

  it("install: one definition of each handler, the debug one ours at kata-deploy's path; uninstall gives the admin's file back", () => {
    const run = cli("install", "--artifacts", `dir:${artifacts}`, "--shims", "qemu");
    expect(run.status, run.stderr).toBe(0);
    const file = path.join(host.root, "etc/containerd/config.toml");
    const config = fs.readFileSync(file, "utf8");
    expect(config.match(/runtimes\.kata-qemu\]/g)).toHaveLength(1);
    expect(config.match(/runtimes\.kata-qemu-debug\]/g)).toHaveLength(1);
    // kata-deploy's [debug] table is taken for the admin's (nothing tells them apart): kept, not doubled.
    expect(config.match(/^\[debug\]/gm)).toHaveLength(1);
    const dumped = parse(
      execFileSync(containerdOf("1.6").containerd, ["--config", file, "config", "dump"], {
        encoding: "utf8",
      }),
    );
    const runtimes = dig(dumped, [
      "plugins",
      "io.containerd.grpc.v1.cri",
      "containerd",
      "runtimes",
    ]) as Record<string, { options?: { ConfigPath?: string } }>;
    expect(Object.keys(runtimes).sort()).toEqual(["kata-qemu", "kata-qemu-debug", "kata-qemu-mylab", "runc"]);
    expect(runtimes["kata-qemu-debug"]?.options?.ConfigPath).toBe(`${debugDir}/configuration-qemu.toml`);
    // The debug handler's configuration is kata-install's now, its guest debug on.
    const drop = read(host.root, `${debugDir}/config.d/50-kata-install.toml`);
    expect(parse(drop)).toMatchObject({
      runtime: { enable_debug: true },
      agent: { kata: { debug_console_enabled: true } },
    });
    expect(fs.existsSync(path.join(host.root, debugDir, "config.d/20-debug.toml"))).toBe(false);
    expect(cli("uninstall").status).toBe(0);
    expect(read(host.root, "etc/containerd/config.toml")).toBe(`${adminOnly}\n[debug]\n  level = "debug"\n`);
  });
});

describe("a containerd 2.x node kata-deploy installed (its drop-in under /opt/kata, imported)", () => {
  let host: Awaited<ReturnType<typeof nodeOf>>;
  const main = "etc/containerd/config.toml";
  let original = "";
  beforeAll(async () => {
    host = await nodeOf(arm64Containerd20(), (root) => {
      kataDeployTree(root, ["qemu"]);
      const dropIn = path.join(root, "opt/kata/containerd/config.d/kata-deploy.toml");
      fs.mkdirSync(path.dirname(dropIn), { recursive: true });
      fs.writeFileSync(dropIn, `version = 3\n${deployHandler("io.containerd.cri.v1.runtime", "qemu")}`);
      original = read(root, main);
      fs.writeFileSync(
        path.join(root, main),
        original.replace(
          'imports = ["/etc/containerd/conf.d/*.toml"]',
          'imports = ["/etc/containerd/conf.d/*.toml", "/opt/kata/containerd/config.d/kata-deploy.toml"]',
        ),
      );
    });
  });

  it("install drops kata-deploy's import in the same transaction that writes kata-install's drop-in", () => {
    const facts = JSON.parse(host.cli("facts", "--json").stdout);
    expect(facts.kata.deploy.dropIns).toEqual(["/opt/kata/containerd/config.d/kata-deploy.toml"]);
    const run = host.cli("install", "--artifacts", `dir:${armArtifacts}`, "--shims", "qemu");
    expect(run.status, run.stderr).toBe(0);
    expect(read(host.root, main)).toBe(original);
    expect(read(host.root, "etc/containerd/conf.d/50-kata-install.toml")).toContain("runtimes.kata-qemu]");
    expect(fs.existsSync(path.join(host.root, "opt/kata/containerd"))).toBe(false);
  });

  it("uninstall leaves no import of kata-deploy's to dangle", () => {
    expect(host.cli("uninstall").status).toBe(0);
    expect(read(host.root, main)).toBe(original);
    expect(read(host.root, main)).not.toContain("kata-deploy");
  });
});

describe("a containerd 2.2 node kata-deploy installed (its drop-in in conf.d, which containerd reads)", () => {
  it("its conf.d/kata-deploy.toml goes as kata-install's comes: kata-install's handler is the one containerd reads", async () => {
    const spec = arm64Containerd20();
    spec.commands = {
      ...spec.commands,
      "/usr/local/bin/containerd":
        'echo "containerd github.com/containerd/containerd/v2 v2.2.0 1a43cb6a1035441f9aca8f5666a9b3ef9e70ab20"',
    };
    const deployed = "etc/containerd/conf.d/kata-deploy.toml";
    const host = await nodeOf(spec, (root) => {
      kataDeployTree(root, ["qemu"]);
      fs.writeFileSync(
        path.join(root, deployed),
        `version = 3\n${deployHandler("io.containerd.cri.v1.runtime", "qemu")}`,
      );
    });
    expect(JSON.parse(host.cli("facts", "--json").stdout).kata.deploy.dropIns).toEqual([`/${deployed}`]);
    const run = host.cli("install", "--artifacts", `dir:${armArtifacts}`, "--shims", "qemu");
    expect(run.status, run.stderr).toBe(0);
    // containerd reads conf.d in name order, a later file's table over an earlier one's: kata-deploy's
    // (k…) would win over kata-install's (50-…). It is gone, and only ours defines the handler.
    expect(fs.existsSync(path.join(host.root, deployed))).toBe(false);
    const defining = fs
      .readdirSync(path.join(host.root, "etc/containerd/conf.d"))
      .filter((f) => read(host.root, `etc/containerd/conf.d/${f}`).includes("runtimes.kata-qemu]"));
    expect(defining).toEqual(["50-kata-install.toml"]);
    const facts = JSON.parse(host.cli("facts", "--json").stdout);
    const handlers = facts.runtime.handlers.filter((h: { name: string }) => h.name === "kata-qemu");
    expect(handlers).toHaveLength(1);
    expect(handlers[0].file).toBe("/etc/containerd/conf.d/50-kata-install.toml");
  });
});

describe("a CRI-O node kata-deploy installed (99-kata-deploy, and 100-debug as its DEBUG writes it)", () => {
  let host: Awaited<ReturnType<typeof nodeOf>>;
  const dropIn = "etc/crio/crio.conf.d/99-kata-deploy";
  const debug = "etc/crio/crio.conf.d/100-debug";
  beforeAll(async () => {
    host = await nodeOf(amdSnpCrio(), (root) => {
      kataDeployTree(root, ["qemu"]);
      fs.writeFileSync(path.join(root, debug), '[crio.runtime]\nlog_level = "debug"\n');
      fs.writeFileSync(
        path.join(root, dropIn),
        '[crio]\n  storage_option = ["overlay.skip_mount_home=true"]\n\n[crio.runtime.runtimes.kata-qemu]\n  runtime_path = "/opt/kata/bin/containerd-shim-kata-v2"\n  runtime_type = "vm"\n  runtime_root = "/run/vc"\n  runtime_config_path = "/opt/kata/share/defaults/kata-containers/runtimes/qemu/configuration-qemu.toml"\n  privileged_without_host_devices = true\n',
      );
    });
  });

  it("its drop-ins go as kata-install's comes, and uninstall does not bring them back", () => {
    const before = snapshot(host.root);
    expect(JSON.parse(host.cli("facts", "--json").stdout).kata.deploy.dropIns).toEqual([
      `/${debug}`,
      `/${dropIn}`,
    ]);
    const run = host.cli("install", "--artifacts", `dir:${artifacts}`, "--shims", "qemu");
    expect(run.status, run.stderr).toBe(0);
    expect(fs.existsSync(path.join(host.root, dropIn))).toBe(false);
    expect(fs.existsSync(path.join(host.root, debug))).toBe(false);
    const ours = parse(read(host.root, "etc/crio/crio.conf.d/50-kata-install.conf")) as {
      crio: { storage_option?: string[]; runtime: { runtimes: Record<string, unknown> } };
    };
    expect(Object.keys(ours.crio.runtime.runtimes)).toEqual(["kata-qemu"]);
    // kata-deploy's storage_option was its own, not the admin's: kata-install sets it in its place.
    expect(ours.crio.storage_option).toEqual(["overlay.skip_mount_home=true"]);
    expect(host.cli("uninstall").status).toBe(0);
    const after = snapshot(host.root);
    // Everything of Kata's gone, the rest of the node as it was.
    for (const p of Object.keys(after)) expect(p.startsWith("opt/kata"), p).toBe(false);
    expect(after[dropIn]).toBeUndefined();
    expect(after[debug]).toBeUndefined();
    for (const [p, v] of Object.entries(before))
      if (!p.startsWith("opt") && p !== dropIn && p !== debug) expect(after[p], p).toEqual(v);
  });

  it("a 100-debug with settings of the admin's is theirs: not taken for kata-deploy's", async () => {
    const other = await nodeOf(amdSnpCrio(), (root) => {
      kataDeployTree(root, ["qemu"]);
      fs.writeFileSync(
        path.join(root, debug),
        '[crio.runtime]\nlog_level = "debug"\nlog_to_journald = true\n',
      );
    });
    expect(JSON.parse(other.cli("facts", "--json").stdout).kata.deploy.dropIns).toEqual([]);
  });
});

describe("a k3s node kata-deploy installed (its drop-in in the directory k3s's template imports)", () => {
  it("the drop-in is kata-deploy's, named in the facts, and goes in the takeover as kata-install's comes", async () => {
    const dir = "var/lib/rancher/k3s/agent/etc/containerd/config.toml.d";
    const host = await nodeOf(k3sImportingDropIns(), (root) => {
      kataDeployTree(root, ["qemu"]);
      fs.mkdirSync(path.join(root, dir), { recursive: true });
      fs.writeFileSync(
        path.join(root, dir, "kata-deploy.toml"),
        deployHandler("io.containerd.grpc.v1.cri", "qemu"),
      );
    });
    expect(JSON.parse(host.cli("facts", "--json").stdout).kata.deploy.dropIns).toEqual([
      `/${dir}/kata-deploy.toml`,
    ]);
    const plan = JSON.parse(
      host.cli("plan", "--artifacts", `dir:${artifacts}`, "--shims", "qemu", "--json").stdout,
    ) as { changes: Array<{ path: string; action: string }> };
    expect(plan.changes.filter((c) => c.path.startsWith(`/${dir}/`))).toEqual([
      expect.objectContaining({ path: `/${dir}/50-kata-install.toml`, action: "create" }),
      expect.objectContaining({ path: `/${dir}/kata-deploy.toml`, action: "delete" }),
    ]);
  });
});

describe("a node kata-deploy installed under INSTALLATION_PREFIX", () => {
  it("is recognised there, with its version, and taken over there", async () => {
    const dest = "/srv/k8s/opt/kata";
    const host = await nodeOf(intelContainerd16(), (root) => {
      kataDeployTree(root, ["qemu"], dest);
      fs.writeFileSync(path.join(root, dest, "VERSION"), "4.1.0\n");
      // A runtime that cannot say its version (it fails): the release's VERSION file says it.
      fs.rmSync(path.join(root, dest, "bin/kata-runtime"), { force: true });
      fs.writeFileSync(path.join(root, dest, "bin/kata-runtime"), "#!/bin/sh\nexit 1\n", { mode: 0o755 });
    });
    const env = { INSTALLATION_PREFIX: "/srv/k8s" };
    const cli = (...args: string[]) => runCli([...args, "--host-root", host.root], { env });
    const facts = JSON.parse(cli("facts", "--json").stdout);
    expect(facts.kata).toMatchObject({ managedBy: "kata-deploy", prefix: dest, deploy: { shims: ["qemu"] } });
    // Its hypervisors are found there too.
    expect(facts.hypervisors.qemu).toMatchObject({ path: `${dest}/bin/qemu-system-x86_64`, origin: "kata" });
    expect(facts.kata.version).toBe("4.1.0");
    const plan = cli("plan", "--artifacts", `dir:${artifacts}`, "--shims", "qemu");
    expect(plan.status, plan.stderr).toBe(0);
    expect(plan.stdout).toContain(`take-over ${dest}: kata-deploy's install`);
    const run = cli("install", "--artifacts", `dir:${artifacts}`, "--shims", "qemu");
    expect(run.status, run.stderr).toBe(0);
    expect(fs.readlinkSync(path.join(host.root, dest, "bin"))).toBe("current/bin");
    expect(cli("uninstall").status).toBe(0);
    expect(fs.existsSync(path.join(host.root, dest))).toBe(false);
  });
});

describe("a takeover killed halfway through moving kata-deploy's tree", () => {
  it("the next run puts kata-deploy's install back whole (uninstall), or finishes the takeover (install)", async () => {
    for (const next of ["uninstall", "install"] as const) {
      const host = await nodeOf(intelContainerd16(), (root) => {
        kataDeployTree(root, ["qemu"]);
        const config = path.join(root, "etc/containerd/config.toml");
        fs.writeFileSync(
          config,
          `${CONTAINERD_V2_MAIN}\n${deployHandler("io.containerd.grpc.v1.cri", "qemu")}`,
        );
      });
      const before = snapshot(host.root);
      const cut = runCli(
        ["install", "--host-root", host.root, "--artifacts", `dir:${artifacts}`, "--shims", "qemu"],
        {
          env: { KATA_INSTALL_CRASH_AT: "takeover:move" },
        },
      );
      expect(cut.status).toBeNull(); // killed, one entry moved or none
      const run = host.cli(
        next,
        ...(next === "install" ? ["--artifacts", `dir:${artifacts}`, "--shims", "qemu"] : []),
      );
      expect(run.status, run.stderr).toBe(0);
      if (next === "uninstall") {
        const after = snapshot(host.root);
        delete after["run/lock"];
        expect(after).toEqual(before);
      } else {
        expect(fs.readlinkSync(path.join(host.root, "opt/kata/bin"))).toBe("current/bin");
        expect(read(host.root, "etc/containerd/config.toml").match(/runtimes\.kata-qemu\]/g)).toHaveLength(1);
      }
    }
  });
});

describe("an admin's drop-in in a shim's config.d on a kata-deploy node", () => {
  it("stops the takeover up front, named, rather than being removed with kata-deploy's tree", async () => {
    const host = await nodeOf(intelContainerd16(), (root) => {
      kataDeployTree(root, ["qemu"]);
      const config = path.join(root, "etc/containerd/config.toml");
      fs.writeFileSync(
        config,
        `${CONTAINERD_V2_MAIN}\n${deployHandler("io.containerd.grpc.v1.cri", "qemu")}`,
      );
      const dir = path.join(root, "opt/kata/share/defaults/kata-containers/runtimes/qemu/config.d");
      fs.writeFileSync(path.join(dir, "30-kernel-params.toml"), "[hypervisor.qemu]\n");
      fs.writeFileSync(path.join(dir, "90-mine.toml"), "[hypervisor.qemu]\ndefault_memory = 4096\n");
    });
    const before = snapshot(host.root);
    const plan = host.cli("plan", "--artifacts", `dir:${artifacts}`, "--shims", "qemu");
    expect(plan.status).toBe(1);
    expect(plan.stdout).toContain(
      "/opt/kata/share/defaults/kata-containers/runtimes/qemu/config.d/90-mine.toml is not one of kata-deploy's drop-ins",
    );
    expect(plan.stdout).not.toContain("30-kernel-params.toml is not");
    expect(host.cli("install", "--artifacts", `dir:${artifacts}`, "--shims", "qemu").status).toBe(1);
    expect(snapshot(host.root)).toEqual(before);
  });
});
