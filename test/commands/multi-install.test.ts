// Installs side by side (MULTI_INSTALL_SUFFIX): each owns its handlers, its own marked block or
// drop-in, its own prefix and journal. Installing, re-installing or uninstalling one never changes
// another's.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { parse } from "smol-toml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answeringHost } from "../helpers/answering.js";
import { artifactDir } from "../helpers/artifacts.js";
import { runCli } from "../helpers/cli.js";
import { amdSnpCrio, intelContainerd16 } from "../helpers/nodes.js";
import { containerdOf } from "../helpers/real-tools.js";
import { type NodeSpec, removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);
const artifacts = artifactDir();
afterAll(() => fs.rmSync(artifacts, { recursive: true, force: true }));

const nodeOf = (spec: NodeSpec) => answeringHost(spec);

const as = (suffix: string): Record<string, string> => (suffix ? { MULTI_INSTALL_SUFFIX: suffix } : {});
const handlers = (file: string) => {
  const dumped = parse(
    execFileSync(containerdOf("1.6").containerd, ["--config", file, "config", "dump"], { encoding: "utf8" }),
  ) as {
    plugins: Record<
      string,
      { containerd: { runtimes: Record<string, { options?: { ConfigPath?: string } }> } }
    >;
  };
  return dumped.plugins["io.containerd.grpc.v1.cri"]?.containerd.runtimes ?? {};
};

describe("two installs in one containerd 1.6 config.toml (two marked blocks)", () => {
  let host: Awaited<ReturnType<typeof nodeOf>>;
  let config = "";
  beforeAll(async () => {
    host = await nodeOf(intelContainerd16());
    config = path.join(host.root, "etc/containerd/config.toml");
  });
  const install = (suffix: string) =>
    runCli(["install", "--host-root", host.root, "--artifacts", `dir:${artifacts}`, "--shims", "qemu"], {
      env: as(suffix),
    });

  it("each has its handlers and block; the real containerd reads both", () => {
    expect(install("").status).toBe(0);
    const first = fs.readFileSync(config, "utf8");
    const ci = install("ci");
    expect(ci.status, ci.stderr).toBe(0);
    const both = fs.readFileSync(config, "utf8");
    expect(both.startsWith(first)).toBe(true); // the first install's bytes untouched
    expect(both).toContain("# >>> kata-install-ci: Kata runtime handlers");
    const runtimes = handlers(config);
    expect(runtimes["kata-qemu"]?.options?.ConfigPath).toBe(
      "/opt/kata/share/defaults/kata-containers/runtimes/qemu/configuration-qemu.toml",
    );
    expect(runtimes["kata-qemu-ci"]?.options?.ConfigPath).toBe(
      "/opt/kata-ci/share/defaults/kata-containers/runtimes/qemu/configuration-qemu.toml",
    );
  });

  it("re-installing one changes nothing of the other's; uninstalling one leaves the other whole", () => {
    const before = fs.readFileSync(config, "utf8");
    const again = install("");
    expect(again.stdout).toContain("Nothing to do");
    expect(fs.readFileSync(config, "utf8")).toBe(before);
    const ciTree = fs.readdirSync(path.join(host.root, "opt/kata-ci")).sort();
    expect(runCli(["uninstall", "--host-root", host.root]).status).toBe(0);
    const after = fs.readFileSync(config, "utf8");
    expect(after).not.toContain("runtimes.kata-qemu]");
    expect(after).toContain("runtimes.kata-qemu-ci]");
    expect(Object.keys(handlers(config)).sort()).toEqual(["kata-qemu-ci", "runc"]);
    expect(fs.readdirSync(path.join(host.root, "opt/kata-ci")).sort()).toEqual(ciTree);
    expect(runCli(["uninstall", "--host-root", host.root], { env: as("ci") }).status).toBe(0);
    expect(fs.readFileSync(config, "utf8")).not.toContain("kata-install");
  });
});

describe("two installs on CRI-O (two drop-ins)", () => {
  it("each writes its own file", async () => {
    const host = await nodeOf(amdSnpCrio());
    for (const suffix of ["", "ci"]) {
      const run = runCli(
        ["install", "--host-root", host.root, "--artifacts", `dir:${artifacts}`, "--shims", "qemu"],
        {
          env: as(suffix),
        },
      );
      expect(run.status, run.stderr).toBe(0);
    }
    const dir = path.join(host.root, "etc/crio/crio.conf.d");
    expect(fs.readFileSync(path.join(dir, "50-kata-install.conf"), "utf8")).toContain("runtimes.kata-qemu]");
    expect(fs.readFileSync(path.join(dir, "50-kata-install-ci.conf"), "utf8")).toContain(
      "runtimes.kata-qemu-ci]",
    );
  });
});

describe("uninstall without the suffix an install was made with", () => {
  it("says there is nothing at its place, and names the install there is, with its suffix", async () => {
    const host = await nodeOf(intelContainerd16());
    const installed = runCli(["install", "--host-root", host.root, "--artifacts", `dir:${artifacts}`], {
      env: as("lts"),
    });
    expect(installed.status, installed.stderr).toBe(0);
    const bare = runCli(["uninstall", "--host-root", host.root]);
    expect(bare.status).toBe(0);
    expect(bare.stdout).toMatch(
      /^Nothing to uninstall: no kata-install journal at \/opt\/kata\/\.install\/journal\.json .* kata-install has an install at \/opt\/kata-lts \(MULTI_INSTALL_SUFFIX=lts\): run with that to uninstall it\.\n$/,
    );
    expect(runCli(["uninstall", "--host-root", host.root], { env: as("lts") }).status).toBe(0);
    host.close();
  });
});
