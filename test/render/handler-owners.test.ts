// A handler of the node's own named as kata-install names its own — a distro's Kata as `kata-qemu`,
// never kata-deploy's — is the node's, whatever its name: kept byte for byte when the plan writes no
// handler of that name, refused by a plan line (and install) when it does; never removed.
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { answeringHost } from "../helpers/answering.js";
import { artifactDir } from "../helpers/artifacts.js";
import { runCli } from "../helpers/cli.js";
import { containerdServes } from "../helpers/containerd.js";
import { removeTestHosts } from "../helpers/test-host.js";
import { snapshot } from "../helpers/tree.js";

afterAll(removeTestHosts);
const artifacts = artifactDir();
afterAll(() => fs.rmSync(artifacts, { recursive: true, force: true }));

/** A distro's Kata, as Fedora's or openSUSE's package configures containerd for it. */
const DISTRO_HANDLER = `
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.kata-qemu]
  runtime_type = "io.containerd.kata.v2"
  runtime_path = "/usr/bin/containerd-shim-kata-v2"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.kata-qemu.options]
    ConfigPath = "/usr/share/kata-containers/defaults/configuration-qemu.toml"
`;

async function node() {
  const host = await answeringHost();
  const config = path.join(host.root, "etc/containerd/config.toml");
  fs.appendFileSync(config, DISTRO_HANDLER);
  const source = (command: string) => (command === "uninstall" ? [] : ["--artifacts", `dir:${artifacts}`]);
  const cli = (...args: string[]) =>
    runCli([...args, "--host-root", host.root, ...source(args[0] as string)]);
  return { ...host, config, cli };
}

describe("an admin's own handler named kata-qemu", () => {
  it("a plan writing kata-qemu fails with a line naming it; install refuses and changes nothing", async () => {
    const host = await node();
    const plan = host.cli("plan", "--shims", "qemu");
    expect(plan.status).toBe(1);
    expect(plan.stdout).toContain(
      "[ERROR] runtime-handlers: kata-qemu (/etc/containerd/config.toml) is a handler of the node's own, for /usr/share/kata-containers/defaults/configuration-qemu.toml: not kata-install's nor kata-deploy's (those point into /opt/kata), and kata-install writes a handler of that name",
    );
    const before = snapshot(host.root);
    const install = host.cli("install", "--shims", "qemu", "--ignore-preflight-errors", "all");
    expect(install.status).toBe(1);
    expect(install.stderr).toMatch(/preflight errors: runtime-handlers \(kata-qemu/);
    expect(install.stderr).toContain("cannot be ignored");
    expect(snapshot(host.root)).toEqual(before);
  });

  it("a handler of an install under another INSTALLATION_PREFIX: said as such, with what to plan with", async () => {
    const host = await answeringHost();
    const installed = runCli(
      ["install", "--host-root", host.root, "--artifacts", `dir:${artifacts}`, "--shims", "qemu"],
      {
        env: { INSTALLATION_PREFIX: "/srv/k8s" },
      },
    );
    expect(installed.status, installed.stderr).toBe(0);
    const plan = runCli([
      "plan",
      "--host-root",
      host.root,
      "--artifacts",
      `dir:${artifacts}`,
      "--shims",
      "qemu",
    ]);
    expect(plan.status).toBe(1);
    expect(plan.stdout).toContain(
      "[ERROR] runtime-handlers: kata-qemu (/etc/containerd/config.toml) points into /srv/k8s/opt/kata, another Kata prefix than this plan's /opt/kata: an install made with other INSTALLATION_PREFIX or MULTI_INSTALL_SUFFIX values? Plan with the ones it was made with",
    );
    host.close();
  });

  it("an install of other shims keeps it byte for byte (containerd loads both); uninstall gives the file back whole", async () => {
    const host = await node();
    const original = fs.readFileSync(host.config, "utf8");
    const before = snapshot(host.root);
    const install = host.cli("install", "--shims", "clh");
    expect(install.status, install.stderr).toBe(0);
    const installed = fs.readFileSync(host.config, "utf8");
    expect(installed.startsWith(original)).toBe(true);
    expect(installed).toContain("runtimes.kata-clh]");
    const served = await containerdServes(installed);
    expect(served.cri, served.log).toBe("ok");
    const uninstall = host.cli("uninstall");
    expect(uninstall.status, uninstall.stderr).toBe(0);
    expect(fs.readFileSync(host.config, "utf8")).toBe(original);
    expect(snapshot(host.root)).toEqual(before);
  });
});
