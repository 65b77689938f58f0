// EXPERIMENTAL_SETUP_SNAPSHOTTER=erofs end to end, on a containerd 2.2 node: install writes the erofs
// settings into kata-install's drop-in (journalled with it), a plan made again changes nothing,
// explain names the variables, and uninstall gives the node back byte for byte. Every refusal
// (a bad variable, nydus without its files, containerd too old or edited in place, no erofs in the kernel, a Go shim
// on merged erofs) leaves the host as it was. A node kata-deploy set erofs up on is taken over with
// the same variables: kata-install's drop-in carries erofs from then on.
import fs from "node:fs";
import path from "node:path";
import { parse } from "smol-toml";
import { afterAll, describe, expect, it } from "vitest";
import { dig } from "../../src/detect/toml.js";
import { answeringHost } from "../helpers/answering.js";
import { artifactDir } from "../helpers/artifacts.js";
import { runCli } from "../helpers/cli.js";
import { deployHandler, kataDeployTree } from "../helpers/kata-deploy-node.js";
import { arm64Containerd20, intelContainerd16, mkfsErofsScript } from "../helpers/nodes.js";
import { type NodeSpec, removeTestHosts } from "../helpers/test-host.js";
import { snapshot } from "../helpers/tree.js";

afterAll(removeTestHosts);
const artifacts = artifactDir("3.9.0", "aarch64");
afterAll(() => fs.rmSync(artifacts, { recursive: true, force: true }));

const DROP_IN = "etc/containerd/conf.d/50-kata-install.toml";
const ENV = {
  EXPERIMENTAL_SETUP_SNAPSHOTTER: "erofs",
  EROFS_SNAPSHOTTER_MODE: "memory",
  EROFS_DMVERITY: "dmverity",
  SHIMS_AARCH64: "qemu qemu-runtime-rs",
  SNAPSHOTTER_HANDLER_MAPPING_AARCH64: "qemu-runtime-rs:erofs",
};

/**
 * arm64 with containerd `version` (2.2.0), its kernel with erofs and dm-verity as modules, and
 * erofs-utils `mkfs` (1.8.2; null for none).
 */
function node(
  version = "2.2.0",
  modules = ["erofs", "dm_mod", "dm_verity"],
  mkfs: "1.5" | "1.8" | "1.9" | null = "1.8",
): NodeSpec {
  const spec = arm64Containerd20();
  spec.commands = {
    ...spec.commands,
    "/usr/local/bin/containerd": `echo "containerd github.com/containerd/containerd/v2 v${version} 1a43cb6a1035441f9aca8f5666a9b3ef9e70ab20"`,
    ...(mkfs === null ? {} : { "/usr/bin/mkfs.erofs": mkfsErofsScript(mkfs) }),
  };
  spec.kernel.available = [...(spec.kernel.available ?? []), ...modules];
  // containerd's root on btrfs, with the kernel's fs-verity: enable_fsverity can be on.
  spec.kernel.config = { ...spec.kernel.config, CONFIG_FS_VERITY: "y" };
  spec.files = {
    ...spec.files,
    "/proc/1/mountinfo": `${ROOT_MOUNT}30 22 8:17 / /var/lib/containerd rw - btrfs /dev/sdb1 rw\n`,
  };
  return spec;
}

/** The host's root file system, as /proc/1/mountinfo has it. */
const ROOT_MOUNT = "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n";

const cli = (root: string, args: string[], env: Record<string, string> = ENV) =>
  runCli([...args, "--host-root", root], { env });
const install = (root: string, env: Record<string, string> = ENV, more: string[] = []) =>
  cli(root, ["install", "--artifacts", `dir:${artifacts}`, ...more], env);
const read = (root: string, file: string) => fs.readFileSync(path.join(root, file), "utf8");

describe("fs-verity, where it cannot work under containerd's root", () => {
  it("is turned off with a warning that says why and how to have it: never left to fail containerd", async () => {
    const spec = node();
    spec.files = { ...spec.files, "/proc/1/mountinfo": ROOT_MOUNT };
    spec.commands = {
      ...spec.commands,
      "/usr/sbin/tune2fs":
        'echo "tune2fs 1.47.0 (5-Feb-2023)"; echo "Filesystem features:      has_journal ext_attr extent 64bit"',
    };
    const host = await answeringHost(spec);
    const plan = cli(host.root, ["plan", "--artifacts", `dir:${artifacts}`]);
    expect(plan.stdout).toContain(
      "[WARNING] erofs-fsverity: EXPERIMENTAL_SETUP_SNAPSHOTTER=erofs: fs-verity is turned off for the erofs snapshotter (enable_fsverity = false, where kata-deploy sets true): /var/lib/containerd is on ext4 (/dev/sda1) without the verity feature (tune2fs -l); with it on, containerd's erofs snapshotter would fail to start and take the CRI plugin with it",
    );
    expect(plan.stdout).toContain("+  enable_fsverity = false");
    const run = install(host.root);
    expect(run.status, run.stderr).toBe(0);
    expect(
      dig(parse(read(host.root, DROP_IN)), [
        "plugins",
        "io.containerd.snapshotter.v1.erofs",
        "enable_fsverity",
      ]),
    ).toBe(false);
  });
});

