// Kata's loading of a shim's configuration, as its own loaders do it at 4.1.0 (Go: pkg/katautils/
// config.go; Rust: kata-types config/drop_in.rs): the base, then every config.d/ entry in byte
// order, merged key by key; what either runtime refuses, in its own words.
import { describe, expect, it } from "vitest";
import { parseKataToml } from "../../src/release/config-file.js";
import type { ConfigEntry } from "../../src/release/drop-in-dir.js";
import { knownKeysOf, loadKataConfig, merge } from "../../src/render/kata-loader.js";

const BASE = parseKataToml(`[hypervisor.qemu]
path = "/opt/kata/bin/qemu-system-x86_64"
kernel_params = "cgroup_no_v1=all"
default_memory = 2048
default_vcpus = 1
enable_annotations = ["enable_iommu"]
[agent.kata]
dial_timeout = 45
[runtime]
enable_debug = false
`);
const REMOTE = parseKataToml(`[hypervisor.remote]
remote_hypervisor_socket = "/run/peerpod/hypervisor.sock"
[runtime]
experimental_force_guest_pull = false
`);
const known = knownKeysOf([BASE, REMOTE]);
const base = {
  file: "/opt/kata/share/defaults/kata-containers/runtimes/qemu/configuration-qemu.toml",
  table: BASE,
};
const dir = "/opt/kata/share/defaults/kata-containers/runtimes/qemu/config.d";

const file = (name: string, text: string, kind: ConfigEntry["kind"] = "file"): ConfigEntry => ({
  name,
  file: `${dir}/${name}`,
  kind,
  table: parseKataToml(text),
  problem: null,
});

describe("the order and the merge", () => {
  it("every entry counts, in byte order of the names, a later one winning; lists and strings replaced", () => {
    const loaded = loadKataConfig(
      base,
      [
        file("B-upper.txt", "[hypervisor.qemu]\ndefault_memory = 3000\n"),
        file(
          "50-kata-install.toml",
          '[hypervisor.qemu]\ndefault_memory = 4096\nenable_annotations = ["default_vcpus"]\n',
        ),
        file(".hidden", "[hypervisor.qemu]\ndefault_memory = 1024\n"),
      ],
      "go",
      known,
    );
    expect(loaded.refusals).toEqual([]);
    expect(loaded.config.hypervisor).toMatchObject({
      qemu: {
        default_memory: 3000,
        enable_annotations: ["default_vcpus"],
        kernel_params: "cgroup_no_v1=all",
      },
    });
  });

  it("tables merge key by key, never replacing a sibling", () => {
    expect(merge({ a: { b: 1, c: [1, 2] } }, { a: { c: [3] }, d: "x" })).toEqual({
      a: { b: 1, c: [3] },
      d: "x",
    });
  });
});

