// EXPERIMENTAL_SETUP_SNAPSHOTTER=erofs decided as kata-deploy decides it: the variables read and
// checked as its config.rs reads them (bad values named, by variable), containerd 2.2 required,
// refused where containerd's own file is edited in place, ignored on CRI-O, the kernel's erofs and
// dm-verity checked, Go runtime shims refused on merged erofs; each decision shown by explain with
// the variable that made it.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { Decision } from "../../src/decide/decision.js";
import { parseEnv } from "../../src/decide/env.js";
import { takeoverSnapshotterChecks } from "../../src/decide/takeover.js";
import { detectOptionsFromEnv } from "../../src/detect/context.js";
import { detectFacts } from "../../src/detect/facts.js";
import { layoutFacts, RUNTIME_LAYOUTS } from "../../src/detect/runtime/layouts.js";
import { explainDocument, renderExplain, selectExplained } from "../../src/output/explain.js";
import { check, decideFacts, decideOn, factsOf } from "../helpers/decide.js";
import { inputErrorLines } from "../helpers/input-error.js";
import {
  amdSnpCrio,
  intelContainerd16,
  k3sImportingDropIns,
  mkfsErofsScript,
  withFsVerity,
} from "../helpers/nodes.js";
import { buildHost, type NodeSpec } from "../helpers/test-host.js";

const SETUP = { EXPERIMENTAL_SETUP_SNAPSHOTTER: "erofs" };
const envErrors = (env: Record<string, string>) => inputErrorLines(() => parseEnv(env, "x86_64"));

/** Intel with containerd `version` (2.2.0 by default), its main file version 3 importing conf.d/. */
function containerd(version = "2.2.0", edit: (spec: NodeSpec) => void = () => {}): NodeSpec {
  const spec = intelContainerd16();
  spec.commands = {
    "/usr/bin/containerd": `echo "containerd containerd.io ${version} 0123abcd"`,
    // What erofs needs on the node (the differ runs it), as new as kata-deploy's options want it.
    "/usr/bin/mkfs.erofs": mkfsErofsScript(),
  };
  spec.files = {
    "/etc/containerd/config.toml": 'version = 3\nimports = ["/etc/containerd/conf.d/*.toml"]\n',
  };
  const verity = withFsVerity(spec);
  edit(verity);
  return verity;
}

const failing = (decision: Decision, id: string) =>
  decision.checks.filter((c) => c.id === id && c.status === "fail");

