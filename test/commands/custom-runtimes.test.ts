// Custom runtimes (kata-deploy's customRuntimes), from the overrides file: a handler of the admin's
// own on an installed shim's configuration, with values of its own over the shim's — written where
// kata-deploy writes them (custom-runtimes/<handler>/), loaded by the real containerd, checked like
// every handler, and gone with uninstall or when the overrides file drops it.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse } from "smol-toml";
import { afterAll, describe, expect, it } from "vitest";
import { dig } from "../../src/detect/toml.js";
import { answeringHost } from "../helpers/answering.js";
import { artifactDir } from "../helpers/artifacts.js";
import { runCli } from "../helpers/cli.js";
import { containerdOf } from "../helpers/real-tools.js";
import { removeTestHosts } from "../helpers/test-host.js";
import { snapshot } from "../helpers/tree.js";

afterAll(removeTestHosts);
const artifacts = artifactDir();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-custom-"));
afterAll(() => {
  fs.rmSync(artifacts, { recursive: true, force: true });
  fs.rmSync(tmp, { recursive: true, force: true });
});

const OVERRIDES = `shims = ["qemu", "clh"]

[config.qemu]
"hypervisor.qemu.default_vcpus" = 2

[custom_runtimes.kata-qemu-lowmem]
base = "qemu"
[custom_runtimes.kata-qemu-lowmem.config]
"hypervisor.qemu.default_memory" = 1024
`;
const DIR = "/opt/kata/share/defaults/kata-containers/custom-runtimes/kata-qemu-lowmem";

function overridesFile(name: string, text: string): string {
  const file = path.join(tmp, name);
  fs.writeFileSync(file, text);
  return file;
}

