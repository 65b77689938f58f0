// The hashes a saved plan keeps of its inputs.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { hash } from "../../src/hash.js";
import { prepare } from "../../src/inputs/prepare.js";
import { envHashes, factsHashes, overridesInput, recordingEnv } from "../../src/install/plan-inputs.js";

describe("recordingEnv", () => {
  it("remembers every variable asked for, set or not, and nothing else", () => {
    const recorded = recordingEnv({ SHIMS: "qemu", PATH: "/usr/bin", HOME: "/root" });
    expect(recorded.env.SHIMS).toBe("qemu");
    expect(recorded.env.DEBUG).toBeUndefined();
    expect("AGENT_NO_PROXY" in recorded.env).toBe(false);
    expect(recorded.read()).toEqual(["AGENT_NO_PROXY", "DEBUG", "SHIMS"]);
  });

  it("records, through the decide stage's inputs, kata-deploy's variables only", async () => {
    const recorded = recordingEnv({ SHIMS: "qemu clh", PATH: "/usr/bin", KUBECONFIG: "/k" });
    await prepare({ hostRoot: "/nonexistent", overrides: null, env: recorded.env });
    expect(recorded.read()).toContain("SHIMS");
    expect(recorded.read()).toContain("INSTALLATION_PREFIX");
    expect(recorded.read()).not.toContain("PATH");
    expect(recorded.read()).not.toContain("KUBECONFIG");
  });
});

describe("envHashes and factsHashes", () => {
  it("hash a variable's value, null when unset", () => {
    const hashes = envHashes(["SHIMS", "DEBUG"], { SHIMS: "qemu" });
    expect(hashes.SHIMS).toMatch(/^[0-9a-f]{64}$/);
    expect(hashes.DEBUG).toBeNull();
    expect(envHashes(["SHIMS"], { SHIMS: "clh" }).SHIMS).not.toBe(hashes.SHIMS);
  });

  it("hash the same facts the same whatever their keys' order, with one hash per leaf", () => {
    const one = { kvm: { device: true, module: "kvm_intel" }, cpu: { flags: ["vmx", "ept"] } };
    const other = { cpu: { flags: ["vmx", "ept"] }, kvm: { module: "kvm_intel", device: true } };
    const a = factsHashes(one as never);
    expect(factsHashes(other as never)).toEqual(a);
    expect(Object.keys(a.paths).sort()).toEqual(["cpu.flags", "kvm.device", "kvm.module"]);
    const moved = factsHashes({ ...one, kvm: { ...one.kvm, device: false } } as never);
    expect(moved.sha256).not.toBe(a.sha256);
    expect(moved.paths["kvm.device"]).not.toBe(a.paths["kvm.device"]);
    expect(moved.paths["cpu.flags"]).toBe(a.paths["cpu.flags"]);
  });
});

describe("overridesInput", () => {
  it("is the hash of the text the plan parsed, not of the file as it is when the plan is saved", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-overrides-"));
    try {
      const file = path.join(dir, "kata-install.toml");
      const read = 'shims = ["qemu"]\n';
      fs.writeFileSync(file, read);
      const { overrides } = await prepare({ hostRoot: "/nonexistent", overrides: file, env: {} });
      // Changed between the plan's read and its saving: the plan was made from the first text.
      fs.writeFileSync(file, 'shims = ["clh"]\n');
      expect(overridesInput(file, overrides)).toEqual({ path: file, sha256: hash(read) });
      expect(hash(read)).toBe(hash(Buffer.from(read)));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("names the node's own file, with no hash, when there is none", async () => {
    const { overrides } = await prepare({ hostRoot: "/nonexistent", env: {} });
    expect(overridesInput(null, overrides)).toEqual({
      path: "/etc/kata-containers/kata-install.toml",
      sha256: null,
    });
  });
});