describe("containerd 2.2: install sets erofs up in kata-install's drop-in, uninstall takes it away", () => {
  it("installed, planned again with nothing to do, explained, uninstalled to the node as it was", async () => {
    const host = await answeringHost(node());
    const before = snapshot(host.root);
    const run = install(host.root);
    expect(run.status, run.stderr).toBe(0);

    const dropIn = parse(read(host.root, DROP_IN)) as Record<string, unknown>;
    expect(dig(dropIn, ["plugins", "io.containerd.cri.v1.images"])).toEqual({
      discard_unpacked_layers: false,
      runtime_platforms: { "kata-qemu-runtime-rs": { snapshotter: "erofs" } },
    });
    expect(dig(dropIn, ["plugins", "io.containerd.service.v1.diff-service", "default"])).toEqual([
      "erofs",
      "walking",
    ]);
    expect(dig(dropIn, ["plugins", "io.containerd.snapshotter.v1.erofs"])).toEqual({
      enable_fsverity: true,
      set_immutable: true,
      dmverity_mode: "on",
      default_size: "0",
      max_unmerged_layers: 0,
    });
    expect(dig(dropIn, ["plugins", "io.containerd.differ.v1.erofs"])).toEqual({
      enable_dmverity: true,
      mkfs_options: ["-T0", "--mkfs-time", "--sort=none"],
      enable_tar_index: false,
    });
    expect(
      dig(dropIn, [
        "plugins",
        "io.containerd.cri.v1.runtime",
        "containerd",
        "runtimes",
        "kata-qemu-runtime-rs",
      ]),
    ).toMatchObject({ snapshotter: "erofs" });
    // Only kata-install's drop-in holds them: the admin's files are as they were.
    for (const file of ["etc/containerd/config.toml", "etc/containerd/conf.d/20-gvisor.toml"])
      expect(snapshot(host.root)[file]).toBe(before[file]);

    const again = cli(host.root, ["plan", "--detailed-exitcode"]);
    expect(again.status, again.stdout).toBe(0);
    expect(again.stdout).not.toContain("erofs-fsverity");
    // mkfs.erofs's answer is kept with the other probes: a second install asks it nothing, does nothing.
    const probes = JSON.parse(read(host.root, "opt/kata/.install/probes.json"));
    expect(probes["run:/usr/bin/mkfs.erofs\0--help"].result.stdout).toContain("--mkfs-time");
    const noop = install(host.root);
    expect(noop.stdout).toBe(
      "Files: 0 written, 0 removed.\nNothing to do: the node is as the plan wants it.\n",
    );
    const explained = cli(host.root, ["explain", "snapshotters.erofs"]);
    expect(explained.status, explained.stderr).toBe(0);
    expect(explained.stdout).toContain(
      "snapshotters.erofs = \"set up\"  — containerd's built-in erofs snapshotter, configured in kata-install's containerd drop-in\n    set by environment EXPERIMENTAL_SETUP_SNAPSHOTTER\n",
    );
    expect(explained.stdout).toContain(
      'snapshotters.erofs.snapshotter_mode = "memory"  — the writable layer in memory (default_size = "0")\n    set by environment EROFS_SNAPSHOTTER_MODE\n',
    );

    // Installed again without the variable: the next install takes the settings out.
    const without = install(host.root, { SHIMS_AARCH64: "qemu qemu-runtime-rs" });
    expect(without.status, without.stderr).toBe(0);
    expect(read(host.root, DROP_IN)).not.toContain("erofs");

    const uninstall = cli(host.root, ["uninstall"]);
    expect(uninstall.status, uninstall.stderr).toBe(0);
    expect(snapshot(host.root)).toEqual(before);
  });
});

