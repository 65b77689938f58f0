// EXPERIMENTAL_SETUP_SNAPSHOTTER=nydus end to end, on a containerd 2.0 node: install copies the two
// binaries of the source directory (stand-ins: test/fixtures/nydus-snapshotter, never run) byte for
// byte, writes nydus's configuration, its unit and the link that enables it, and the proxy plugin in
// kata-install's drop-in; reloads systemd and restarts the unit before containerd. A second install
// does nothing; uninstall stops the unit and gives the node back byte for byte. Every refusal leaves
// the host as it was; a run killed part way is rolled back; a kata-deploy node with its
// nydus-for-kata-tee is taken over with nydus carried over.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { parse } from "smol-toml";
import { afterAll, describe, expect, it } from "vitest";
import { dig } from "../../src/detect/toml.js";
import { hash } from "../../src/hash.js";
import { answeringHost } from "../helpers/answering.js";
import { artifactDir } from "../helpers/artifacts.js";
import { CLI, runCli } from "../helpers/cli.js";
import { containerdServes } from "../helpers/containerd.js";
import { deployHandler, kataDeployTree } from "../helpers/kata-deploy-node.js";
import {
  arm64Containerd20,
  CONTAINERD_V2_MAIN,
  intelContainerd17,
  k3sImportingDropIns,
} from "../helpers/nodes.js";
import { type NodeSpec, removeTestHosts } from "../helpers/test-host.js";
import { snapshot } from "../helpers/tree.js";

afterAll(removeTestHosts);
const artifacts = artifactDir("3.9.0", "aarch64");
afterAll(() => fs.rmSync(artifacts, { recursive: true, force: true }));

const SOURCE = path.resolve(import.meta.dirname, "../fixtures/nydus-snapshotter");
const ENV = {
  EXPERIMENTAL_SETUP_SNAPSHOTTER: "nydus",
  KATA_INSTALL_NYDUS_SNAPSHOTTER_DIR: SOURCE,
  SHIMS_AARCH64: "qemu qemu-coco-dev-runtime-rs",
};
const DROP_IN = "etc/containerd/conf.d/50-kata-install.toml";
const UNIT = "etc/systemd/system/nydus-for-kata-tee.service";
const WANTS = "etc/systemd/system/containerd.service.wants/nydus-for-kata-tee.service";
const DIR = "opt/kata/nydus-for-kata-tee";
const SYSTEMCTL = 'echo "$@" >> "$(dirname "$0")/../../var/log/systemctl.calls"';
const LOG = "var/log/systemctl.calls";

/** arm64 with containerd 2.0, whose systemctl logs what it is asked. */
function node(spec: NodeSpec = arm64Containerd20()): NodeSpec {
  spec.commands = { ...spec.commands, "/usr/bin/systemctl": SYSTEMCTL };
  // As on every node: /run/lock is there (the lock a killed run leaves is in it).
  spec.files = { ...spec.files, "/var/log/.keep": "", "/run/lock/.keep": "" };
  return spec;
}
const cli = (root: string, args: string[], env: Record<string, string> = ENV) =>
  runCli([...args, "--host-root", root], { env });
const install = (root: string, env: Record<string, string> = ENV, more: string[] = []) =>
  cli(root, ["install", "--artifacts", `dir:${artifacts}`, ...more], env);
const read = (root: string, file: string) => fs.readFileSync(path.join(root, file), "utf8");
const calls = (root: string) =>
  fs.existsSync(path.join(root, LOG)) ? read(root, LOG).trim().split("\n") : [];
const withoutLog = (tree: Record<string, string>) =>
  Object.fromEntries(Object.entries(tree).filter(([p]) => p !== LOG));
const bytes = (file: string) => fs.readFileSync(file);

