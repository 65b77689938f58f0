// The overrides file and kata-deploy's environment: bad input is an error naming file, line and key
// (all of them at once); good input always wins, and says so where it contradicts the node.
import { afterAll, describe, expect, it } from "vitest";
import { parseEnv } from "../../src/decide/env.js";
import { parseOverrides } from "../../src/decide/overrides.js";
import { RuntimeKind } from "../../src/detect/runtime/schema.js";
import { catalog, check, checkIds, decideFacts, factsOf, releaseFor, shimNames } from "../helpers/decide.js";
import { inputErrorLines } from "../helpers/input-error.js";
import { amdSnpCrio, intelContainerd16, nestedVmWithoutVmx } from "../helpers/nodes.js";
import { removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);

const FILE = "/etc/kata-containers/kata-install.toml";
const problems = (text: string) => inputErrorLines(() => parseOverrides(FILE, text, catalog, checkIds));

describe("a malformed overrides file", () => {
  it("bad TOML: the line", () => {
    expect(problems('shims = ["qemu"\ndefault_shim = "qemu"\n')[0]).toMatch(
      /^\/etc\/kata-containers\/kata-install\.toml:\d+: invalid TOML at line \d+/,
    );
  });

  it("unknown keys, wrong types, unknown shims, keys and checks: every one, with its line", () => {
    expect(
      problems(`shims = ["qemu", "kemu"]
default_shim = "clh"
colour = "blue"

[runtime]
kind = "docker"

[artifacts.qemu]
source = "distro"

[artifacts.firecracker]
source = "distro"

[config.qemu]
"hypervisor.qemu.shared_fs" = "virtio-9p"
"hypervisor.qemu.default_memory" = "lots"
"hypervisor.qemu.no_such_key" = 1

[config.all]
"runtime.enable_debug" = true

[preflight]
ignore = ["nested-virtualization", "no-such-check"]
`),
    ).toEqual([
      // Every problem in one run: an unknown key hides none of the others. What the release
      // decides (kemu, no_such_key, the type of default_memory) is checked once it is read.
      `${FILE}:2: default_shim: "clh" is not among the shims this file pins (qemu, kemu)`,
      `${FILE}:3: colour: unknown key "colour"`,
      `${FILE}:6: runtime.kind: Invalid option: expected one of ${RuntimeKind.options.map((k) => `"${k}"`).join("|")}`,
      `${FILE}:12: artifacts.firecracker.source: artifact "firecracker" has no distribution counterpart (only qemu, virtiofsd)`,
      expect.stringMatching(/^\S+:23: preflight\.ignore\[1\]: unknown check "no-such-check"/),
    ]);
  });

  it("a mistyped key: its line, also as a table header's first part, and the key it is near", () => {
    expect(
      problems(`defualt_shim = "qemu"

[artifact.qemu]
source = "bundled"

[artifacts.virtiofsd]
sorce = "distro"

[handlers.qemu]
snapshoter = "nydus"
`),
    ).toEqual([
      `${FILE}:1: defualt_shim: unknown key "defualt_shim"; did you mean "default_shim"?`,
      `${FILE}:3: artifact: unknown key "artifact"; did you mean "artifacts"?`,
      `${FILE}:7: artifacts.virtiofsd.sorce: unknown key "sorce"; did you mean "source"?`,
      expect.stringMatching(
        /^\S+:10: handlers\.qemu\.snapshoter: unknown key "snapshoter"; did you mean "snapshotter"\?$/,
      ),
    ]);
  });

  it("values are checked, not only keys: a value Kata does not take is named with its line", () => {
    expect(
      problems(`[config.qemu]
"hypervisor.qemu.shared_fs" = "virtio-fss"
"hypervisor.qemu.default_memory" = -5
"hypervisor.qemu.block_device_driver" = "virtio-blk"
`),
    ).toEqual([
      `${FILE}:2: config.qemu."hypervisor.qemu.shared_fs": "virtio-fss" is not one of "virtio-fs", "virtio-9p", "virtio-fs-nydus", "inline-virtio-fs", "none"`,
      `${FILE}:3: config.qemu."hypervisor.qemu.default_memory": -5 is less than 0, the least Kata takes for default_memory`,
    ]);
  });

  it("a mistyped value of a closed set, or key of the release: the one it is near", async () => {
    expect(problems('[artifacts.qemu]\nsource = "bundeled"\n')[0]).toMatch(
      /^.*:2: artifacts\.qemu\.source: .*; did you mean "bundled"\?$/,
    );
    const decision = decideFacts(await factsOf(intelContainerd16()), {
      overrides: '[config.qemu]\n"hypervisor.qemu.default_memroy" = 1024\n',
    });
    expect(decision.checks.find((c) => c.id === "config-key")?.hint).toMatch(
      /^did you mean hypervisor\.qemu\.default_memory\? else see /,
    );
  });

  it("a dotted key left unquoted (read by TOML as tables): said with the quoted form", () => {
    expect(problems("[config.qemu]\nhypervisor.qemu.default_memory = 1024\n")).toEqual([
      `${FILE}:2: config.qemu."hypervisor": expected a value, not a table: a key of Kata's configuration is one quoted string here ("hypervisor.qemu.default_memory" = …), else TOML reads its dots as tables`,
    ]);
  });

  it("once the shape is right, every semantic problem is listed together", () => {
    expect(
      problems(`shims = ["qemu", "Kemu"]
default_shim = "clh"

[artifacts.firecracker]
source = "distro"

[config.qemu]
"hypervisor.qemu..default_memory" = 1

[preflight]
ignore = ["nested-virtualization", "no-such-check"]
`),
    ).toEqual([
      `${FILE}:1: shims[1]: "Kemu" is no shim name (lower-case letters, digits and "-", as in configuration-<shim>.toml)`,
      `${FILE}:2: default_shim: "clh" is not among the shims this file pins (qemu, Kemu)`,
      `${FILE}:5: artifacts.firecracker.source: artifact "firecracker" has no distribution counterpart (only qemu, virtiofsd)`,
      `${FILE}:8: config.qemu."hypervisor.qemu..default_memory": "hypervisor.qemu..default_memory" is no configuration key (expected a dotted key such as "hypervisor.qemu.default_memory")`,
      expect.stringMatching(
        new RegExp(
          `^${FILE}:11: preflight\\.ignore\\[1\\]: unknown check "no-such-check" \\(known: .*, or all\\)$`,
        ),
      ),
    ]);
  });

  it("against the release: a shim it does not ship, a key a shim's configuration lacks, a value of another type — each an error naming file, line, key, shim and version", async () => {
    const decision = decideFacts(await factsOf(intelContainerd16()), {
      overrides: `shims = ["qemu", "clh", "kemu"]

[config.qemu]
"hypervisor.qemu.default_memory" = "lots"
"hypervisor.qemu.no_such_key" = 1

[config.clh]
"hypervisor.qemu.path" = "/usr/bin/qemu"

[config.all]
"hypervisor.qemu.default_vcpus" = 2
`,
    });
    const errors = decision.checks.filter((c) => c.status === "fail" && c.severity === "error");
    expect(errors.map((c) => `${c.id}: ${c.message}`)).toEqual(
      expect.arrayContaining([
        `unknown-shim: ${FILE}:1: shims names the shim kemu, but Kata 4.1.0 ships no configuration for it, and no rule of kata-install's knows it (it ships: ${[...releaseFor("x86_64").shims.keys()].sort().join(", ")})`,
        `config-key: overrides ${FILE}:4 config.qemu."hypervisor.qemu.default_memory" sets hypervisor.qemu.default_memory = "lots" for qemu, but Kata 4.1.0's configuration-qemu.toml has it as an integer (Kata could not load the file with it); it is not set`,
        `config-key: overrides ${FILE}:5 config.qemu."hypervisor.qemu.no_such_key" sets hypervisor.qemu.no_such_key for qemu, but Kata 4.1.0's configuration-qemu.toml has no such key (renamed or misspelt?)`,
        `config-key: overrides ${FILE}:8 config.clh."hypervisor.qemu.path" sets hypervisor.qemu.path for clh, but Kata 4.1.0's configuration-clh.toml has no such key (renamed or misspelt?)`,
      ]),
    );
    expect(errors).toHaveLength(4);
    // A value of another type than the release's is never written, even with the check ignored.
    expect(decision.config.qemu?.["hypervisor.qemu.default_memory"]).toBeUndefined();
    // A value for every shim is for those whose configuration has the key: qemu's, not clh's.
    expect(decision.config.qemu?.["hypervisor.qemu.default_vcpus"]?.value).toBe(2);
    expect(decision.config.clh?.["hypervisor.qemu.default_vcpus"]).toBeUndefined();
  });
});

