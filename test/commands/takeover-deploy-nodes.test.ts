// Every node kata-deploy 4.1.0's own binary left (test/fixtures/kata-deploy/nodes-4.1.0), taken over
// by one install with the environment its chart gave it: every handler it served is served after
// (by the real containerd of that version, where the node runs containerd), every value of its
// config.d/ drop-ins and its agent proxy are what Kata reads after, and nothing is refused that
// only an ignore flag would pass.
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Host } from "../../src/host/host.js";
import { parseKataToml } from "../../src/release/config-file.js";
import { readConfigEntries } from "../../src/release/drop-in-dir.js";
import { knownKeysOf, loadKataConfig } from "../../src/render/kata-loader.js";
import { answeringHost } from "../helpers/answering.js";
import { artifactDir } from "../helpers/artifacts.js";
import { runCli } from "../helpers/cli.js";
import {
  deployEnv,
  KATA_DEPLOY_NODES,
  type KataDeployNode,
  layOutDeployNode,
} from "../helpers/kata-deploy-nodes.js";
import { amdSnpCrio, intelContainerd16, k3sImportingDropIns } from "../helpers/nodes.js";
import { configDump } from "../helpers/real-containerd.js";
import { realContainerdHost } from "../helpers/real-containerd-host.js";
import type { ContainerdMinor } from "../helpers/real-tools.js";
import type { NodeSpec } from "../helpers/test-host.js";
import { removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);
const artifacts = artifactDir("4.1.0");
afterAll(() => fs.rmSync(artifacts, { recursive: true, force: true }));
const NYDUS = path.join(import.meta.dirname, "../fixtures/nydus-snapshotter");

/** Where each node's runtime is: the real containerd of its minor, or a stand-in (CRI-O, k3s). */
const NODES: Record<KataDeployNode, { minor: ContainerdMinor | null; spec: () => NodeSpec; prefix: string }> =
  {
    "containerd-1.6": { minor: "1.6", spec: intelContainerd16, prefix: "/opt/kata" },
    "containerd-1.7": { minor: "1.7", spec: intelContainerd16, prefix: "/opt/kata" },
    "containerd-2.1-suffix": { minor: "2", spec: intelContainerd16, prefix: "/opt/kata-blue" },
    crio: { minor: null, spec: amdSnpCrio, prefix: "/opt/kata" },
    k3s: { minor: null, spec: k3sImportingDropIns, prefix: "/opt/kata" },
    "takeover-18-containerd-1.6": { minor: "1.6", spec: intelContainerd16, prefix: "/opt/kata" },
  };

/** Each shim's configuration as Kata loads it, under `root`, from the handler's ConfigPath. */
async function kataReads(root: string, configPath: string): Promise<Record<string, unknown>> {
  const host = new Host({ root });
  const file = host.hostPathOf(await host.resolve(configPath)) ?? configPath;
  const table = parseKataToml(fs.readFileSync(path.join(root, file), "utf8"));
  const entries = await readConfigEntries(host, `${path.posix.dirname(file)}/config.d`);
  return loadKataConfig({ file, table }, entries, "go", knownKeysOf([])).config;
}