describe("containerd 2.0: nydus-for-kata-tee installed, again with nothing to do, uninstalled", () => {
  it("every file as kata-deploy lays it out, the unit restarted before containerd; uninstall gives the node back", async () => {
    const host = await answeringHost(node());
    const before = snapshot(host.root);
    const plan = cli(host.root, ["plan", "--artifacts", `dir:${artifacts}`]);
    expect(plan.status, plan.stderr).toBe(0);
    const grpcHash = hash(bytes(`${SOURCE}/containerd-nydus-grpc`));
    expect(plan.stdout).toContain(
      `Binary files /dev/null and b/${DIR}/containerd-nydus-grpc differ\n# sha256:${grpcHash}, `,
    );
    expect(plan.stdout).toContain(
      "restart-service nydus-for-kata-tee.service: its files changed: systemd reloaded, nydus-for-kata-tee.service (re)started before containerd loads the proxy plugin\n",
    );

    const run = install(host.root);
    expect(run.status, run.stderr).toBe(0);
    // The binaries, byte for byte, executable.
    for (const name of ["containerd-nydus-grpc", "nydus-overlayfs"]) {
      const at = path.join(host.root, DIR, name);
      expect(bytes(at).equals(bytes(`${SOURCE}/${name}`))).toBe(true);
      expect(fs.statSync(at).mode & 0o777).toBe(0o755);
    }
    // nydus's configuration and unit, kata-deploy's with its paths substituted.
    const config = parse(read(host.root, `${DIR}/config-guest-pulling.toml`));
    expect(config).toEqual({
      version: 1,
      root: "/var/lib/nydus-for-kata-tee",
      address: "/run/nydus-for-kata-tee/containerd-nydus-grpc.sock",
      daemon: { fs_driver: "proxy" },
      snapshot: {
        enable_kata_volume: true,
        nydus_overlayfs_path: "/opt/kata/nydus-for-kata-tee/nydus-overlayfs",
      },
    });
    const unit = read(host.root, UNIT);
    expect(unit).toContain(
      "\n[Service]\nExecStart=/opt/kata/nydus-for-kata-tee/containerd-nydus-grpc --config /opt/kata/nydus-for-kata-tee/config-guest-pulling.toml --log-to-stdout\nRestart=always\nRestartSec=5\n",
    );
    expect(unit).toContain("Before=containerd.service\n");
    expect(unit).toContain("\n[Install]\nWantedBy=containerd.service\n");
    expect(fs.readlinkSync(path.join(host.root, WANTS))).toBe(
      "/etc/systemd/system/nydus-for-kata-tee.service",
    );
    // The proxy plugin, and the TEE shim's handler on it (the chart's default: guest pull through nydus).
    const dropIn = parse(read(host.root, DROP_IN)) as Record<string, unknown>;
    expect(dig(dropIn, ["proxy_plugins", "nydus-for-kata-tee"])).toEqual({
      type: "snapshot",
      address: "/run/nydus-for-kata-tee/containerd-nydus-grpc.sock",
      exports: { root: "/var/lib/nydus-for-kata-tee" },
    });
    expect(dig(dropIn, ["plugins", "io.containerd.cri.v1.images", "disable_snapshot_annotations"])).toBe(
      false,
    );
    const runtimes = ["plugins", "io.containerd.cri.v1.runtime", "containerd", "runtimes"];
    expect(dig(dropIn, [...runtimes, "kata-qemu-coco-dev-runtime-rs", "snapshotter"])).toBe(
      "nydus-for-kata-tee",
    );
    expect(dig(dropIn, [...runtimes, "kata-qemu", "snapshotter"])).toBeUndefined();
    // systemd reloaded and the unit restarted on its files, then containerd.
    expect(calls(host.root)).toEqual([
      "daemon-reload",
      "restart nydus-for-kata-tee.service",
      "restart containerd",
    ]);

    const again = cli(host.root, ["plan", "--detailed-exitcode", "--artifacts", `dir:${artifacts}`]);
    expect(again.status, again.stdout).toBe(0);
    const noop = install(host.root);
    expect(noop.stdout).toBe(
      "Files: 0 written, 0 removed.\nNothing to do: the node is as the plan wants it.\n",
    );
    expect(calls(host.root)).toHaveLength(3);

    const explained = cli(host.root, ["explain", "snapshotters.nydus"]);
    expect(explained.stdout).toContain(
      "snapshotters.nydus = \"nydus-for-kata-tee\"  — kata-deploy's nydus-for-kata-tee: its unit nydus-for-kata-tee.service (wanted by containerd.service) and the proxy plugin nydus-for-kata-tee in kata-install's containerd drop-in\n    set by environment EXPERIMENTAL_SETUP_SNAPSHOTTER\n",
    );
    expect(explained.stdout).toContain(
      `snapshotters.nydus.source = "${SOURCE}"  — where containerd-nydus-grpc and nydus-overlayfs are copied from, byte for byte: containerd-nydus-grpc sha256:${grpcHash.slice(0, 12)}…`,
    );

    const uninstall = cli(host.root, ["uninstall"]);
    expect(uninstall.status, uninstall.stderr).toBe(0);
    expect(calls(host.root).slice(3)).toEqual([
      "stop nydus-for-kata-tee.service",
      "daemon-reload",
      "restart containerd",
    ]);
    expect(withoutLog(snapshot(host.root))).toEqual(withoutLog(before));
  });

  it("installed again without the variable: nydus's files go, its unit stopped; the handlers as before", async () => {
    const host = await answeringHost(node());
    const before = snapshot(host.root);
    expect(install(host.root).status).toBe(0);
    const without = install(host.root, { SHIMS_AARCH64: "qemu qemu-coco-dev-runtime-rs" });
    expect(without.status, without.stderr).toBe(0);
    for (const file of [UNIT, WANTS, `${DIR}/containerd-nydus-grpc`, `${DIR}/config-guest-pulling.toml`])
      expect(fs.existsSync(path.join(host.root, file))).toBe(false);
    // And the directories the first install made for them, now empty: nothing of nydus's is left.
    for (const dir of [DIR, path.dirname(WANTS)])
      expect(fs.existsSync(path.join(host.root, dir)), dir).toBe(false);
    expect(read(host.root, DROP_IN)).not.toContain("nydus");
    expect(calls(host.root).slice(3)).toEqual([
      "daemon-reload",
      "stop nydus-for-kata-tee.service",
      "restart containerd",
    ]);
    expect(cli(host.root, ["uninstall"]).status).toBe(0);
    expect(withoutLog(snapshot(host.root))).toEqual(withoutLog(before));
  });

  it("MULTI_INSTALL_SUFFIX: the instance named with it, its binaries under the suffixed install directory", async () => {
    const host = await answeringHost(node());
    const run = install(host.root, { ...ENV, MULTI_INSTALL_SUFFIX: "blue" });
    expect(run.status, run.stderr).toBe(0);
    const unit = read(host.root, "etc/systemd/system/nydus-for-kata-tee-blue.service");
    expect(unit).toContain(
      "ExecStart=/opt/kata-blue/nydus-for-kata-tee/containerd-nydus-grpc --config /opt/kata-blue/nydus-for-kata-tee/config-guest-pulling.toml",
    );
    const dropIn = parse(read(host.root, "etc/containerd/conf.d/50-kata-install-blue.toml")) as Record<
      string,
      unknown
    >;
    expect(dig(dropIn, ["proxy_plugins", "nydus-for-kata-tee-blue", "address"])).toBe(
      "/run/nydus-for-kata-tee-blue/containerd-nydus-grpc.sock",
    );
  });
});