describe("kata-deploy's environment", () => {
  it("reads the architecture-specific variable before the plain one", () => {
    const env = parseEnv(
      { SHIMS: "qemu", SHIMS_X86_64: "clh fc", DEFAULT_SHIM_X86_64: "clh", DEFAULT_SHIM: "qemu" },
      "x86_64",
    );
    expect(env.shims).toEqual({ value: ["clh", "fc"], name: "SHIMS_X86_64" });
    expect(env.defaultShim).toEqual({ value: "clh", name: "DEFAULT_SHIM_X86_64" });
    expect(parseEnv({ SHIMS: "qemu", SHIMS_X86_64: "clh" }, "aarch64").shims?.name).toBe("SHIMS");
  });

  it("parses the mappings", () => {
    const env = parseEnv(
      {
        ALLOWED_HYPERVISOR_ANNOTATIONS: "default_vcpus qemu:default_memory,enable_iommu",
        SNAPSHOTTER_HANDLER_MAPPING: "qemu-tdx:nydus,clh:devmapper",
        PULL_TYPE_MAPPING: "qemu-tdx:guest-pull",
        EXPERIMENTAL_FORCE_GUEST_PULL: "qemu-tdx,qemu-snp",
        INSTALLATION_PREFIX: "/opt/kata-ci/",
        MULTI_INSTALL_SUFFIX: "ci",
        DEBUG: "yes",
      },
      "x86_64",
    );
    expect(env.allowedAnnotations).toEqual({
      all: { value: ["default_vcpus"], name: "ALLOWED_HYPERVISOR_ANNOTATIONS" },
      qemu: { value: ["default_memory", "enable_iommu"], name: "ALLOWED_HYPERVISOR_ANNOTATIONS" },
    });
    expect(env.snapshotters["qemu-tdx"]?.value).toBe("nydus");
    expect(env.pullTypes["qemu-tdx"]?.value).toBe("guest-pull");
    expect(Object.keys(env.forceGuestPull)).toEqual(["qemu-tdx", "qemu-snp"]);
    // As in kata-deploy: Kata goes to <INSTALLATION_PREFIX>/opt/kata.
    expect(env.prefix?.value).toBe("/opt/kata-ci/opt/kata");
    expect(env.debug?.value).toBe(true);
  });

  it("names every malformed variable", () => {
    expect(() =>
      parseEnv(
        { SHIMS: "qemu ke_mu", DEBUG: "maybe", PULL_TYPE_MAPPING: "qemu", INSTALLATION_PREFIX: "opt/kata" },
        "x86_64",
      ),
    ).toThrow(
      /SHIMS: "ke_mu" is no shim name[\s\S]*DEBUG: expected true or false \(or yes\/no, 1\/0, on\/off\), got "maybe"[\s\S]*PULL_TYPE_MAPPING: expected shim:value pairs separated by commas, got "qemu"[\s\S]*INSTALLATION_PREFIX: expected an absolute path/,
    );
  });
});