describe.each(KATA_DEPLOY_NODES)("kata-deploy 4.1.0's node %s", (name) => {
  it("one install takes it over: every handler served, every value kept", async () => {
    const { minor, spec, prefix } = NODES[name];
    const base = { ...spec(), files: {} };
    const lay = (root: string) => {
      layOutDeployNode(name, root);
    };
    const real = minor === null ? null : await realContainerdHost(minor, base, lay);
    const host = real ?? (await answeringHost(base, lay));
    const before = real === null ? null : (await real.serving()).handlers;
    const env = { ...deployEnv(name), KATA_INSTALL_NYDUS_SNAPSHOTTER_DIR: NYDUS };
    const facts = JSON.parse(runCli(["facts", "--json", "--host-root", host.root], { env }).stdout);
    expect(facts.kata.managedBy).toBe("kata-deploy");
    // Each handler kata-deploy wrote, and the configuration it names.
    const handlers = (facts.runtime.handlers as { name: string; configPath: string | null }[]).filter((h) =>
      h.name.startsWith("kata-"),
    );
    expect(handlers.length).toBeGreaterThan(0);
    const was = new Map<string, Record<string, unknown>>();
    for (const h of handlers) if (h.configPath) was.set(h.name, await kataReads(host.root, h.configPath));

    const install = runCli(["install", "--host-root", host.root, "--artifacts", `dir:${artifacts}`], { env });
    expect(install.status, `${install.stdout}\n${install.stderr}`).toBe(0);

    if (real !== null && before !== null) {
      const after = (await real.serving()).handlers;
      for (const h of before) expect(after, h).toContain(h);
    }
    const now = JSON.parse(runCli(["facts", "--json", "--host-root", host.root], { env }).stdout);
    expect(now.kata.managedBy).toBe("kata-install");
    for (const h of handlers) {
      const after = (now.runtime.handlers as { name: string; configPath: string | null }[]).find(
        (x) => x.name === h.name,
      );
      expect(after, h.name).toBeDefined();
      if (!after?.configPath) continue;
      const reads = await kataReads(host.root, after.configPath);
      const before = was.get(h.name) ?? {};
      const hv = (t: Record<string, unknown>) =>
        Object.values((t.hypervisor ?? {}) as Record<string, Record<string, unknown>>)[0] ?? {};
      // The admin's dropIn values and kata-deploy's proxy (in the kernel parameters) are what Kata
      // reads. DEBUG's handlers are kata-install's variants of the shim now: the shim's values and
      // debug on (kata-deploy left the chart's dropIn out of them), so their memory is not compared.
      for (const key of h.name.endsWith("-debug")
        ? ["enable_debug"]
        : ["default_memory", "default_vcpus", "enable_debug"])
        if (hv(before)[key] !== undefined)
          expect(hv(reads)[key], `${h.name} ${key}`).toEqual(hv(before)[key]);
      const proxy = /agent\.https_proxy=\S+/.exec(String(hv(before).kernel_params ?? ""))?.[0];
      if (proxy) expect(String(hv(reads).kernel_params), h.name).toContain(proxy);
    }
    // On containerd 1.6 no handler can use nydus, so kata-install does not set it up: kata-deploy's
    // proxy plugin goes with the unit the takeover ends (a plugin on a socket nothing serves).
    if (minor === "1.6")
      expect(fs.readFileSync(path.join(host.root, "etc/containerd/config.toml"), "utf8")).not.toContain(
        "proxy_plugins.nydus-for-kata-tee",
      );
    // kata-install's journal, where kata-deploy's install was: the node is kata-install's now.
    expect(fs.existsSync(path.join(host.root, prefix, ".install"))).toBe(true);
    // Uninstalled: no Kata at all, said plainly (kata-deploy's install does not come back).
    const uninstall = runCli(["uninstall", "--host-root", host.root], { env });
    expect(uninstall.status, uninstall.stderr).toBe(0);
    expect(uninstall.stdout).toContain(
      "This node was kata-deploy's until kata-install took it over: kata-deploy's install is not restored",
    );
    if (real !== null) {
      const after = (await real.serving()).handlers ?? [];
      expect(after.filter((h) => h.startsWith("kata-"))).toEqual([]);
      expect(after).toContain("runc");
    }
    // containerd 1.x, whose file kata-deploy edited in place: what kata-deploy's own uninstall
    // restores, its backup of the admin's file, byte for byte (its DEBUG log level, nydus's
    // annotations line and blank lines gone with it); the backup itself went with the takeover.
    if (minor === "1.6" || minor === "1.7") {
      const backup = fs.readFileSync(
        path.join(
          import.meta.dirname,
          `../fixtures/kata-deploy/nodes-4.1.0/${name}/etc/containerd/config.toml.bak`,
        ),
        "utf8",
      );
      expect(fs.readFileSync(path.join(host.root, "etc/containerd/config.toml"), "utf8")).toBe(backup);
      expect(fs.existsSync(path.join(host.root, "etc/containerd/config.toml.bak"))).toBe(false);
    }
    real?.stop();
  });
});

describe("an admin's own files in kata-deploy's directories", () => {
  it("are named by the plan and kept by the takeover, byte for byte, out of Kata's way", async () => {
    const name = "takeover-18-containerd-1.6";
    const mine = {
      "opt/kata/bin/my-tool": "#!/bin/sh\necho mine\n",
      "opt/kata/share/kata-containers/my-guest.img": "an image of mine\n",
    };
    const node = await answeringHost({ ...intelContainerd16(), files: {} }, (root) => {
      layOutDeployNode(name, root);
      for (const [file, text] of Object.entries(mine)) fs.writeFileSync(path.join(root, file), text);
    });
    const env = deployEnv(name);
    const cli = (args: string[]) =>
      runCli([...args, "--host-root", node.root, "--artifacts", `dir:${artifacts}`], { env });
    const plan = cli(["plan"]);
    const kept =
      /\[WARNING\] takeover-kept: not kata-deploy's, in its tree under \/opt\/kata: (.*): kept/.exec(
        plan.stdout,
      )?.[1];
    expect(kept, plan.stdout).toContain("/opt/kata/bin/my-tool");
    expect(kept).toContain("/opt/kata/share/kata-containers/my-guest.img");
    // kata-deploy's tools that no chosen shim needs: said by name, not gone without a word.
    expect(plan.stdout).toMatch(
      /\[WARNING\] takeover-tools: kata-deploy's node has [^\n]*\/opt\/kata\/bin\/kata-runtime[^\n]*, which this install does not put back/,
    );
    const install = cli(["install"]);
    expect(install.status, install.stderr).toBe(0);
    for (const [file, text] of Object.entries(mine)) {
      const kept = path.join(node.root, file.replace("opt/kata/", "opt/kata/versions/kata-deploy.kept/"));
      expect(fs.readFileSync(kept, "utf8"), file).toBe(text);
      expect(install.stdout).toContain(
        `kept /opt/kata/versions/kata-deploy.kept/${file.slice("opt/kata/".length)}`,
      );
    }
  });
});

