// Taking over a node kata-deploy 3.x installed: no per-shim copies to know it by (runtimes/<shim>/),
// its handlers written into containerd's config.toml itself (or CRI-O's 99-kata-deploy), pointing at
// the release's files under /opt/kata, which it edited in place (the agent's proxy, the annotations
// it allowed). The handlers are what tell kata-deploy's install from another's; preflight says
// what install will do; the takeover keeps every handler and carries the edits.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { parse } from "smol-toml";
import { afterAll, describe, expect, it } from "vitest";
import { answeringHost } from "../helpers/answering.js";
import { artifactDir, fixtureRelease } from "../helpers/artifacts.js";
import { runCli } from "../helpers/cli.js";
import { amdSnpCrio, CONTAINERD_V2_MAIN, intelContainerd16, intelContainerd17 } from "../helpers/nodes.js";
import { containerdOf } from "../helpers/real-tools.js";
import { type NodeSpec, removeTestHosts } from "../helpers/test-host.js";
import { snapshot } from "../helpers/tree.js";

afterAll(removeTestHosts);
const artifacts = artifactDir("4.1.0");
afterAll(() => fs.rmSync(artifacts, { recursive: true, force: true }));

const release = fixtureRelease("x86_64");
const DEFAULTS = "/opt/kata/share/defaults/kata-containers";
const PROXY = "agent.https_proxy=http://proxy.corp:3128";
const SHIMS = ["qemu", "qemu-runtime-rs"];

const configOf = (shim: string) =>
  `${DEFAULTS}/${release.shims.get(shim)?.runtime === "rust" ? "runtime-rs/" : ""}configuration-${shim}.toml`;
const shimBinary = (shim: string) =>
  `/opt/kata/${release.shims.get(shim)?.runtime === "rust" ? "runtime-rs/" : ""}bin/containerd-shim-kata-v2`;

/** /opt/kata as kata-deploy 3.x leaves it: the release's files, qemu's edited in place. */
function olderTree(root: string): void {
  for (const artifact of fs.readdirSync(artifacts))
    fs.cpSync(path.join(artifacts, artifact, "opt/kata"), path.join(root, "opt/kata"), {
      recursive: true,
      verbatimSymlinks: true,
    });
  const file = path.join(root, configOf("qemu"));
  const text = fs.readFileSync(file, "utf8");
  // Its tomlq edits: the proxy after the release's parameters; an annotation it allowed.
  const edited = text
    .replace(
      /^kernel_params = "(.*)"$/m,
      (_, params: string) => `kernel_params = "${`${params} ${PROXY}`.trim()}"`,
    )
    .replace(
      /^enable_annotations = \[(.*)\]$/m,
      (_, list: string) => `enable_annotations = [${list}, "default_vcpus"]`,
    );
  expect(edited).not.toBe(text);
  fs.writeFileSync(file, edited);
}

/** kata-deploy 3.x's containerd handler, in config.toml itself (its tomlq edits). */
function handler(shim: string): string {
  const table = `plugins."io.containerd.grpc.v1.cri".containerd.runtimes.kata-${shim}`;
  return [
    `[${table}]`,
    `runtime_type = "io.containerd.kata-${shim}.v2"`,
    `runtime_path = "${shimBinary(shim)}"`,
    "privileged_without_host_devices = true",
    `pod_annotations = ["io.katacontainers.*"]`,
    "",
    `[${table}.options]`,
    `ConfigPath = "${configOf(shim)}"`,
    "",
  ].join("\n");
}

async function nodeOf(spec: NodeSpec, edit: (root: string) => void) {
  const host = await answeringHost(spec, edit);
  const cli = (...args: string[]) =>
    runCli([...args, "--host-root", host.root, "--artifacts", `dir:${artifacts}`]);
  return { ...host, cli };
}

const dump = (root: string) =>
  parse(
    execFileSync(
      containerdOf("1.6").containerd,
      ["--config", path.join(root, "etc/containerd/config.toml"), "config", "dump"],
      {
        encoding: "utf8",
      },
    ),
  ) as {
    plugins: Record<
      string,
      { containerd: { runtimes: Record<string, { options?: { ConfigPath?: string } }> } }
    >;
  };

interface Check {
  id: string;
  status: string;
  message: string;
}