describe("what Kata refuses, and says", () => {
  it("a value of another type (Go decodes each drop-in into its typed structures)", () => {
    const loaded = loadKataConfig(
      base,
      [file("60-admin.toml", '[hypervisor.qemu]\ndefault_memory = "4096"\n')],
      "go",
      known,
    );
    expect(loaded.refusals).toEqual([
      {
        file: `${dir}/60-admin.toml`,
        reason: `error decoding file "${dir}/60-admin.toml": toml: (last key "hypervisor.qemu.default_memory"): incompatible types: TOML value has type string; destination has type integer`,
      },
    ]);
    // A number for a number field, whole or not: default_vcpus is a float that the file writes as 1.
    expect(
      loadKataConfig(base, [file("60.toml", "[hypervisor.qemu]\ndefault_vcpus = 1.5\n")], "go", known)
        .refusals,
    ).toEqual([]);
  });

  it("a link: followed by Go; refused by Rust, as a directory is by both; a dangling one by Go", () => {
    const link = file("70-link.toml", "[hypervisor.qemu]\ndefault_memory = 8192\n", "link");
    expect(loadKataConfig(base, [link], "go", known).refusals).toEqual([]);
    expect(loadKataConfig(base, [link], "rust", known).refusals[0]?.reason).toMatch(
      /^drop-in cfg file can only be a regular file or a symlink/,
    );
    const dangling: ConfigEntry = {
      name: "80-gone.toml",
      file: `${dir}/80-gone.toml`,
      kind: "link",
      table: null,
      problem: "cannot read: no such file or directory (a link to nothing)",
    };
    expect(loadKataConfig(base, [dangling], "go", known).refusals).toEqual([
      {
        file: `${dir}/80-gone.toml`,
        reason: `error reading file "${dir}/80-gone.toml": no such file or directory (a link to nothing)`,
      },
    ]);
    const directory: ConfigEntry = {
      name: "90-dir",
      file: `${dir}/90-dir`,
      kind: "directory",
      table: null,
      problem: "is a directory",
    };
    expect(loadKataConfig(base, [directory], "go", known).refusals[0]?.reason).toBe(
      `error reading file "${dir}/90-dir": read ${dir}/90-dir: is a directory`,
    );
  });

  it("the first refusal stops the load: the files after it are not read", () => {
    const loaded = loadKataConfig(
      base,
      [
        file("60.toml", '[runtime]\nenable_debug = "yes"\n'),
        file("70.toml", "[hypervisor.qemu]\ndefault_memory = 1\n"),
      ],
      "go",
      known,
    );
    expect(loaded.refusals).toHaveLength(1);
    expect(loaded.refusals[0]?.reason).toContain("TOML value has type string; destination has type boolean");
    expect(loaded.config.hypervisor).toMatchObject({ qemu: { default_memory: 2048 } });
  });

  it("a section of another hypervisor, or of one Kata does not know", () => {
    const other = loadKataConfig(
      base,
      [file("60.toml", "[hypervisor.clh]\ndefault_memory = 1234\n")],
      "go",
      known,
    );
    expect(other.refusals[0]?.reason).toMatch(
      /^its drop-ins add hypervisor sections \(\[hypervisor\.qemu\], \[hypervisor\.clh\]\): Kata's Go runtime configures each in turn, and which one it runs is left to Go's random map order/,
    );
    const unknown = loadKataConfig(
      base,
      [file("60.toml", "[hypervisor.QEMU]\ndefault_memory = 1\n")],
      "go",
      known,
    );
    expect(unknown.refusals[0]?.reason).toBe(
      `${base.file}: configuration file contains invalid hypervisor section: "QEMU"`,
    );
  });
});

describe("what Kata reads and ignores", () => {
  it("a key no configuration of the release names, in a drop-in's hypervisor table: said, as Go refuses what it does not know", () => {
    const loaded = loadKataConfig(
      base,
      [file("60.toml", "[hypervisor.qemu]\ndefault_memroy = 4096\n")],
      "go",
      known,
    );
    expect(loaded.refusals).toEqual([]);
    expect(loaded.ignored).toEqual([
      {
        key: "hypervisor.qemu.default_memroy",
        why: `${dir}/60.toml sets it, and no configuration of this release names it: Kata's Go runtime refuses a key it does not know in a drop-in's [hypervisor.*] table ("key "default_memroy" not found"), the whole configuration with it`,
      },
    ]);
    // A key another shim's file names is known: the runtime reads it for every shim.
    expect(
      loadKataConfig(
        base,
        [file("60.toml", "[runtime]\nexperimental_force_guest_pull = true\n")],
        "go",
        known,
      ).ignored,
    ).toEqual([]);
  });

  it("the remote hypervisor's keys that Go's runtime does not read, when a drop-in sets them", () => {
    const remote = {
      file: "/opt/kata/share/defaults/kata-containers/runtimes/remote/configuration-remote.toml",
      table: REMOTE,
    };
    const loaded = loadKataConfig(
      remote,
      [
        file(
          "50-kata-install.toml",
          '[hypervisor.remote]\nkernel_params = "agent.https_proxy=http://p"\nenable_annotations = ["machine_type"]\n',
        ),
      ],
      "go",
      knownKeysOf([BASE, REMOTE]),
    );
    expect(loaded.ignored.map((i) => i.key)).toEqual(["hypervisor.remote.kernel_params"]);
    expect(loaded.ignored[0]?.why).toContain(
      "Kata's Go runtime reads only remote_hypervisor_socket, remote_hypervisor_timeout, machine_type, enable_annotations, guest_hook_path of the remote hypervisor",
    );
  });
});