describe("a custom runtime on qemu", () => {
  it("is planned, installed and loaded as its own handler; dropped from the overrides, it goes; uninstall takes all back", async () => {
    const host = await answeringHost();
    const original = snapshot(host.root);
    const file = overridesFile("custom.toml", OVERRIDES);
    const args = ["--host-root", host.root, "--artifacts", `dir:${artifacts}`, "--overrides", file];
    const plan = JSON.parse(runCli(["plan", ...args, "--json"]).stdout);
    expect(plan.checks.find((c: { id: string }) => c.id === "artifact-paths")?.status).toBe("pass");
    const run = runCli(["install", ...args]);
    expect(run.status, run.stderr).toBe(0);
    // Its configuration: qemu's base, and qemu's decided values with its own over them.
    expect(fs.readFileSync(path.join(host.root, DIR, "configuration-qemu.toml"), "utf8")).toBe(
      fs.readFileSync(
        path.join(host.root, "opt/kata/share/defaults/kata-containers/runtimes/qemu/configuration-qemu.toml"),
        "utf8",
      ),
    );
    const own = parse(fs.readFileSync(path.join(host.root, DIR, "config.d/50-kata-install.toml"), "utf8"));
    expect(dig(own, ["hypervisor", "qemu"])).toMatchObject({ default_memory: 1024, default_vcpus: 2 });
    // The real containerd reads the handler, pointing there, beside the shims' own.
    const config = path.join(host.root, "etc/containerd/config.toml");
    const runtimes = dig(
      parse(
        execFileSync(containerdOf("1.6").containerd, ["--config", config, "config", "dump"], {
          encoding: "utf8",
        }),
      ),
      ["plugins", "io.containerd.grpc.v1.cri", "containerd", "runtimes"],
    ) as Record<string, { runtime_type?: string; options?: { ConfigPath?: string } }>;
    expect(runtimes["kata-qemu-lowmem"]).toMatchObject({
      runtime_type: "io.containerd.kata-qemu-lowmem.v2",
      options: { ConfigPath: `${DIR}/configuration-qemu.toml` },
    });
    expect(Object.keys(runtimes).sort()).toEqual(["kata-clh", "kata-qemu", "kata-qemu-lowmem", "runc"]);
    // explain says where its value comes from.
    const explained = runCli(["explain", "--host-root", host.root, "--overrides", file, "kata-qemu-lowmem"]);
    expect(explained.stdout).toMatch(/^custom_runtimes\.kata-qemu-lowmem = "qemu"/);
    expect(explained.stdout).toMatch(
      /\[kata-qemu-lowmem\] hypervisor\.qemu\.default_memory = 1024\n {4}set by overrides .*custom\.toml:9 /,
    );
    // Dropped from the overrides file: its handler and files go, nothing else changes.
    const without = overridesFile("without.toml", OVERRIDES.split("[custom_runtimes")[0] as string);
    const again = runCli(["install", ...args.slice(0, -1), without]);
    expect(again.status, again.stderr).toBe(0);
    expect(fs.existsSync(path.join(host.root, DIR, "configuration-qemu.toml"))).toBe(false);
    expect(fs.readFileSync(config, "utf8")).not.toContain("kata-qemu-lowmem");
    expect(runCli(["uninstall", "--host-root", host.root]).status).toBe(0);
    expect(snapshot(host.root)).toEqual(original);
  });

  it("added to a node installed already (nothing to pull): its new files count for the path check", async () => {
    const host = await answeringHost();
    const base = ["--host-root", host.root, "--artifacts", `dir:${artifacts}`];
    const plain = overridesFile("plain.toml", OVERRIDES.split("[custom_runtimes")[0] as string);
    expect(runCli(["install", ...base, "--overrides", plain]).status).toBe(0);
    const file = overridesFile("added.toml", OVERRIDES);
    const run = runCli(["install", ...base, "--overrides", file]);
    expect(run.status, run.stderr).toBe(0);
    expect(fs.existsSync(path.join(host.root, DIR, "configuration-qemu.toml"))).toBe(true);
    // So does DEBUG, on the same node.
    const debug = runCli(["install", ...base, "--overrides", file], { env: { DEBUG: "true" } });
    expect(debug.status, debug.stderr).toBe(0);
  });

  it("on a shim this node does not install: not written, and preflight warns", async () => {
    const host = await answeringHost();
    const file = overridesFile(
      "fc.toml",
      '[custom_runtimes.kata-fc-big]\nbase = "fc"\n[custom_runtimes.kata-fc-big.config]\n"hypervisor.firecracker.default_memory" = 4096\n',
    );
    const plan = JSON.parse(
      runCli([
        "plan",
        "--host-root",
        host.root,
        "--artifacts",
        `dir:${artifacts}`,
        "--overrides",
        file,
        "--json",
      ]).stdout,
    );
    expect(plan.checks).toContainEqual(
      expect.objectContaining({
        id: "custom-runtime",
        severity: "warning",
        status: "fail",
        message: "custom runtime kata-fc-big is not written: its base shim fc is not installed on this node",
      }),
    );
    expect(JSON.stringify(plan.changes)).not.toContain("kata-fc-big");
  });

  it("its snapshotter is checked as a mapped one is", async () => {
    const host = await answeringHost();
    const file = overridesFile(
      "snap.toml",
      '[custom_runtimes.kata-qemu-nydus]\nbase = "qemu"\nsnapshotter = "nydus"\n',
    );
    const plan = JSON.parse(runCli(["plan", "--host-root", host.root, "--overrides", file, "--json"]).stdout);
    expect(plan.checks.find((c: { id: string }) => c.id === "handler-snapshotter")).toMatchObject({
      severity: "error",
      status: "fail",
      message: expect.stringContaining("custom_runtimes.kata-qemu-nydus.snapshotter"),
    });
  });

  it("a bad name, base or value: each named with its line, nothing planned", async () => {
    const host = await answeringHost();
    const file = overridesFile(
      "bad.toml",
      '[custom_runtimes.Kata_Big]\nbase = "qemu"\n\n[custom_runtimes.kata-x]\nbase = "Kemu"\n\n[custom_runtimes.kata-y]\nbase = "qemu"\n[custom_runtimes.kata-y.config]\n"hypervisor.qemu.shared_fs" = "virtio-fss"\n\n[custom_runtimes.kata-qemu]\nbase = "qemu"\n\n[custom_runtimes.kata-z]\nsnapshotter = "nydus"\n',
    );
    const run = runCli(["plan", "--host-root", host.root, "--overrides", file]);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/bad\.toml:1: custom_runtimes\.Kata_Big: a handler name is a DNS label/);
    expect(run.stderr).toMatch(/bad\.toml:5: custom_runtimes\.kata-x\.base: "Kemu" is no shim name/);
    expect(run.stderr).toMatch(
      /bad\.toml:10: custom_runtimes\.kata-y\.config\."hypervisor\.qemu\.shared_fs": "virtio-fss" is not one of/,
    );
    // A base the release does not ship is known once the release is read: an error of the plan.
    const unknown = overridesFile("unknown.toml", '[custom_runtimes.kata-x]\nbase = "kemu"\n');
    const dir = artifactDir();
    const plan = runCli([
      "plan",
      "--host-root",
      host.root,
      "--overrides",
      unknown,
      "--artifacts",
      `dir:${dir}`,
    ]);
    fs.rmSync(dir, { recursive: true, force: true });
    expect(plan.status).toBe(1);
    expect(plan.stdout).toMatch(
      /\[ERROR\] unknown-shim: .*unknown\.toml:\d+: custom_runtimes\.kata-x\.base names the shim kemu, but Kata 3\.9\.0 ships no configuration for it/,
    );
  });
});