describe("a containerd node kata-deploy 3.x installed (handlers in config.toml, configurations edited in place)", () => {
  it("is recognised by its handlers; preflight passes what install does; the takeover keeps every handler and edit; the real containerd loads it", async () => {
    const host = await nodeOf(intelContainerd16(), (root) => {
      olderTree(root);
      fs.writeFileSync(
        path.join(root, "etc/containerd/config.toml"),
        `${CONTAINERD_V2_MAIN}\n${SHIMS.map(handler).join("\n")}`,
      );
    });
    const facts = JSON.parse(runCli(["facts", "--json", "--host-root", host.root]).stdout);
    expect(facts.kata).toMatchObject({ managedBy: "kata-deploy", deploy: { shims: SHIMS } });
    // preflight makes install's check of the prefix: kata-deploy's, to be taken over.
    const preflight = host.cli("preflight", "--json");
    const prefix = (JSON.parse(preflight.stdout).checks as Check[]).find((c) => c.id === "install-prefix");
    expect(prefix).toMatchObject({ status: "pass" });
    expect(prefix?.message).toContain("holds kata-deploy's install, which kata-install takes over");
    expect(preflight.status, preflight.stdout.slice(0, 1500)).toBe(0);

    const plan = host.cli("plan");
    expect(plan.status, plan.stdout.slice(0, 1500)).toBe(0);
    expect(plan.stdout).toMatch(
      /take-over \/opt\/kata: kata-deploy's install \(shims qemu, qemu-runtime-rs;/,
    );

    const run = host.cli("install");
    expect(run.status, run.stderr).toBe(0);
    const runtimes = dump(host.root).plugins["io.containerd.grpc.v1.cri"]?.containerd.runtimes ?? {};
    // Every handler it served, beside those the rules add for this node.
    expect(Object.keys(runtimes)).toEqual(
      expect.arrayContaining(["kata-qemu", "kata-qemu-runtime-rs", "runc"]),
    );
    const config = fs.readFileSync(path.join(host.root, "etc/containerd/config.toml"), "utf8");
    for (const shim of SHIMS)
      expect(config.split(`.runtimes.kata-${shim}]`).length - 1, `one definition of kata-${shim}`).toBe(1);
    // The edits kata-deploy made in the release's file, carried over as the decisions they were.
    const params = host.cli("explain", "qemu:hypervisor.qemu.kernel_params");
    expect(params.stdout).toContain(PROXY);
    // Added after the release's own parameters, which the guest needs to boot.
    expect(params.stdout).toMatch(/\n {4}after {2}".+" from Kata 4\.1\.0's configuration-qemu\.toml/);
    expect(params.stdout).toContain(
      "kata-deploy's edits of configuration-qemu.toml, carried over by the takeover",
    );
    const annotations = host.cli("explain", "qemu:hypervisor.qemu.enable_annotations");
    expect(annotations.stdout).toContain("default_vcpus");
    // The release's own list is kept, the allowed one added to it.
    const shipped = release.shims.get("qemu")?.config.table as {
      hypervisor: { qemu: { enable_annotations: string[] } };
    };
    for (const a of shipped.hypervisor.qemu.enable_annotations) expect(annotations.stdout).toContain(a);
    // The next plan has nothing to do: the journal keeps what was carried.
    const again = host.cli("plan", "--detailed-exitcode");
    expect(again.status, again.stdout.slice(-2000)).toBe(0);
  });
});

describe("a CRI-O node kata-deploy 3.x installed (99-kata-deploy naming the release's files)", () => {
  it("is taken over: its handler kept under its name, its drop-in gone, uninstall leaving the node as it was before Kata", async () => {
    const dropIn = "etc/crio/crio.conf.d/99-kata-deploy";
    const host = await nodeOf(amdSnpCrio(), (root) => {
      olderTree(root);
      fs.writeFileSync(
        path.join(root, dropIn),
        `[crio]\n  storage_option = ["overlay.skip_mount_home=true"]\n\n[crio.runtime.runtimes.kata-qemu]\n  runtime_path = "/opt/kata/bin/containerd-shim-kata-v2"\n  runtime_type = "vm"\n  runtime_root = "/run/vc"\n  runtime_config_path = "${configOf("qemu")}"\n  privileged_without_host_devices = true\n`,
      );
    });
    const facts = JSON.parse(runCli(["facts", "--json", "--host-root", host.root]).stdout);
    expect(facts.kata).toMatchObject({ managedBy: "kata-deploy", deploy: { shims: ["qemu"] } });
    const before = snapshot(host.root);
    const run = host.cli("install");
    expect(run.status, run.stderr).toBe(0);
    expect(fs.existsSync(path.join(host.root, dropIn))).toBe(false);
    const ours = parse(
      fs.readFileSync(path.join(host.root, "etc/crio/crio.conf.d/50-kata-install.conf"), "utf8"),
    ) as { crio: { runtime: { runtimes: Record<string, unknown> } } };
    expect(Object.keys(ours.crio.runtime.runtimes)).toContain("kata-qemu");
    expect(host.cli("explain", "qemu:hypervisor.qemu.kernel_params").stdout).toContain(PROXY);
    expect(runCli(["uninstall", "--host-root", host.root]).status).toBe(0);
    const after = snapshot(host.root);
    for (const p of Object.keys(after)) expect(p.startsWith("opt/kata"), p).toBe(false);
    for (const [p, v] of Object.entries(before))
      if (!p.startsWith("opt") && p !== dropIn) expect(after[p], p).toEqual(v);
  });
});

describe("a node kata-deploy 3.x set nydus-snapshotter up on", () => {
  it("is refused by takeover-snapshotter alone, naming its unit and binaries; the prefix is still kata-deploy's to take over", async () => {
    // containerd 1.7: handlers can pull through nydus here (on 1.6 none could, and it goes, said).
    const host = await nodeOf(intelContainerd17(), (root) => {
      olderTree(root);
      fs.writeFileSync(
        path.join(root, "etc/containerd/config.toml"),
        `${CONTAINERD_V2_MAIN}\n${handler("qemu")}`,
      );
      fs.mkdirSync(path.join(root, "opt/kata/nydus-snapshotter"), { recursive: true });
      fs.writeFileSync(path.join(root, "opt/kata/nydus-snapshotter/containerd-nydus-grpc"), "#!/bin/sh\n");
      fs.mkdirSync(path.join(root, "etc/systemd/system"), { recursive: true });
      fs.writeFileSync(
        path.join(root, "etc/systemd/system/nydus-snapshotter.service"),
        "[Service]\nExecStart=/opt/kata/nydus-snapshotter/containerd-nydus-grpc\n",
      );
    });
    const plan = host.cli("plan", "--json");
    expect(plan.status).toBe(1);
    const failed = (JSON.parse(plan.stdout).checks as Array<Check & { severity: string }>).filter(
      (c) => c.status === "fail" && c.severity === "error",
    );
    expect(failed.map((c) => c.id)).toEqual(["takeover-snapshotter"]);
    expect(failed[0]?.message).toContain(
      "/opt/kata/nydus-snapshotter; /etc/systemd/system/nydus-snapshotter.service",
    );
  });
});