describe("each refusal leaves the host as it was", () => {
  it.each([
    [
      "no source directory",
      node(),
      { ...ENV, KATA_INSTALL_NYDUS_SNAPSHOTTER_DIR: "/nonexistent/nydus" },
      "EXPERIMENTAL_SETUP_SNAPSHOTTER=nydus: nydus-snapshotter's files are not there to copy: /nonexistent/nydus/containerd-nydus-grpc does not exist; /nonexistent/nydus/nydus-overlayfs does not exist; /nonexistent/nydus/config-guest-pulling.toml does not exist; /nonexistent/nydus/nydus-snapshotter.service does not exist",
    ],
    [
      "an unknown snapshotter beside it",
      node(),
      { ...ENV, EXPERIMENTAL_SETUP_SNAPSHOTTER: "nydus,stargz" },
      'environment: EXPERIMENTAL_SETUP_SNAPSHOTTER: "stargz" is no snapshotter kata-deploy sets up',
    ],
  ])("%s", async (_, spec, env, said) => {
    const host = await answeringHost(spec);
    const before = snapshot(host.root);
    const run = install(host.root, env);
    expect(run.status, run.stdout).toBe(1);
    expect(run.stderr).toContain(said);
    expect(snapshot(host.root)).toEqual(before);
  });

  it("one binary missing: named, with what to do", async () => {
    const dir = fs.mkdtempSync(path.join(path.dirname(artifacts), "nydus-half-"));
    fs.copyFileSync(`${SOURCE}/containerd-nydus-grpc`, `${dir}/containerd-nydus-grpc`);
    try {
      const host = await answeringHost(node());
      const before = snapshot(host.root);
      const run = install(host.root, { ...ENV, KATA_INSTALL_NYDUS_SNAPSHOTTER_DIR: dir });
      expect(run.status).toBe(1);
      expect(run.stderr).toContain(`${dir}/nydus-overlayfs does not exist`);
      expect(run.stderr).not.toContain(`${dir}/containerd-nydus-grpc does not exist`);
      expect(snapshot(host.root)).toEqual(before);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a binary that changed between plan and install: refused, nothing left applied", async () => {
    const dir = fs.mkdtempSync(path.join(path.dirname(artifacts), "nydus-moving-"));
    fs.cpSync(SOURCE, dir, { recursive: true });
    try {
      const host = await answeringHost(node());
      const before = snapshot(host.root);
      const out = path.join(dir, "plan.json");
      const env = { ...ENV, KATA_INSTALL_NYDUS_SNAPSHOTTER_DIR: dir };
      expect(cli(host.root, ["plan", "--artifacts", `dir:${artifacts}`, "--out", out], env).status).toBe(0);
      fs.appendFileSync(`${dir}/nydus-overlayfs`, "changed");
      const run = cli(host.root, ["install", "--artifacts", `dir:${artifacts}`, "--plan", out], env);
      expect(run.status).toBe(1);
      expect(run.stderr).toContain("/opt/kata/nydus-for-kata-tee/nydus-overlayfs");
      expect(withoutLog(snapshot(host.root))).toEqual(withoutLog(before));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

const x86 = artifactDir("3.9.0", "x86_64");
afterAll(() => fs.rmSync(x86, { recursive: true, force: true }));
const ENV16 = {
  EXPERIMENTAL_SETUP_SNAPSHOTTER: "nydus",
  KATA_INSTALL_NYDUS_SNAPSHOTTER_DIR: SOURCE,
  SHIMS: "qemu qemu-coco-dev",
};
const CONFIG = "etc/containerd/config.toml";
const install16 = (root: string, env: Record<string, string> = ENV16, more: string[] = []) =>
  cli(root, ["install", "--artifacts", `dir:${x86}`, ...more], env);

describe("containerd 1.7, its own file edited in place: nydus in kata-install's block and one line of the admin's", () => {
  const ADDED =
    "  disable_snapshot_annotations = false # kata-install: the nydus snapshotter reads images' references from these annotations; uninstall takes this line out\n";
  /** containerd 1.6 with the admin's config: `containerd config default`'s CRI line among theirs. */
  const admins = (main: string) => {
    const spec = node(intelContainerd17());
    spec.files = { ...spec.files, "/etc/containerd/config.toml": main };
    return spec;
  };
  /** Installed with nydus over the admin's `main`: the file as it is then. */
  const installedOver = async (main: string) => {
    const host = await answeringHost(admins(main));
    const run = install16(host.root);
    expect(run.status, run.stderr).toBe(0);
    return { host, text: read(host.root, CONFIG) };
  };
  /** The real containerd (1.6 here) loads it, its CRI plugin up with snapshot annotations on. */
  const servedWithAnnotations = async (text: string) => {
    const served = await containerdServes(text);
    expect(served.cri, served.log).toBe("ok");
    expect(served.log).toContain("DisableSnapshotAnnotations:false");
    return served;
  };
  const WITH_KEY = `version = 2

[plugins."io.containerd.grpc.v1.cri".containerd]
  snapshotter = "overlayfs"
  disable_snapshot_annotations = true   # the admin's: containerd's default
  default_runtime_name = "runc"

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
`;

  it("the line added under the admin's CRI table, the proxy plugin in the block; the real containerd loads it; a second install does nothing; uninstall gives the node back", async () => {
    const host = await answeringHost(node(intelContainerd17()));
    const before = snapshot(host.root);
    const plan = cli(host.root, ["plan", "--artifacts", `dir:${x86}`], ENV16);
    expect(plan.status, plan.stderr).toBe(0);
    expect(plan.stdout).not.toContain("snapshotter-setup");
    expect(plan.stdout).toContain(
      ` [plugins."io.containerd.grpc.v1.cri".containerd]\n+${ADDED}   snapshotter = "overlayfs"\n`,
    );
    const run = install16(host.root);
    expect(run.status, run.stderr).toBe(0);
    const text = read(host.root, CONFIG);
    const config = parse(text) as Record<string, unknown>;
    const cri = ["plugins", "io.containerd.grpc.v1.cri", "containerd"];
    expect(dig(config, [...cri, "disable_snapshot_annotations"])).toBe(false);
    expect(dig(config, [...cri, "snapshotter"])).toBe("overlayfs");
    expect(dig(config, ["proxy_plugins", "nydus-for-kata-tee"])).toEqual({
      type: "snapshot",
      address: "/run/nydus-for-kata-tee/containerd-nydus-grpc.sock",
      exports: { root: "/var/lib/nydus-for-kata-tee" },
    });
    expect(dig(config, [...cri, "runtimes", "kata-qemu-coco-dev", "snapshotter"])).toBe("nydus-for-kata-tee");
    // The proxy plugin is inside kata-install's block: the admin's tables are where they were.
    const block = text.slice(text.indexOf("# >>> kata-install:"));
    expect(block).toContain("[proxy_plugins.nydus-for-kata-tee]\n");
    expect(fs.existsSync(path.join(host.root, UNIT))).toBe(true);
    expect(calls(host.root)).toEqual([
      "daemon-reload",
      "restart nydus-for-kata-tee.service",
      "restart containerd",
    ]);
    // The real containerd loads it, the proxy plugin registered.
    const served = await servedWithAnnotations(text);
    expect(served.log).toContain('loading plugin \\"io.containerd.snapshotter.v1.nydus-for-kata-tee\\"');

    expect(install16(host.root).stdout).toBe(
      "Files: 0 written, 0 removed.\nNothing to do: the node is as the plan wants it.\n",
    );
    expect(cli(host.root, ["explain", "snapshotters.nydus"], ENV16).stdout).toContain(
      "the proxy plugin nydus-for-kata-tee in kata-install's block of containerd's own configuration (edited in place), with disable_snapshot_annotations = false in its CRI table\n",
    );
    const uninstall = cli(host.root, ["uninstall"], ENV16);
    expect(uninstall.status, uninstall.stderr).toBe(0);
    expect(withoutLog(snapshot(host.root))).toEqual(withoutLog(before));
  });

  it("the admin's own line replaced, theirs kept in its comment: given back byte for byte by uninstall after the admin edited the file", async () => {
    const host = await answeringHost(admins(WITH_KEY));
    expect(install16(host.root).status).toBe(0);
    const text = read(host.root, CONFIG);
    expect(text).toContain(
      "\n  disable_snapshot_annotations = false # kata-install: the nydus snapshotter reads images' references from these annotations; uninstall puts back: \"  disable_snapshot_annotations = true   # the admin's: containerd's default\"\n",
    );
    expect(text).not.toContain("disable_snapshot_annotations = true   #\n");
    // The admin adds a table of their own after the install: the file is no longer as kata-install left it.
    const theirs =
      '\n[plugins."io.containerd.grpc.v1.cri".registry]\n  config_path = "/etc/containerd/certs.d"\n';
    fs.appendFileSync(path.join(host.root, CONFIG), theirs);
    const uninstall = cli(host.root, ["uninstall"], ENV16);
    expect(uninstall.status, uninstall.stderr).toBe(0);
    expect(uninstall.stdout).toContain("the line it edited given back");
    expect(read(host.root, CONFIG)).toBe(WITH_KEY + theirs);
  });

  it("installed again without nydus: the admin's line back, the proxy plugin gone, the handlers kept", async () => {
    const host = await answeringHost(admins(WITH_KEY));
    expect(install16(host.root).status).toBe(0);
    const without = install16(host.root, { SHIMS: "qemu qemu-coco-dev" });
    expect(without.status, without.stderr + without.stdout).toBe(0);
    const text = read(host.root, CONFIG);
    expect(text).toContain("\n  disable_snapshot_annotations = true   # the admin's: containerd's default\n");
    expect(text).not.toContain("nydus");
    expect(text).toContain('[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.kata-qemu-coco-dev]');
    expect(cli(host.root, ["uninstall"]).status).toBe(0);
    expect(read(host.root, CONFIG)).toBe(WITH_KEY);
  });

  it("annotations already off in the admin's file: that line is theirs, untouched", async () => {
    const off = WITH_KEY.replace("= true   #", "= false  #");
    const host = await answeringHost(admins(off));
    expect(install16(host.root).status).toBe(0);
    const text = read(host.root, CONFIG);
    expect(text).toContain("\n  disable_snapshot_annotations = false  # the admin's: containerd's default\n");
    expect(text).not.toContain("uninstall puts back");
  });

  it("no CRI table of the admin's: it joins kata-install's block, and the real containerd loads the file", async () => {
    const bare =
      'version = 2\nroot = "/var/lib/containerd"\n\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\n  runtime_type = "io.containerd.runc.v2"\n';
    const { host, text } = await installedOver(bare);
    expect(text.startsWith(bare)).toBe(true);
    expect(text.slice(bare.length)).toContain(
      '[plugins."io.containerd.grpc.v1.cri".containerd]\n  # images\' references passed to snapshotters as annotations: nydus tells the guest what to pull from them\n  disable_snapshot_annotations = false\n',
    );
    await servedWithAnnotations(text);
    // Planned again: the table in the block is ours, said again, not taken for the admin's.
    expect(cli(host.root, ["plan", "--detailed-exitcode", "--artifacts", `dir:${x86}`], ENV16).status).toBe(
      0,
    );
    expect(cli(host.root, ["uninstall"]).status).toBe(0);
    expect(read(host.root, CONFIG)).toBe(bare);
  });

  it("schema 1 (no version line): the short plugin name, as containerd 1.x reads it", async () => {
    const v1 =
      '[plugins.cri.containerd]\n  snapshotter = "overlayfs"\n\n[plugins.cri.containerd.runtimes.runc]\n  runtime_type = "io.containerd.runc.v2"\n';
    const { text } = await installedOver(v1);
    expect(dig(parse(text), ["plugins", "cri", "containerd", "disable_snapshot_annotations"])).toBe(false);
    await servedWithAnnotations(text);
  });

  it("the CRI settings as dotted keys, which a line edit does not reach: refused naming the file and key, nothing written", async () => {
    const dotted =
      'version = 2\n\n[plugins."io.containerd.grpc.v1.cri"]\n  containerd.snapshotter = "overlayfs"\n';
    const host = await answeringHost(admins(dotted));
    const before = snapshot(host.root);
    const run = install16(host.root);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(
      '/etc/containerd/config.toml: kata-install could not set plugins."io.containerd.grpc.v1.cri".containerd.disable_snapshot_annotations = false for nydus-for-kata-tee',
    );
    expect(snapshot(host.root)).toEqual(before);
  });
});

/** An install killed at `point`, then an uninstall: the node as it was before (systemctl's log aside). */
async function killedThenUninstalled(
  spec: NodeSpec,
  from: string,
  env: Record<string, string>,
  point: string,
) {
  const host = await answeringHost(spec);
  const before = snapshot(host.root);
  const killed = spawnSync(
    process.execPath,
    [CLI, "install", "--host-root", host.root, "--artifacts", `dir:${from}`],
    {
      env: { ...process.env, ...env, KATA_INSTALL_CRASH_AT: point },
      encoding: "utf8",
    },
  );
  expect(killed.status).not.toBe(0);
  const recovered = cli(host.root, ["uninstall"]);
  expect(recovered.status, recovered.stderr).toBe(0);
  expect(withoutLog(snapshot(host.root))).toEqual(withoutLog(before));
  return host;
}

describe("containerd 1.7 edited in place, killed part way: the next uninstall gives the admin's file back byte for byte", () => {
  it.each(["step:0:after-write", "before-commit", "restart:after"])("at %s", async (point) => {
    await killedThenUninstalled(node(intelContainerd17()), x86, ENV16, point);
  });
});

describe("a containerd 1.7 node kata-deploy set nydus-for-kata-tee up on, in config.toml itself, taken over", () => {
  // What kata-deploy's configure_nydus_snapshotter leaves in a file it edits in place: the key set
  // in the admin's CRI table, the proxy plugin's tables appended, beside its handler.
  const KATA_DEPLOYS = `${CONTAINERD_V2_MAIN.replace('  snapshotter = "overlayfs"\n', '  snapshotter = "overlayfs"\n  disable_snapshot_annotations = false\n')}
${deployHandler("io.containerd.grpc.v1.cri", "qemu")}
[proxy_plugins.nydus-for-kata-tee]
type = "snapshot"
address = "/run/nydus-for-kata-tee/containerd-nydus-grpc.sock"

[proxy_plugins.nydus-for-kata-tee.exports]
root = "/var/lib/nydus-for-kata-tee"
`;
  it("one proxy plugin, kata-install's; the handler kept; the real containerd loads it; uninstall leaves the admin's file without kata-deploy's parts", async () => {
    const host = await answeringHost(node(intelContainerd17()), (root) => {
      kataDeployTree(x86, root, ["qemu"]);
      fs.writeFileSync(path.join(root, CONFIG), KATA_DEPLOYS);
      fs.mkdirSync(path.join(root, DIR), { recursive: true });
      fs.writeFileSync(path.join(root, DIR, "containerd-nydus-grpc"), "kata-deploy's old binary\0");
      fs.writeFileSync(path.join(root, DIR, "nydus-overlayfs"), "kata-deploy's old helper\0");
    });
    const refused = install16(host.root, { SHIMS: "qemu" });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain("kata-deploy set up the nydus snapshotter here");
    const run = install16(host.root, { ...ENV16, SHIMS: "qemu" });
    expect(run.status, run.stderr + run.stdout).toBe(0);
    const text = read(host.root, CONFIG);
    expect(text.match(/\[proxy_plugins\.nydus-for-kata-tee\]/g)).toHaveLength(1);
    expect(text.slice(text.indexOf("# >>> kata-install:"))).toContain("[proxy_plugins.nydus-for-kata-tee]");
    expect(text.match(/runtimes\.kata-qemu\]/g)).toHaveLength(1);
    // kata-deploy's line is the file's now: already false, nothing of kata-install's on it.
    expect(text).toContain("\n  disable_snapshot_annotations = false\n");
    const served = await containerdServes(text);
    expect(served.cri, served.log).toBe("ok");
    expect(served.log).toContain('loading plugin \\"io.containerd.snapshotter.v1.nydus-for-kata-tee\\"');
    expect(cli(host.root, ["uninstall"]).status).toBe(0);
    const left = read(host.root, CONFIG);
    expect(left).not.toContain("nydus");
    expect(left).not.toContain("kata-qemu");
    expect(left.startsWith(CONTAINERD_V2_MAIN.slice(0, CONTAINERD_V2_MAIN.indexOf("[plugins")))).toBe(true);
  });

  it("kata-deploy 3.x's plain-named nydus plugin in config.toml: replaced by nydus-for-kata-tee, not left naming a socket nothing serves", async () => {
    const older = `${CONTAINERD_V2_MAIN}\n${deployHandler("io.containerd.grpc.v1.cri", "qemu")}
[proxy_plugins.nydus]
type = "snapshot"
address = "/run/nydus-snapshotter/containerd-nydus-grpc.sock"
`;
    const host = await answeringHost(node(intelContainerd17()), (root) => {
      kataDeployTree(x86, root, ["qemu"]);
      fs.writeFileSync(path.join(root, CONFIG), older);
      fs.mkdirSync(path.join(root, "opt/kata/nydus-snapshotter"), { recursive: true });
      fs.writeFileSync(path.join(root, "opt/kata/nydus-snapshotter/containerd-nydus-grpc"), "3.x\0");
    });
    const run = install16(host.root, { ...ENV16, SHIMS: "qemu" });
    expect(run.status, run.stderr + run.stdout).toBe(0);
    const text = read(host.root, CONFIG);
    expect(text).not.toContain("[proxy_plugins.nydus]");
    expect(text).not.toContain("/run/nydus-snapshotter");
    expect(text.match(/\[proxy_plugins\.nydus-for-kata-tee\]/g)).toHaveLength(1);
    const served = await containerdServes(text);
    expect(served.cri, served.log).toBe("ok");
  });
});

describe("killed part way: the next run rolls it back, nydus's unit stopped on the files put back", () => {
  it.each(["step:3:after-write", "services:after"])("at %s", async (point) => {
    const host = await killedThenUninstalled(node(), artifacts, ENV, point);
    if (point === "services:after")
      expect(calls(host.root)).toEqual([
        "daemon-reload",
        "restart nydus-for-kata-tee.service",
        "daemon-reload",
        "stop nydus-for-kata-tee.service",
      ]);
  });
});

describe("a containerd 2.0 node kata-deploy set nydus-for-kata-tee up on, taken over", () => {
  const deployed = "etc/containerd/conf.d/kata-deploy.toml";
  const KATA_DEPLOYS = `version = 3\n${deployHandler("io.containerd.cri.v1.runtime", "qemu")}
[plugins."io.containerd.cri.v1.images"]
disable_snapshot_annotations = false

[proxy_plugins."nydus-for-kata-tee"]
type = "snapshot"
address = "/run/nydus-for-kata-tee/containerd-nydus-grpc.sock"

[proxy_plugins."nydus-for-kata-tee".exports]
root = "/var/lib/nydus-for-kata-tee"
`;
  const KATA_DEPLOYS_UNIT =
    "[Unit]\nDescription=Nydus snapshotter\nAfter=network.target local-fs.target\nBefore=containerd.service\n\n[Service]\nExecStart=/opt/kata/nydus-for-kata-tee/containerd-nydus-grpc --config /opt/kata/nydus-for-kata-tee/config-guest-pulling.toml --log-to-stdout\nRestart=always\nRestartSec=5\n\n[Install]\nWantedBy=containerd.service\n";
  const takenOver = () =>
    answeringHost(node(), (root) => {
      kataDeployTree(artifacts, root, ["qemu"]);
      fs.writeFileSync(path.join(root, deployed), KATA_DEPLOYS);
      fs.mkdirSync(path.join(root, DIR), { recursive: true });
      fs.writeFileSync(path.join(root, DIR, "containerd-nydus-grpc"), "kata-deploy's old binary\0");
      fs.writeFileSync(path.join(root, DIR, "nydus-overlayfs"), "kata-deploy's old helper\0");
      fs.writeFileSync(
        path.join(root, DIR, "config-guest-pulling.toml"),
        'version = 1\nroot = "/var/lib/nydus-for-kata-tee"\n',
      );
      fs.mkdirSync(path.join(root, path.dirname(WANTS)), { recursive: true });
      fs.writeFileSync(path.join(root, UNIT), KATA_DEPLOYS_UNIT);
      fs.symlinkSync("/etc/systemd/system/nydus-for-kata-tee.service", path.join(root, WANTS));
    });

  it("without EXPERIMENTAL_SETUP_SNAPSHOTTER=nydus: refused, naming it; nothing changes", async () => {
    const host = await takenOver();
    const before = snapshot(host.root);
    const run = install(host.root, {}, ["--shims", "qemu"]);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("kata-deploy set up the nydus snapshotter here");
    expect(run.stderr).toContain(
      "which kata-install sets up only when EXPERIMENTAL_SETUP_SNAPSHOTTER names nydus",
    );
    expect(snapshot(host.root)).toEqual(before);
  });

  it("with it: carried over in the same transaction; uninstall then removes kata-deploy's unit and link too", async () => {
    const host = await takenOver();
    const run = install(host.root, ENV, ["--shims", "qemu"]);
    expect(run.status, run.stderr).toBe(0);
    expect(fs.existsSync(path.join(host.root, deployed))).toBe(false);
    expect(
      bytes(path.join(host.root, DIR, "containerd-nydus-grpc")).equals(
        bytes(`${SOURCE}/containerd-nydus-grpc`),
      ),
    ).toBe(true);
    // kata-deploy's unit from its image, filled in as kata-deploy fills it: what it wrote, byte for byte.
    expect(read(host.root, UNIT)).toBe(KATA_DEPLOYS_UNIT);
    expect(fs.readlinkSync(path.join(host.root, WANTS))).toBe(
      "/etc/systemd/system/nydus-for-kata-tee.service",
    );
    const ours = parse(read(host.root, DROP_IN)) as Record<string, unknown>;
    expect(dig(ours, ["proxy_plugins", "nydus-for-kata-tee", "type"])).toBe("snapshot");
    expect(calls(host.root)).toEqual([
      "daemon-reload",
      "restart nydus-for-kata-tee.service",
      "restart containerd",
    ]);
    expect(cli(host.root, ["plan", "--detailed-exitcode", "--shims", "qemu"]).status).toBe(0);

    const uninstall = cli(host.root, ["uninstall"]);
    expect(uninstall.status, uninstall.stderr).toBe(0);
    for (const file of [UNIT, WANTS, DIR, deployed])
      expect(fs.existsSync(path.join(host.root, file))).toBe(false);
    expect(calls(host.root).slice(3)).toEqual([
      "stop nydus-for-kata-tee.service",
      "daemon-reload",
      "restart containerd",
    ]);
  });
});

describe("k3s's agent: set up in the drop-in k3s's template imports, bound to k3s-agent.service", () => {
  const x86 = artifactDir("3.9.0", "x86_64");
  afterAll(() => fs.rmSync(x86, { recursive: true, force: true }));
  const K3S = "var/lib/rancher/k3s/agent/etc/containerd";
  const K3S_WANTS = "etc/systemd/system/k3s-agent.service.wants/nydus-for-kata-tee.service";
  const env = { ...ENV, SHIMS: "qemu qemu-tdx" };
  /** k3s's agent: its unit file where k3s's installer writes it, only it active. */
  const agent = () => {
    const spec = node(k3sImportingDropIns());
    spec.commands = {
      ...spec.commands,
      "/usr/bin/systemctl": `${SYSTEMCTL}\n[ "$1" = is-active ] && [ "$3" != k3s-agent ] && exit 3\nexit 0`,
    };
    spec.files = {
      ...spec.files,
      "/etc/systemd/system/k3s-agent.service": "[Service]\nExecStart=/usr/local/bin/k3s agent\n",
    };
    return spec;
  };

  it("the unit before and wanted by k3s-agent.service, the proxy plugin in config.toml.d; the real containerd loads it; uninstall gives the node back", async () => {
    const host = await answeringHost(agent());
    const before = snapshot(host.root);
    const run = cli(host.root, ["install", "--artifacts", `dir:${x86}`], env);
    expect(run.status, run.stderr).toBe(0);
    const unit = read(host.root, UNIT);
    expect(unit).toContain("Before=k3s-agent.service\n");
    expect(unit).toContain("\n[Install]\nWantedBy=k3s-agent.service\n");
    expect(fs.readlinkSync(path.join(host.root, K3S_WANTS))).toBe(
      "/etc/systemd/system/nydus-for-kata-tee.service",
    );
    expect(fs.existsSync(path.join(host.root, WANTS))).toBe(false);
    const dropIn = read(host.root, `${K3S}/config.toml.d/50-kata-install.toml`);
    const table = parse(dropIn) as Record<string, unknown>;
    expect(dig(table, ["proxy_plugins", "nydus-for-kata-tee", "address"])).toBe(
      "/run/nydus-for-kata-tee/containerd-nydus-grpc.sock",
    );
    // k3s's template is version 2: the CRI plugin's own table carries the annotations setting.
    expect(
      dig(table, ["plugins", "io.containerd.grpc.v1.cri", "containerd", "disable_snapshot_annotations"]),
    ).toBe(false);
    const runtimes = ["plugins", "io.containerd.grpc.v1.cri", "containerd", "runtimes"];
    expect(dig(table, [...runtimes, "kata-qemu-tdx", "snapshotter"])).toBe("nydus-for-kata-tee");
    expect(calls(host.root).filter((c) => !c.startsWith("is-active"))).toEqual([
      "daemon-reload",
      "restart nydus-for-kata-tee.service",
      "restart k3s-agent",
    ]);
    // What k3s's containerd reads: the drop-in over its rendered file (runc its default), loaded by
    // the real daemon (containerd 1.6 here: its imports replace a plugin's table whole, so the two
    // are given as one file).
    const served = await containerdServes(
      `${dropIn}\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\nruntime_type = "io.containerd.runc.v2"\n`,
    );
    expect(served.cri, served.log).toBe("ok");
    expect(served.log).toContain("nydus-for-kata-tee");

    const uninstall = cli(host.root, ["uninstall"], env);
    expect(uninstall.status, uninstall.stderr).toBe(0);
    expect(withoutLog(snapshot(host.root))).toEqual(withoutLog(before));
  });
});

describe("a containerd 2.0 node kata-deploy 3.x set its nydus-snapshotter up on, taken over", () => {
  const deployed = "etc/containerd/conf.d/kata-deploy.toml";
  const OLDER = "etc/systemd/system/nydus-snapshotter.service";
  const REQUIRES = "etc/systemd/system/containerd.service.requires/nydus-snapshotter.service";
  // kata-deploy 3.x's: the proxy plugin named plain nydus, on the socket of its nydus-snapshotter unit.
  const KATA_DEPLOYS = `version = 3\n${deployHandler("io.containerd.cri.v1.runtime", "qemu")}snapshotter = "nydus"

[plugins."io.containerd.cri.v1.images"]
disable_snapshot_annotations = false

[proxy_plugins.nydus]
type = "snapshot"
address = "/run/nydus-snapshotter/containerd-nydus-grpc.sock"
`;
  const OLDER_UNIT =
    "[Unit]\nDescription=Nydus snapshotter\nAfter=network.target local-fs.target\nBefore=containerd.service\n\n[Service]\nExecStart=/opt/kata/nydus-snapshotter/containerd-nydus-grpc --config /opt/kata/nydus-snapshotter/config-guest-pulling.toml --log-to-stdout\n\n[Install]\nRequiredBy=containerd.service\n";
  const olderNode = () =>
    answeringHost(node(), (root) => {
      kataDeployTree(artifacts, root, ["qemu"]);
      fs.writeFileSync(path.join(root, deployed), KATA_DEPLOYS);
      const older = path.join(root, "opt/kata/nydus-snapshotter");
      fs.mkdirSync(older, { recursive: true });
      for (const name of ["containerd-nydus-grpc", "nydus-overlayfs"])
        fs.writeFileSync(path.join(older, name), `kata-deploy 3.x's ${name}\0`);
      fs.mkdirSync(path.join(root, path.dirname(REQUIRES)), { recursive: true });
      fs.writeFileSync(path.join(root, OLDER), OLDER_UNIT);
      fs.symlinkSync("/etc/systemd/system/nydus-snapshotter.service", path.join(root, REQUIRES));
    });

  it("facts name all of it: the prefix's directory, the unit, its RequiredBy= link and the plain-named proxy plugin", async () => {
    const host = await olderNode();
    const facts = JSON.parse(cli(host.root, ["facts", "--json"]).stdout);
    expect(facts.kata.deploy.snapshotters).toEqual([
      {
        name: "nydus",
        paths: [
          "/opt/kata/nydus-snapshotter",
          "/etc/systemd/system/nydus-snapshotter.service",
          "/etc/systemd/system/containerd.service.requires/nydus-snapshotter.service",
          '/etc/containerd/conf.d/kata-deploy.toml: [proxy_plugins."nydus"]',
        ],
      },
    ]);
  });

  it("with EXPERIMENTAL_SETUP_SNAPSHOTTER=nydus: replaced by nydus-for-kata-tee, said; its unit stopped, its files gone; uninstall does not bring them back", async () => {
    const host = await olderNode();
    const plan = cli(host.root, ["plan", "--artifacts", `dir:${artifacts}`, "--shims", "qemu"]);
    expect(plan.status, plan.stdout.slice(-3000)).toBe(0);
    expect(plan.stdout).toContain(
      '[WARNING] takeover-snapshotter: kata-deploy 3.x set its nydus-snapshotter up here (/opt/kata/nydus-snapshotter; /etc/systemd/system/nydus-snapshotter.service; /etc/systemd/system/containerd.service.requires/nydus-snapshotter.service; /etc/containerd/conf.d/kata-deploy.toml: [proxy_plugins."nydus"]); the takeover replaces it by nydus-for-kata-tee',
    );
    expect(plan.stdout).toContain("stop-service nydus-snapshotter.service");
    const run = install(host.root, ENV, ["--shims", "qemu"]);
    expect(run.status, run.stderr).toBe(0);
    for (const gone of [OLDER, REQUIRES, "opt/kata/nydus-snapshotter", deployed])
      expect(fs.existsSync(path.join(host.root, gone)), gone).toBe(false);
    expect(fs.readlinkSync(path.join(host.root, WANTS))).toBe(
      "/etc/systemd/system/nydus-for-kata-tee.service",
    );
    const ours = parse(read(host.root, DROP_IN)) as Record<string, unknown>;
    expect(dig(ours, ["proxy_plugins", "nydus"])).toBeUndefined();
    expect(dig(ours, ["proxy_plugins", "nydus-for-kata-tee", "type"])).toBe("snapshot");
    // The old unit is stopped once systemd has forgotten its RequiredBy= link (stopping a unit
    // containerd requires would stop containerd with it); then the new one, then containerd.
    expect(calls(host.root)).toEqual([
      "daemon-reload",
      "stop nydus-snapshotter.service",
      "restart nydus-for-kata-tee.service",
      "restart containerd",
    ]);
    expect(cli(host.root, ["plan", "--detailed-exitcode", "--shims", "qemu"]).status).toBe(0);
    expect(cli(host.root, ["uninstall"]).status).toBe(0);
    for (const gone of [OLDER, REQUIRES, UNIT, WANTS])
      expect(fs.existsSync(path.join(host.root, gone)), gone).toBe(false);
  });

  it.each(["step:3:after-write", "services:after"])(
    "killed at %s: the next uninstall gives kata-deploy's nydus-snapshotter back, its unit started again",
    async (point) => {
      const host = await olderNode();
      const before = snapshot(host.root);
      const killed = spawnSync(
        process.execPath,
        [CLI, "install", "--host-root", host.root, "--artifacts", `dir:${artifacts}`, "--shims", "qemu"],
        { env: { ...process.env, ...ENV, KATA_INSTALL_CRASH_AT: point }, encoding: "utf8" },
      );
      expect(killed.status).not.toBe(0);
      const recovered = cli(host.root, ["uninstall"]);
      expect(recovered.status, recovered.stderr).toBe(0);
      // Rolled back to kata-deploy's node, which uninstall (of kata-install's) leaves as it is.
      expect(withoutLog(snapshot(host.root))).toEqual(withoutLog(before));
      if (point === "services:after")
        expect(calls(host.root).slice(-3)).toEqual([
          "daemon-reload",
          "restart nydus-snapshotter.service",
          "stop nydus-for-kata-tee.service",
        ]);
    },
  );

  it("a nydus-snapshotter.service of the admin's (nydus's own install, not kata-deploy's binary) is not kata-deploy's: not named, not touched", async () => {
    const ADMINS =
      "[Service]\nExecStart=/usr/local/bin/containerd-nydus-grpc --config /etc/nydus/config.toml\n";
    const host = await answeringHost(node(), (root) => {
      kataDeployTree(artifacts, root, ["qemu"]);
      fs.mkdirSync(path.join(root, path.dirname(REQUIRES)), { recursive: true });
      fs.writeFileSync(path.join(root, OLDER), ADMINS);
      fs.symlinkSync("/etc/systemd/system/nydus-snapshotter.service", path.join(root, REQUIRES));
    });
    const facts = JSON.parse(cli(host.root, ["facts", "--json"]).stdout);
    expect(facts.kata.deploy.snapshotters).toBeUndefined();
    const run = install(host.root, {}, ["--shims", "qemu"]);
    expect(run.status, run.stderr).toBe(0);
    expect(read(host.root, OLDER)).toBe(ADMINS);
    expect(fs.readlinkSync(path.join(host.root, REQUIRES))).toBe(
      "/etc/systemd/system/nydus-snapshotter.service",
    );
    expect(calls(host.root)).not.toContain("stop nydus-snapshotter.service");
  });

  it("without it: refused; ignored by name, the takeover still ends the unit, which would otherwise keep containerd from starting", async () => {
    const host = await olderNode();
    const before = snapshot(host.root);
    const refused = install(host.root, {}, ["--shims", "qemu"]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain("takeover-snapshotter (kata-deploy set up the nydus snapshotter here");
    expect(snapshot(host.root)).toEqual(before);
    const run = install(host.root, {}, [
      "--shims",
      "qemu",
      "--ignore-preflight-errors",
      "takeover-snapshotter",
    ]);
    expect(run.status, run.stderr).toBe(0);
    for (const gone of [OLDER, REQUIRES, "opt/kata/nydus-snapshotter"])
      expect(fs.existsSync(path.join(host.root, gone)), gone).toBe(false);
    expect(calls(host.root)).toEqual([
      "daemon-reload",
      "stop nydus-snapshotter.service",
      "restart containerd",
    ]);
  });
});