describe("precedence: defaults < rules < environment < overrides file < flags", async () => {
  const noNinePee = await factsOf(amdSnpCrio());

  it("an override that contradicts a fact is kept, with a warning naming both", () => {
    const decision = decideFacts(noNinePee, {
      overrides: '[config.qemu]\n"hypervisor.qemu.shared_fs" = "virtio-9p"\n',
    });
    const decided = decision.config.qemu?.["hypervisor.qemu.shared_fs"];
    expect(decided).toMatchObject({ value: "virtio-9p", source: { kind: "overrides", file: FILE, line: 2 } });
    expect(decided?.beaten).toEqual([
      {
        value: "virtio-fs",
        source: expect.objectContaining({ kind: "rule", name: "distro-qemu-virtio-fs" }),
      },
    ]);
    const warning = check(decision, "override-contradicts-facts");
    expect(warning).toMatchObject({ severity: "warning", status: "fail", rule: "distro-qemu-virtio-fs" });
    expect(warning?.message).toContain(
      'sets hypervisor.qemu.shared_fs = "virtio-9p" for qemu, but rule distro-qemu-virtio-fs decided "virtio-fs"',
    );
  });

  it("pinned shims win over the rules, and the contradiction is said", async () => {
    // clh cannot run without KVM: pinned anyway, kept, and the contradiction said.
    const spec = intelContainerd16();
    spec.kvmDevice = false;
    const decision = decideFacts(await factsOf(spec), {
      overrides: 'shims = ["qemu", "clh"]\ndefault_shim = "clh"\n',
    });
    expect(shimNames(decision)).toEqual(["clh", "qemu"]);
    expect(decision.shims.find((s) => s.name === "clh")?.source).toMatchObject({
      kind: "overrides",
      line: 1,
    });
    expect(decision.defaultShim).toMatchObject({
      value: "clh",
      source: { kind: "overrides", name: "default_shim" },
    });
    const contradictions = decision.checks
      .filter((c) => c.id === "override-contradicts-facts")
      .map((c) => c.message);
    expect(contradictions.join("\n")).toMatch(/installs clh, but needs kvm/);
    expect(decision.dropped.find((d) => d.name === "dragonball")?.reason).toMatch(
      /^not among the shims pinned by overrides/,
    );
  });

  it("SHIMS loses to the overrides file, which loses to --shims", async () => {
    const facts = await factsOf(intelContainerd16());
    const env = { SHIMS: "qemu clh dragonball" };
    expect(shimNames(decideFacts(facts, { env }))).toEqual(["clh", "dragonball", "qemu"]);
    expect(shimNames(decideFacts(facts, { env, overrides: 'shims = ["clh"]\n' }))).toEqual(["clh"]);
    const flagged = decideFacts(facts, {
      env,
      overrides: 'shims = ["clh"]\n',
      flags: { shims: ["dragonball"] },
    });
    expect(shimNames(flagged)).toEqual(["dragonball"]);
    expect(flagged.shims[0]?.source).toEqual({ kind: "flag", name: "--shims" });
  });

  it("DEBUG asks for debug handlers and leaves the shims' own values alone", async () => {
    const facts = await factsOf(intelContainerd16());
    const decision = decideFacts(facts, {
      env: { DEBUG: "true" },
      overrides: '[config.clh]\n"runtime.enable_debug" = false\n',
    });
    expect(decision.install.debug).toMatchObject({ value: true, source: { kind: "env", name: "DEBUG" } });
    expect(decision.config.qemu?.["runtime.enable_debug"]).toBeUndefined();
    expect(decision.config.clh?.["runtime.enable_debug"]).toMatchObject({
      value: false,
      source: { kind: "overrides" },
      beaten: [],
    });
    expect(decideFacts(facts, {}).install.debug.value).toBe(false);
  });

  it("a default shim that will not be installed is an error", async () => {
    const facts = await factsOf(intelContainerd16());
    const decision = decideFacts(facts, { env: { DEFAULT_SHIM: "fc" } });
    expect(check(decision, "default-shim")).toMatchObject({
      status: "fail",
      severity: "error",
      message: "the default shim fc (environment DEFAULT_SHIM) is not among the shims to install",
    });
  });

  it("ignored errors become warnings, by id, case-insensitively, or all", async () => {
    const facts = await factsOf(nestedVmWithoutVmx());
    const byFile = decideFacts(facts, { overrides: '[preflight]\nignore = ["Nested-Virtualization"]\n' });
    expect(check(byFile, "nested-virtualization")).toMatchObject({ status: "ignored", severity: "warning" });
    expect(check(byFile, "container-runtime")?.status).toBe("fail");
    const all = decideFacts(facts, { flags: { ignorePreflightErrors: ["all"] } });
    expect(all.checks.filter((c) => c.status === "fail")).toEqual([]);
  });
});

describe("kata-deploy settings kata-install does not carry out", () => {
  it("are refused with why, never silently ignored", () => {
    expect(() => parseEnv({ EXPERIMENTAL_SETUP_SNAPSHOTTER: "stargz" }, "x86_64")).toThrow(
      /EXPERIMENTAL_SETUP_SNAPSHOTTER: "stargz" is no snapshotter kata-deploy sets up/,
    );
  });

  it("CONTAINERD_CONFIG_FILE_NAME is a plain file name, as in kata-deploy", () => {
    expect(() => parseEnv({ CONTAINERD_CONFIG_FILE_NAME: "config-custom.toml" }, "x86_64")).not.toThrow();
    expect(() => parseEnv({ CONTAINERD_CONFIG_FILE_NAME: "../passwd" }, "x86_64")).toThrow(
      /CONTAINERD_CONFIG_FILE_NAME: expected a file name in \/etc\/containerd \(no "\/"\), got "..\/passwd"/,
    );
  });
});