describe("each refusal leaves the host as it was", () => {
  it.each([
    [
      "a bad EROFS_MERGE_MODE",
      node(),
      { ...ENV, EROFS_MERGE_MODE: "flat" },
      'environment: EROFS_MERGE_MODE: expected merged (the default) or unmerged, got "flat"',
    ],
    [
      "a bad EROFS_DMVERITY",
      node(),
      { ...ENV, EROFS_DMVERITY: "true" },
      'environment: EROFS_DMVERITY: expected "dmverity" (dm-verity on, as kata-deploy\'s chart sets it) or unset (off)',
    ],
    [
      "nydus without its files",
      node(),
      {
        ...ENV,
        EXPERIMENTAL_SETUP_SNAPSHOTTER: "erofs,nydus",
        KATA_INSTALL_NYDUS_SNAPSHOTTER_DIR: "/nonexistent",
      },
      "EXPERIMENTAL_SETUP_SNAPSHOTTER=nydus: nydus-snapshotter's files are not there to copy",
    ],
    [
      "an unknown snapshotter",
      node(),
      { ...ENV, EXPERIMENTAL_SETUP_SNAPSHOTTER: "stargz" },
      'environment: EXPERIMENTAL_SETUP_SNAPSHOTTER: "stargz" is no snapshotter kata-deploy sets up',
    ],
    [
      "containerd 2.1",
      node("2.1.5"),
      ENV,
      "EXPERIMENTAL_SETUP_SNAPSHOTTER=erofs: containerd 2.1.5 is older than 2.2",
    ],
    [
      "containerd 1.6, edited in place",
      intelContainerd16(),
      { EXPERIMENTAL_SETUP_SNAPSHOTTER: "erofs" },
      "EXPERIMENTAL_SETUP_SNAPSHOTTER=erofs: containerd 1.6.12 is older than 2.2",
    ],
    [
      "no erofs in the kernel",
      node("2.2.0", []),
      { EXPERIMENTAL_SETUP_SNAPSHOTTER: "erofs" },
      "EXPERIMENTAL_SETUP_SNAPSHOTTER=erofs: the kernel has no erofs",
    ],
    [
      "no mkfs.erofs",
      node("2.2.0", undefined, null),
      ENV,
      "EXPERIMENTAL_SETUP_SNAPSHOTTER=erofs: the node has no mkfs.erofs (erofs-utils), which containerd's erofs differ runs for every layer",
    ],
    [
      "an mkfs.erofs older than 1.8.2 (bookworm's 1.5)",
      node("2.2.0", undefined, "1.5"),
      ENV,
      "EXPERIMENTAL_SETUP_SNAPSHOTTER=erofs: /usr/bin/mkfs.erofs does not take --mkfs-time, --sort, which the erofs differ's mkfs_options pass it (erofs-utils 1.8.2 has them)",
    ],
    [
      "a Go shim on merged erofs",
      node(),
      { ...ENV, SNAPSHOTTER_HANDLER_MAPPING_AARCH64: "qemu:erofs" },
      "merged erofs (kata-deploy's default): the Go runtime does not read merged erofs",
    ],
  ])("%s", async (_, spec, env, said) => {
    const host = await answeringHost(spec);
    const before = snapshot(host.root);
    const run = install(host.root, env);
    expect(run.status, run.stdout).toBe(1);
    expect(run.stderr).toContain(said);
    expect(snapshot(host.root)).toEqual(before);
  });
});

describe("a containerd 2.2 node kata-deploy set erofs up on, taken over with its variables", () => {
  const deployed = "etc/containerd/conf.d/kata-deploy.toml";
  const KATA_DEPLOYS = `version = 3\n${deployHandler("io.containerd.cri.v1.runtime", "qemu")}
[plugins."io.containerd.service.v1.diff-service"]
default = ["erofs", "walking"]

[plugins."io.containerd.snapshotter.v1.erofs"]
enable_fsverity = true
default_size = "10G"
max_unmerged_layers = 0
`;
  const takenOver = () =>
    answeringHost(node(), (root) => {
      kataDeployTree(artifacts, root, ["qemu"]);
      fs.writeFileSync(path.join(root, deployed), KATA_DEPLOYS);
    });

  it("without EXPERIMENTAL_SETUP_SNAPSHOTTER: refused, naming what to give kata-install; nothing changes", async () => {
    const host = await takenOver();
    const before = snapshot(host.root);
    const run = install(host.root, {}, ["--shims", "qemu"]);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("kata-deploy set up the erofs snapshotter here");
    expect(snapshot(host.root)).toEqual(before);
  });

  it("with it: kata-deploy's drop-in goes, and kata-install's carries erofs in its place", async () => {
    const host = await takenOver();
    const run = install(host.root, { EXPERIMENTAL_SETUP_SNAPSHOTTER: "erofs" }, ["--shims", "qemu"]);
    expect(run.status, run.stderr).toBe(0);
    expect(fs.existsSync(path.join(host.root, deployed))).toBe(false);
    const ours = parse(read(host.root, DROP_IN)) as Record<string, unknown>;
    expect(dig(ours, ["plugins", "io.containerd.snapshotter.v1.erofs", "default_size"])).toBe("10G");
    expect(dig(ours, ["plugins", "io.containerd.service.v1.diff-service", "default"])).toEqual([
      "erofs",
      "walking",
    ]);
  });
});
