// A release's configuration file as kata-install reads it: its keys and their types (set, or shown
// commented out), the values its own comments list for a key, Kata's large integers kept exact,
// and its /opt/kata paths moved under another install directory and nothing else.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { moveInstallDir, parseKataToml, readConfigFile } from "../../src/release/config-file.js";
import { CONFIGS } from "../helpers/release.js";

const real = (arch: string, runtime: string, name: string) =>
  fs.readFileSync(path.join(CONFIGS, arch, runtime, name), "utf8");

describe("a configuration file of the release", () => {
  const qemu = readConfigFile(real("amd64", "go", "configuration-qemu.toml"), "configuration-qemu.toml");
  const clh = readConfigFile(real("amd64", "go", "configuration-clh.toml"), "configuration-clh.toml");
  const rust = readConfigFile(
    real("amd64", "rust", "configuration-qemu-runtime-rs.toml"),
    "configuration-qemu-runtime-rs.toml",
  );

  it("has every key it sets, with its type and line, and the section it configures", () => {
    expect(qemu.hypervisor).toBe("qemu");
    expect(qemu.keys.get("hypervisor.qemu.default_memory")).toMatchObject({ type: "int", set: true });
    expect(qemu.keys.get("hypervisor.qemu.kernel_params")).toMatchObject({ type: "string", set: true });
    expect(qemu.keys.get("hypervisor.qemu.enable_annotations")?.type).toBe("string[]");
    expect(qemu.keys.get("runtime.enable_debug")?.type).toBe("bool");
    const line = qemu.keys.get("hypervisor.qemu.default_memory")?.line as number;
    expect(qemu.text.split("\n")[line - 1]).toBe("default_memory = 2048");
    expect(qemu.keys.has("hypervisor.qemu.no_such_key")).toBe(false);
  });

  it("reads the values its comment lists above a key, only where its own value is one of them", () => {
    expect(clh.keys.get("hypervisor.clh.shared_fs")?.domain).toEqual([
      "virtio-fs",
      "virtio-fs-nydus",
      "none",
    ]);
    expect(qemu.keys.get("hypervisor.qemu.rootfs_type")?.domain).toEqual(["ext4", "xfs", "erofs"]);
    // The Rust qemu has no 9p: its own file says so.
    expect(rust.keys.get("hypervisor.qemu.shared_fs")?.domain).toEqual([
      "virtio-fs",
      "virtio-fs-nydus",
      "none",
    ]);
    // A key whose comment lists nothing has no domain: nothing is guessed.
    expect(qemu.keys.get("hypervisor.qemu.default_memory")?.domain).toBeUndefined();
  });

  it("counts a key shown commented out as one it documents, not one it sets", () => {
    const text =
      '[hypervisor.qemu]\n# kernel_params = ""\n#default_vcpus = 1\n# cold_plug_vfio = no_port (default) => no cold plug\npath = "/x"\n';
    const file = readConfigFile(text, "t.toml");
    expect(file.keys.get("hypervisor.qemu.kernel_params")).toMatchObject({
      type: "string",
      set: false,
      line: 2,
    });
    expect(file.keys.get("hypervisor.qemu.default_vcpus")).toMatchObject({ type: "int", set: false });
    // Prose that only looks like a key is not one.
    expect(file.keys.has("hypervisor.qemu.cold_plug_vfio")).toBe(false);
    expect(file.keys.get("hypervisor.qemu.path")?.set).toBe(true);
  });

  it("keeps runtime-rs's integers past 2^53 exact", () => {
    const table = parseKataToml(real("amd64", "rust", "configuration-clh-azure-runtime-rs.toml"));
    const found = JSON.stringify(table, (_, v) => (typeof v === "bigint" ? `${v}n` : v));
    expect(found).toContain('"compact_force_times":"9223372036854775807n"');
  });

  it("a file that does not parse is an error naming it and the line", () => {
    expect(() =>
      readConfigFile("[hypervisor.qemu]\npath = \n", "configuration-x.toml of Kata 9.9.9"),
    ).toThrow(/^configuration-x\.toml of Kata 9\.9\.9 does not parse: .*line 2/);
  });
});

describe("moveInstallDir", () => {
  it("moves each /opt/kata path, and nothing else, byte for byte", () => {
    const text = real("amd64", "go", "configuration-qemu.toml");
    const moved = moveInstallDir(text, "/srv/k8s/opt/kata-ci");
    expect(moved).not.toContain("/opt/kata/");
    expect(moved).toContain('path = "/srv/k8s/opt/kata-ci/bin/qemu-system-x86_64"');
    expect(moved.replaceAll("/srv/k8s/opt/kata-ci", "/opt/kata")).toBe(text);
    expect(moveInstallDir(text, "/opt/kata")).toBe(text);
    // Another install's directory is not this one's.
    expect(moveInstallDir('x = "/opt/kata-other/bin"', "/srv")).toBe('x = "/opt/kata-other/bin"');
  });
});