describe("kata-deploy's containerd drop-in left without its install (its tree wiped)", () => {
  it("goes with the install, so kata-install's handlers are the ones containerd loads; uninstall gives it back; another install's stays", async () => {
    // What kata-deploy 4.1.0 writes in conf.d on containerd 2.2 (config.rs:864-868 @ 4.1.0): the
    // 2.1-suffix node's drop-in, for the default install (/opt/kata) and for the blue one.
    const blue = fs.readFileSync(
      path.join(
        import.meta.dirname,
        "../fixtures/kata-deploy/nodes-4.1.0/containerd-2.1-suffix/opt/kata-blue/containerd/config.d/kata-deploy.toml",
      ),
      "utf8",
    );
    const mine = blue.replaceAll("/opt/kata-blue/", "/opt/kata/").replaceAll("-blue", "");
    const config = 'version = 3\nimports = ["/etc/containerd/conf.d/*.toml"]\n';
    const node = await realContainerdHost("2", {
      ...intelContainerd16(),
      files: {
        "/etc/containerd/config.toml": config,
        "/etc/containerd/conf.d/kata-deploy.toml": mine,
        "/etc/containerd/conf.d/kata-deploy-blue.toml": blue,
      },
    });
    const env = { SHIMS: "qemu" };
    const facts = JSON.parse(runCli(["facts", "--json", "--host-root", node.root], { env }).stdout);
    expect(facts.kata.deployLeftovers).toEqual(["/etc/containerd/conf.d/kata-deploy.toml"]);
    const cli = (args: string[]) =>
      runCli([...args, "--host-root", node.root, "--artifacts", `dir:${artifacts}`], { env });
    const plan = cli(["plan"]);
    expect(plan.stdout).toContain(
      "# delete /etc/containerd/conf.d/kata-deploy.toml: kata-deploy's runtime drop-in, left without kata-deploy's install (none under /opt/kata): its handlers, read after kata-install's, would replace them",
    );
    expect(plan.stdout).not.toContain("kata-deploy-blue.toml:");
    const install = cli(["install"]);
    expect(install.status, `${install.stdout}\n${install.stderr}`).toBe(0);
    expect(fs.existsSync(path.join(node.root, "etc/containerd/conf.d/kata-deploy.toml"))).toBe(false);
    expect(fs.readFileSync(path.join(node.root, "etc/containerd/conf.d/kata-deploy-blue.toml"), "utf8")).toBe(
      blue,
    );
    // containerd's own view: kata-qemu is kata-install's (its configuration, under runtimes/qemu).
    const dump = configDump("2", node.root);
    expect(dump).toMatch(
      /runtimes\.kata-qemu\.options\][^[]*ConfigPath = '\/opt\/kata\/share\/defaults\/kata-containers\/runtimes\/qemu\/configuration-qemu\.toml'/,
    );
    const served = (await node.serving()).handlers ?? [];
    expect(served).toEqual(expect.arrayContaining(["runc", "kata-qemu", "kata-clh-blue"]));
    expect(served).not.toContain("kata-clh");
    // Planned again: nothing to do (it is not found again, nor put back).
    expect(cli(["plan", "--detailed-exitcode"]).status).toBe(0);
    const uninstall = runCli(["uninstall", "--host-root", node.root], { env });
    expect(uninstall.status, uninstall.stderr).toBe(0);
    expect(fs.readFileSync(path.join(node.root, "etc/containerd/conf.d/kata-deploy.toml"), "utf8")).toBe(
      mine,
    );
    node.stop();
  });
});

describe("containerd 1.x's file the admin edited after kata-deploy's install", () => {
  it("is given back with the admin's edit (not kata-deploy's older backup, which stays theirs)", async () => {
    const name = "containerd-1.6";
    const node = await answeringHost({ ...intelContainerd16(), files: {} }, (root) => {
      layOutDeployNode(name, root);
      const file = path.join(root, "etc/containerd/config.toml");
      fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace(/^oom_score = 0$/m, "oom_score = -999"));
    });
    const env = { ...deployEnv(name), KATA_INSTALL_NYDUS_SNAPSHOTTER_DIR: NYDUS };
    const backup = fs.readFileSync(path.join(node.root, "etc/containerd/config.toml.bak"), "utf8");
    const install = runCli(["install", "--host-root", node.root, "--artifacts", `dir:${artifacts}`], { env });
    expect(install.status, install.stderr).toBe(0);
    expect(fs.readFileSync(path.join(node.root, "etc/containerd/config.toml.bak"), "utf8")).toBe(backup);
    const uninstall = runCli(["uninstall", "--host-root", node.root], { env });
    expect(uninstall.status, uninstall.stderr).toBe(0);
    const after = fs.readFileSync(path.join(node.root, "etc/containerd/config.toml"), "utf8");
    expect(after).toMatch(/^oom_score = -999$/m);
    expect(after).not.toContain("kata-");
  });
});