describe("the variables, read as kata-deploy's config.rs reads them", () => {
  it("EXPERIMENTAL_SETUP_SNAPSHOTTER: a comma list, trimmed, empty entries naming nothing", () => {
    expect(
      parseEnv({ EXPERIMENTAL_SETUP_SNAPSHOTTER: " erofs , ,erofs" }, "x86_64").setupSnapshotters,
    ).toEqual({
      value: ["erofs"],
      name: "EXPERIMENTAL_SETUP_SNAPSHOTTER",
    });
    expect(parseEnv({ EXPERIMENTAL_SETUP_SNAPSHOTTER: " , " }, "x86_64").setupSnapshotters).toBeUndefined();
    expect(parseEnv({}, "x86_64").setupSnapshotters).toBeUndefined();
  });

  it("nydus is taken (nydus-setup.test.ts); any other name is an error naming the variable and the entry", () => {
    expect(envErrors({ EXPERIMENTAL_SETUP_SNAPSHOTTER: "nydus,erofs,overlayfs,EROFS" })).toEqual([
      'environment: EXPERIMENTAL_SETUP_SNAPSHOTTER: "overlayfs" is no snapshotter kata-deploy sets up (it knows erofs and nydus)',
      // As kata-deploy matches it: exactly.
      'environment: EXPERIMENTAL_SETUP_SNAPSHOTTER: "EROFS" is no snapshotter kata-deploy sets up (it knows erofs and nydus)',
    ]);
  });

  it("EROFS_MERGE_MODE lower-cased, EROFS_SNAPSHOTTER_MODE exact, EROFS_DMVERITY the chart's dmverity", () => {
    const env = parseEnv(
      { EROFS_MERGE_MODE: " Unmerged ", EROFS_SNAPSHOTTER_MODE: "memory", EROFS_DMVERITY: "DMVerity" },
      "x86_64",
    );
    expect(env.erofsMergeMode).toEqual({ value: "unmerged", name: "EROFS_MERGE_MODE" });
    expect(env.erofsSnapshotterMode).toEqual({ value: "memory", name: "EROFS_SNAPSHOTTER_MODE" });
    expect(env.erofsDmverity).toEqual({ value: true, name: "EROFS_DMVERITY" });
    const unset = parseEnv(
      { EROFS_MERGE_MODE: "", EROFS_SNAPSHOTTER_MODE: " ", EROFS_DMVERITY: "" },
      "x86_64",
    );
    expect([unset.erofsMergeMode, unset.erofsSnapshotterMode, unset.erofsDmverity]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
  });

  it("a bad value is an error naming the variable and the value, every one at once", () => {
    expect(
      envErrors({ EROFS_MERGE_MODE: "flat", EROFS_SNAPSHOTTER_MODE: "Memory", EROFS_DMVERITY: "true" }),
    ).toEqual([
      'environment: EROFS_MERGE_MODE: expected merged (the default) or unmerged, got "flat"',
      'environment: EROFS_SNAPSHOTTER_MODE: expected disk (the default) or memory, got "Memory"',
      'environment: EROFS_DMVERITY: expected "dmverity" (dm-verity on, as kata-deploy\'s chart sets it) or unset (off), got "true"; kata-deploy would take it as off',
    ]);
  });
});

describe("containerd 2.2: set up, each setting from its variable or kata-deploy's default", () => {
  it("kata-deploy's defaults: merged, disk, no dm-verity", async () => {
    const decision = await decideOn(containerd(), { env: SETUP });
    expect(decision.checks.filter((c) => c.id.startsWith("erofs") || c.id === "snapshotter-setup")).toEqual(
      [],
    );
    const byDefault = { kind: "default", name: "kata-deploy's default" };
    expect(decision.erofs).toEqual({
      source: { kind: "env", name: "EXPERIMENTAL_SETUP_SNAPSHOTTER" },
      mergeMode: { value: "merged", source: byDefault, beaten: [] },
      snapshotterMode: { value: "disk", source: byDefault, beaten: [] },
      dmverity: { value: false, source: byDefault, beaten: [] },
      fsverity: {
        value: true,
        source: {
          kind: "default",
          name: "runtime.fsVerity: /var/lib/containerd is on btrfs (/var/lib/containerd), which has fs-verity with CONFIG_FS_VERITY",
        },
        beaten: [],
      },
    });
  });

  it("the EROFS_* variables over the defaults, shown by explain with their source", async () => {
    const decision = await decideOn(containerd(), {
      env: {
        ...SETUP,
        EROFS_MERGE_MODE: "unmerged",
        EROFS_SNAPSHOTTER_MODE: "memory",
        EROFS_DMVERITY: "dmverity",
      },
    });
    expect(decision.erofs?.snapshotterMode).toMatchObject({
      value: "memory",
      source: { kind: "env", name: "EROFS_SNAPSHOTTER_MODE" },
      beaten: [{ value: "disk", source: { kind: "default", name: "kata-deploy's default" } }],
    });
    const { selected } = selectExplained(explainDocument(decision).values, ["snapshotters.erofs"]);
    expect(renderExplain(selected)).toBe(
      [
        "snapshotters.erofs = \"set up\"  — containerd's built-in erofs snapshotter, configured in kata-install's containerd drop-in",
        "    set by environment EXPERIMENTAL_SETUP_SNAPSHOTTER",
        'snapshotters.erofs.merge_mode = "unmerged"  — one layer.erofs per layer (max_unmerged_layers left to containerd), which the Go runtime reads too',
        "    set by environment EROFS_MERGE_MODE",
        '    beat   "merged" from kata-deploy\'s default',
        'snapshotters.erofs.snapshotter_mode = "memory"  — the writable layer in memory (default_size = "0")',
        "    set by environment EROFS_SNAPSHOTTER_MODE",
        '    beat   "disk" from kata-deploy\'s default',
        'snapshotters.erofs.dmverity = true  — dm-verity over the layers (dmverity_mode = "on", the differ\'s enable_dmverity = true)',
        "    set by environment EROFS_DMVERITY",
        "    beat   false from kata-deploy's default",
        "",
      ].join("\n"),
    );
  });

  it("not asked: nothing set up; EROFS_* alone are said to have no effect", async () => {
    const none = await decideOn(containerd());
    expect(none.erofs).toBeNull();
    expect(failing(none, "snapshotter-setup")).toEqual([]);
    expect(explainDocument(none).values.filter((v) => v.key.startsWith("snapshotters."))).toEqual([]);
    const stray = await decideOn(containerd(), {
      env: { EROFS_MERGE_MODE: "unmerged", EROFS_DMVERITY: "dmverity" },
    });
    expect(stray.erofs).toBeNull();
    expect(check(stray, "snapshotter-setup")).toMatchObject({
      severity: "warning",
      message:
        "EROFS_MERGE_MODE, EROFS_DMVERITY are set, but EXPERIMENTAL_SETUP_SNAPSHOTTER does not name erofs: no effect",
    });
  });
});

describe("where it cannot be set up: an error naming the variable and why, or a warning on CRI-O", () => {
  it("containerd 2.1: too old, naming its version (kata-deploy requires 2.2 too)", async () => {
    const decision = await decideOn(containerd("2.1.5"), { env: SETUP });
    expect(failing(decision, "snapshotter-setup")).toEqual([
      expect.objectContaining({
        severity: "error",
        message:
          "EXPERIMENTAL_SETUP_SNAPSHOTTER=erofs: containerd 2.1.5 is older than 2.2, which the erofs snapshotter settings need (kata-deploy requires 2.2.0 or newer too)",
        hint: "upgrade containerd to 2.2 or later, or take erofs out of EXPERIMENTAL_SETUP_SNAPSHOTTER",
      }),
    ]);
  });

  it("containerd 1.x (config.toml edited in place): refused, and nothing of erofs decided", async () => {
    const decision = await decideOn(intelContainerd16(), { env: SETUP });
    expect(decision.containerdInPlace.value).toBe(true);
    expect(decision.erofs).toBeNull();
    expect(failing(decision, "snapshotter-setup")).toEqual([
      expect.objectContaining({
        severity: "error",
        message: expect.stringMatching(
          /^EXPERIMENTAL_SETUP_SNAPSHOTTER=erofs: containerd 1\.6\.12 is older than 2\.2, .*: erofs is not set up$/,
        ),
      }),
    ]);
  });

  it("containerd whose version is unknown (edited in place): refused, not set up", async () => {
    const decision = await decideOn(
      containerd("2.2.0", (spec) => {
        spec.commands = { "/usr/bin/containerd": "exit 1" };
      }),
      { env: SETUP },
    );
    expect(decision.erofs).toBeNull();
    expect(check(decision, "snapshotter-setup")?.message).toBe(
      "EXPERIMENTAL_SETUP_SNAPSHOTTER=erofs: containerd's configuration is edited in place on this node (containerd's version is not known), and kata-install sets erofs up only in a drop-in of its own: erofs is not set up",
    );
  });

  it("microk8s (its template edited in place): refused, not set up", async () => {
    const spec = containerd();
    spec.commands = { "/snap/bin/microk8s": 'echo "MicroK8s v1.32.3 revision 8148"' };
    spec.sockets = ["/var/snap/microk8s/common/run/containerd.sock"];
    spec.files = {
      "/var/snap/microk8s/current/args/containerd-template.toml":
        'version = 3\n[plugins."io.containerd.cri.v1.images"]\n',
      "/var/snap/microk8s/current/args/containerd.toml":
        'version = 3\n[plugins."io.containerd.cri.v1.images"]\n',
    };
    const decision = await decideOn(spec, { env: SETUP });
    expect(decision.runtime.value).toBe("microk8s");
    expect(decision.erofs).toBeNull();
    expect(check(decision, "snapshotter-setup")).toMatchObject({
      severity: "error",
      message: expect.stringContaining("(microk8s's template)"),
    });
  });

  it("k3s: its containerd's version is not known: refused unless ignored, and then set up in its drop-in", async () => {
    const refused = await decideOn(k3sImportingDropIns(), { env: SETUP });
    expect(check(refused, "snapshotter-setup")).toMatchObject({
      severity: "error",
      status: "fail",
      message:
        "EXPERIMENTAL_SETUP_SNAPSHOTTER=erofs: k3s 1.31.2 does not say which containerd it embeds, and the erofs snapshotter settings need containerd 2.2 or later",
    });
    const knowingly = await decideOn(k3sImportingDropIns(), {
      env: SETUP,
      flags: { ignorePreflightErrors: ["snapshotter-setup"] },
    });
    expect(check(knowingly, "snapshotter-setup")?.status).toBe("ignored");
    expect(knowingly.erofs).not.toBeNull();
  });

  it("a runtime the overrides file names over the one detected: its version is not known, refused unless ignored", async () => {
    const decision = await decideOn(k3sImportingDropIns(), {
      env: SETUP,
      overrides: '[runtime]\nkind = "containerd"\n',
    });
    expect(check(decision, "snapshotter-setup")?.message).toBe(
      "EXPERIMENTAL_SETUP_SNAPSHOTTER=erofs: containerd's version is not known, and the erofs snapshotter settings need containerd 2.2 or later",
    );
  });

  // Whose version a kind reports is its layout's: a containerd-based kind added later is held to
  // what its layout says, not to whether it is called containerd.
  it.each(
    Object.values(RUNTIME_LAYOUTS)
      .filter((l) => l.family === "containerd")
      .map((l) => [l.kind, l.versionOf] as const),
  )(
    "%s: its version (its %s's) is taken for containerd's exactly when its layout says so",
    async (kind, versionOf) => {
      const facts = await factsOf(k3sImportingDropIns(), SETUP);
      const at = (version: string) =>
        check(
          decideFacts(
            { ...facts, runtime: { ...facts.runtime, kind, ...layoutFacts(kind), version } },
            { env: SETUP },
          ),
          "snapshotter-setup",
        )?.message ?? "";
      const tooOld = "containerd 1.0.0 is older than 2.2";
      if (versionOf === "family") expect(at("1.0.0")).toContain(tooOld);
      else {
        expect(at("1.0.0")).not.toContain(tooOld);
        expect(at("9.9.9")).toMatch(/does not say which containerd it embeds|microk8s's template/);
      }
    },
  );

  it("CRI-O: a warning that it is ignored there, nothing set up (one DaemonSet's environment is the cluster's)", async () => {
    const decision = await decideOn(amdSnpCrio(), { env: { ...SETUP, EROFS_SNAPSHOTTER_MODE: "memory" } });
    expect(decision.erofs).toBeNull();
    expect(failing(decision, "snapshotter-setup")).toEqual([
      expect.objectContaining({
        severity: "warning",
        message:
          "EXPERIMENTAL_SETUP_SNAPSHOTTER=erofs: the erofs snapshotter is containerd's, and this node runs CRI-O: ignored here (as kata-deploy ignores it)",
      }),
    ]);
  });
});

describe("the kernel: erofs, and with EROFS_DMVERITY device-mapper's verity target", () => {
  const without = (...gone: string[]) =>
    containerd("2.2.0", (spec) => {
      spec.kernel.available = (spec.kernel.available ?? []).filter((m) => !gone.includes(m));
    });

  it("a module there but not loaded is enough (the kernel loads it at the first mount)", async () => {
    const decision = await decideOn(containerd(), { env: { ...SETUP, EROFS_DMVERITY: "dmverity" } });
    expect(decision.checks.find((c) => c.id === "erofs-kernel")).toBeUndefined();
  });

  it("no erofs: an error naming it and what to build in", async () => {
    const decision = await decideOn(without("erofs"), { env: SETUP });
    expect(check(decision, "erofs-kernel")).toMatchObject({
      severity: "error",
      message:
        "EXPERIMENTAL_SETUP_SNAPSHOTTER=erofs: the kernel has no erofs (CONFIG_EROFS_FS absent from /boot/config-5.15.0-105-generic)",
      hint: "load or build in CONFIG_EROFS_FS, and make it persistent across reboots",
    });
  });

  it("no dm-verity: an error only when EROFS_DMVERITY asks for it", async () => {
    expect(check(await decideOn(without("dm_verity"), { env: SETUP }), "erofs-kernel")).toBeUndefined();
    const decision = await decideOn(without("dm_verity"), { env: { ...SETUP, EROFS_DMVERITY: "dmverity" } });
    expect(check(decision, "erofs-kernel")?.message).toMatch(
      /^EXPERIMENTAL_SETUP_SNAPSHOTTER=erofs with EROFS_DMVERITY: the kernel has no dm_verity \(/,
    );
  });
});

describe("the node's mkfs.erofs, which containerd's erofs differ runs with kata-deploy's mkfs_options", () => {
  /** Facts as the pipeline detects them with `env`: mkfs.erofs is looked for only when erofs is asked. */
  const decideWith = async (mkfs: string | null, env: Record<string, string> = SETUP) => {
    const spec = containerd("2.2.0", (s) => {
      delete s.commands?.["/usr/bin/mkfs.erofs"];
      if (mkfs !== null) s.commands = { ...s.commands, "/usr/sbin/mkfs.erofs": mkfs };
    });
    const facts = await detectFacts(buildHost(spec).host, detectOptionsFromEnv(env));
    return { facts, decision: decideFacts(facts, { env }) };
  };

  it("looked for only when EXPERIMENTAL_SETUP_SNAPSHOTTER names erofs", async () => {
    expect(detectOptionsFromEnv({ EXPERIMENTAL_SETUP_SNAPSHOTTER: "nydus, erofs" }).erofsUtils).toBe(true);
    expect(detectOptionsFromEnv({ EXPERIMENTAL_SETUP_SNAPSHOTTER: "nydus" }).erofsUtils).toBeUndefined();
    const { facts } = await decideWith(mkfsErofsScript(), {});
    expect(facts.runtime.mkfsErofs).toBeUndefined();
  });

  it("erofs-utils 1.8 (trixie's 1.8.6): both options named, nothing said", async () => {
    const { facts, decision } = await decideWith(mkfsErofsScript("1.8"));
    expect(facts.runtime.mkfsErofs).toEqual({ path: "/usr/sbin/mkfs.erofs", options: ["mkfs-time", "sort"] });
    expect(check(decision, "erofs-utils")).toBeUndefined();
  });

  it("none, or one without the options: an error naming what is missing; one that does not answer: a warning", async () => {
    expect(check((await decideWith(null)).decision, "erofs-utils")).toMatchObject({
      severity: "error",
      message:
        "EXPERIMENTAL_SETUP_SNAPSHOTTER=erofs: the node has no mkfs.erofs (erofs-utils), which containerd's erofs differ runs for every layer",
      hint: "install erofs-utils 1.8.2 or later on the node",
    });
    expect(check((await decideWith(mkfsErofsScript("1.5"))).decision, "erofs-utils")?.message).toBe(
      "EXPERIMENTAL_SETUP_SNAPSHOTTER=erofs: /usr/sbin/mkfs.erofs does not take --mkfs-time, --sort, which the erofs differ's mkfs_options pass it (erofs-utils 1.8.2 has them)",
    );
    expect(check((await decideWith("exit 3")).decision, "erofs-utils")).toMatchObject({
      severity: "warning",
      message:
        "EXPERIMENTAL_SETUP_SNAPSHOTTER=erofs: /usr/sbin/mkfs.erofs did not answer --help: whether it takes --mkfs-time and --sort (erofs-utils 1.8.2) is not known",
    });
  });
});

describe("the real mkfs.erofs of this machine's Debian (erofs-utils 1.5, older than kata-deploy's options)", () => {
  it("read through the same code as a node's: neither option named, an error saying which", async () => {
    const host = buildHost(containerd("2.2.0", (s) => delete s.commands?.["/usr/bin/mkfs.erofs"]));
    fs.mkdirSync(path.join(host.root, "usr/sbin"), { recursive: true });
    fs.copyFileSync("/usr/bin/mkfs.erofs", path.join(host.root, "usr/sbin/mkfs.erofs"));
    fs.chmodSync(path.join(host.root, "usr/sbin/mkfs.erofs"), 0o755);
    const facts = await detectFacts(host.host, detectOptionsFromEnv(SETUP));
    // It answered --help (its usage text), and names neither --mkfs-time nor --sort.
    expect(facts.runtime.mkfsErofs).toEqual({ path: "/usr/sbin/mkfs.erofs", options: [] });
    expect(check(decideFacts(facts, { env: SETUP }), "erofs-utils")).toMatchObject({
      severity: "error",
      message:
        "EXPERIMENTAL_SETUP_SNAPSHOTTER=erofs: /usr/sbin/mkfs.erofs does not take --mkfs-time, --sort, which the erofs differ's mkfs_options pass it (erofs-utils 1.8.2 has them)",
    });
  });
});

describe("Go runtime shims on merged erofs: refused, as kata-deploy refuses them", () => {
  const shims = "qemu qemu-runtime-rs";

  it("a Go shim mapped to erofs in the default merged mode, named with its mapping", async () => {
    const decision = await decideOn(containerd(), {
      env: { ...SETUP, SHIMS: shims, SNAPSHOTTER_HANDLER_MAPPING: "qemu:erofs,qemu-runtime-rs:erofs" },
    });
    expect(failing(decision, "erofs-merge-mode")).toEqual([
      expect.objectContaining({
        severity: "error",
        message:
          "merged erofs (kata-deploy's default): the Go runtime does not read merged erofs (one fsmeta.erofs for all of an image's layers), and qemu (environment SNAPSHOTTER_HANDLER_MAPPING) is a Go runtime handler mapped to erofs",
        hint: "set EROFS_MERGE_MODE=unmerged (one layer.erofs per layer, which the Go runtime reads), map them to another snapshotter, or use runtime-rs shims",
      }),
    ]);
  });

  it("runtime-rs shims on merged erofs, and Go shims on unmerged erofs, are fine", async () => {
    const rust = await decideOn(containerd(), {
      env: { ...SETUP, SHIMS: shims, SNAPSHOTTER_HANDLER_MAPPING: "qemu-runtime-rs:erofs" },
    });
    expect(check(rust, "erofs-merge-mode")).toBeUndefined();
    const unmerged = await decideOn(containerd(), {
      env: {
        ...SETUP,
        SHIMS: shims,
        SNAPSHOTTER_HANDLER_MAPPING: "qemu:erofs",
        EROFS_MERGE_MODE: "unmerged",
      },
    });
    expect(check(unmerged, "erofs-merge-mode")).toBeUndefined();
  });

  it("the overrides file's handlers and custom runtimes too, and EROFS_MERGE_MODE=merged named", async () => {
    const decision = await decideOn(containerd(), {
      env: { ...SETUP, SHIMS: shims, EROFS_MERGE_MODE: "merged" },
      overrides:
        '[handlers.qemu]\nsnapshotter = "erofs"\n\n[custom_runtimes.kata-qemu-lowmem]\nbase = "qemu"\nsnapshotter = "erofs"\n',
    });
    expect(check(decision, "erofs-merge-mode")?.message).toBe(
      "EROFS_MERGE_MODE=merged: the Go runtime does not read merged erofs (one fsmeta.erofs for all of an image's layers), and qemu (overrides /etc/kata-containers/kata-install.toml:2 handlers.qemu.snapshotter), kata-qemu-lowmem (overrides /etc/kata-containers/kata-install.toml:4 custom_runtimes.kata-qemu-lowmem) are Go runtime handlers mapped to erofs",
    );
  });
});

describe("a mapping to erofs counts as configured once kata-install sets it up", () => {
  const mapping = { SHIMS: "qemu-runtime-rs", SNAPSHOTTER_HANDLER_MAPPING: "qemu-runtime-rs:erofs" };

  it("k3s (no erofs built in that kata-install can tell): refused without the setup, taken with it", async () => {
    const without = await decideOn(k3sImportingDropIns(), { env: mapping });
    expect(check(without, "handler-snapshotter")?.message).toContain(
      '"erofs", which is not configured on this node',
    );
    const withSetup = await decideOn(k3sImportingDropIns(), { env: { ...mapping, ...SETUP } });
    expect(check(withSetup, "handler-snapshotter")).toBeUndefined();
  });

  it("containerd 2.1: the one error is the setup's, naming the version", async () => {
    const decision = await decideOn(containerd("2.1.5"), { env: { ...mapping, ...SETUP } });
    expect(check(decision, "handler-snapshotter")).toBeUndefined();
    expect(check(decision, "snapshotter-setup")?.message).toContain("containerd 2.1.5 is older than 2.2");
  });

  it("a takeover of kata-deploy's erofs is refused only where kata-install does not set erofs up", () => {
    const takeover = {
      shims: ["qemu"],
      settings: [],
      done: false,
      snapshotters: [
        {
          name: "erofs",
          paths: ['/etc/containerd/conf.d/kata-deploy.toml: [plugins."io.containerd.snapshotter.v1.erofs"]'],
        },
      ],
    };
    expect(takeoverSnapshotterChecks(takeover)).toEqual([
      expect.objectContaining({
        id: "takeover-snapshotter",
        message: expect.stringContaining(
          "which kata-install sets up only when EXPERIMENTAL_SETUP_SNAPSHOTTER names erofs",
        ),
      }),
    ]);
    expect(takeoverSnapshotterChecks(takeover, ["erofs"])).toEqual([]);
  });
});
