// `npm start` off a node: the plan of the example node against the example release, the whole job
// shown (checks, shims, artifacts, every file's diff), and said to be the example's.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";

const start = (env: Record<string, string>) =>
  spawnSync(process.execPath, ["--import", "tsx", path.resolve("scripts/start.ts")], {
    encoding: "utf8",
    env: { ...process.env, ...env },
    timeout: 120_000,
  });

describe("npm start", () => {
  it("off a node: the example node's plan against the example release, said so, exit 0", () => {
    const run = start({ KATA_INSTALL_START: "example" });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toMatch(
      /^npm start: this machine is not a Kubernetes node, so this is the plan of an example node\n/,
    );
    expect(run.stderr).toContain("On a node: kata-install plan --artifacts registry:REGISTRY/REPOSITORY");
    expect(run.stdout).toMatch(/^Preflight: passed\.\n\nShims:\n {2}\+ clh: /);
    expect(run.stdout).toContain("\n  + qemu: ");
    expect(run.stdout).toContain("\nArtifacts:\n  base: needed by clh, qemu");
    expect(run.stdout).toContain(
      "\n# create /etc/containerd/config.toml: containerd's configuration, with the Kata handlers\n",
    );
    expect(run.stdout).toContain("configuration-qemu.toml");
  });
});
