// The real containerd of every minor the runtime layouts place handlers for (Debian's 1.6, 1.7 and
// 2.x, scripts/test-tools.sh), running on the test host: install restarts it through the host's
// systemctl and asks it, through its socket, what it serves; the test asks it too. Keyed by minor,
// so a minor added to CONTAINERD_MINORS does not compile until it says where its handlers go and
// which configurations its nodes have.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { containerdPlugins } from "../../src/host/cri.js";
import { artifactDir } from "../helpers/artifacts.js";
import { runCli } from "../helpers/cli.js";
import { intelContainerd16, mkfsErofsScript } from "../helpers/nodes.js";
import { realContainerdHost } from "../helpers/real-containerd-host.js";
import { type ContainerdMinor, containerdOf, realTool, realTools } from "../helpers/real-tools.js";
import { removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);
const artifacts = artifactDir();
afterAll(() => fs.rmSync(artifacts, { recursive: true, force: true }));
/** The real 4.1.0 release's configurations (stand-in binaries): the TEE shims of the chart. */
const artifacts4 = artifactDir("4.1.0");
afterAll(() => fs.rmSync(artifacts4, { recursive: true, force: true }));

const FIXTURES = path.join(import.meta.dirname, "../fixtures/runtimes/containerd");
const fixture = (name: string) => fs.readFileSync(path.join(FIXTURES, name), "utf8");

const MINORS: Record<ContainerdMinor, { configDefault: string; handlersIn: string }> = {
  "1.6": {
    configDefault: "config-default-1.6.20-debian-bookworm.toml",
    handlersIn: "/etc/containerd/config.toml",
  },
  "1.7": {
    configDefault: "config-default-1.7.24-debian-trixie.toml",
    handlersIn: "/etc/containerd/config.toml",
  },
  "2": {
    configDefault: "config-default-2.1.9-debian-sid.toml",
    handlersIn: "/etc/containerd/conf.d/50-kata-install.toml",
  },
};

/** The Kata handlers the default install writes on the test node (intelContainerd16's facts). */
const KATA = ["kata-clh", "kata-clh-runtime-rs", "kata-dragonball", "kata-qemu", "kata-qemu-runtime-rs"];

describe.each(Object.entries(MINORS) as [ContainerdMinor, (typeof MINORS)[ContainerdMinor]][])(
  "containerd %s, the real daemon",
  (minor, { configDefault, handlersIn }) => {
    it.each([
      ["the configuration Debian's package ships", "debian-package-config.toml"],
      ["its own `containerd config default`", configDefault],
    ])("on %s: install serves runc and Kata's handlers; uninstall, runc alone", async (_, file) => {
      const config = fixture(file);
      const node = await realContainerdHost(minor, {
        ...intelContainerd16(),
        files: { "/etc/containerd/config.toml": config },
      });
      console.log(`containerd ${minor}: ${containerdOf(minor).tool.versionLine}`);
      const cli = (...args: string[]) => runCli([...args, "--host-root", node.root]);
      const install = cli("install", "--artifacts", `dir:${artifacts}`);
      expect(install.status, `${install.stderr}\n${node.log().slice(-2000)}`).toBe(0);
      expect(install.stdout).toContain("Runtime: restarted containerd, and it serves the Kata handlers.");
      expect(fs.readFileSync(path.join(node.root, handlersIn), "utf8")).toContain("kata-qemu");
      expect(node.starts()).toBe(2);
      const served = await node.serving();
      expect(served.runtimeReady).toBe(true);
      expect(served.handlers?.sort()).toEqual(["runc", ...KATA].sort());
      expect(served.defaultRuntime).toBe("runc");

      const uninstall = cli("uninstall");
      expect(uninstall.status, uninstall.stderr).toBe(0);
      expect(fs.readFileSync(path.join(node.root, "etc/containerd/config.toml"), "utf8")).toBe(config);
      const after = await node.serving();
      expect(after.handlers).toEqual(["runc"]);
      node.stop();
    });

    it("an admin's gVisor handler (runsc) beside runc: served with Kata's, and still served after uninstall", async () => {
      const base = fixture(configDefault);
      const plugin = /^version = 3/m.test(base)
        ? "io.containerd.cri.v1.runtime"
        : "io.containerd.grpc.v1.cri";
      const config = `${base}\n[plugins."${plugin}".containerd.runtimes.runsc]\n  runtime_type = "io.containerd.runsc.v1"\n`;
      const node = await realContainerdHost(minor, {
        ...intelContainerd16(),
        files: { "/etc/containerd/config.toml": config },
      });
      const cli = (...args: string[]) => runCli([...args, "--host-root", node.root]);
      expect((await node.serving()).handlers?.sort()).toEqual(["runc", "runsc"]);
      const install = cli("install", "--artifacts", `dir:${artifacts}`);
      expect(install.status, `${install.stderr}\n${node.log().slice(-2000)}`).toBe(0);
      expect((await node.serving()).handlers?.sort()).toEqual(["runc", "runsc", ...KATA].sort());
      const uninstall = cli("uninstall");
      expect(uninstall.status, uninstall.stderr).toBe(0);
      expect(fs.readFileSync(path.join(node.root, "etc/containerd/config.toml"), "utf8")).toBe(config);
      expect((await node.serving()).handlers?.sort()).toEqual(["runc", "runsc"]);
      node.stop();
    });

    it("a GPU/TEE shim set (the chart's confidential and NVIDIA shims) loads and is served; uninstall, runc alone", async () => {
      const config = fixture(configDefault);
      const node = await realContainerdHost(minor, {
        ...intelContainerd16(),
        files: { "/etc/containerd/config.toml": config },
      });
      const shims = [
        "qemu-coco-dev",
        "qemu-snp",
        "qemu-tdx",
        "qemu-nvidia-gpu",
        "qemu-nvidia-gpu-snp",
        "qemu-nvidia-gpu-tdx",
      ];
      const install = runCli([
        "install",
        "--host-root",
        node.root,
        "--artifacts",
        `dir:${artifacts4}`,
        "--shims",
        shims.join(","),
      ]);
      expect(install.status, `${install.stdout}\n${install.stderr}`).toBe(0);
      const served = await node.serving();
      expect(served.handlers?.sort()).toEqual(["runc", ...shims.map((s) => `kata-${s}`)].sort());
      expect(runCli(["uninstall", "--host-root", node.root]).status).toBe(0);
      expect(fs.readFileSync(path.join(node.root, "etc/containerd/config.toml"), "utf8")).toBe(config);
      expect((await node.serving()).handlers).toEqual(["runc"]);
      node.stop();
    });
  },
);

describe("an install whose restart leaves CRI unserved", () => {
  it("is rolled back, the runtime restarted on what it had, and containerd's own error said", async () => {
    // The node says fs-verity works under containerd's root (btrfs, CONFIG_FS_VERITY=y), and the
    // admin passes the 2.2 check by hand; this machine's file system has no fs-verity, so the real
    // containerd 2.1's erofs snapshotter fails at start and takes the CRI plugin with it.
    const spec = intelContainerd16();
    const config = fixture("config-default-2.1.9-debian-sid.toml");
    const node = await realContainerdHost("2", {
      ...spec,
      kernel: {
        ...spec.kernel,
        available: [...(spec.kernel.available ?? []), "erofs"],
        config: { ...spec.kernel.config, CONFIG_FS_VERITY: "y" },
      },
      commands: { ...spec.commands, "/usr/bin/mkfs.erofs": mkfsErofsScript("1.8") },
      files: {
        "/etc/containerd/config.toml": config,
        "/proc/1/mountinfo":
          "21 1 0:20 / / rw,relatime - ext4 /dev/sda1 rw\n30 21 0:30 / /var/lib/containerd rw - btrfs /dev/sdb rw\n",
      },
    });
    const env = { EXPERIMENTAL_SETUP_SNAPSHOTTER: "erofs" };
    const install = runCli(
      [
        "install",
        "--host-root",
        node.root,
        "--artifacts",
        `dir:${artifacts}`,
        "--ignore-preflight-errors",
        "snapshotter-setup",
      ],
      { env },
    );
    expect(install.status).toBe(1);
    expect(install.stderr).toContain(
      "containerd after systemctl restart: containerd's CRI plugin did not start: ",
    );
    expect(install.stderr).toContain(
      "io.containerd.grpc.v1.cri: unable to load CRI image service plugin dependency: failed to check fsverity support",
    );
    expect(install.stderr).toContain(
      "Everything this run changed was rolled back: containerd's configuration and Kata's files are as they were before it, and containerd was restarted on them and answers.",
    );
    // Restarted twice: on the new files, then on the old ones, which it serves.
    expect(node.starts()).toBe(3);
    expect(fs.readFileSync(path.join(node.root, "etc/containerd/config.toml"), "utf8")).toBe(config);
    expect(fs.existsSync(path.join(node.root, "etc/containerd/conf.d/50-kata-install.toml"))).toBe(false);
    expect((await node.serving()).handlers).toEqual(["runc"]);
    node.stop();
  });
});

describe("containerd whose CRI plugin is off (Docker's containerd.io package)", () => {
  it("plan and install refuse it by name; forced, the install is rolled back as CRI never served", async () => {
    const config = fixture("docker-containerd.io-config.toml");
    const node = await realContainerdHost("1.7", {
      ...intelContainerd16(),
      files: { "/etc/containerd/config.toml": config },
    });
    const plan = runCli(["plan", "--host-root", node.root, "--artifacts", `dir:${artifacts}`]);
    expect(plan.status).toBe(1);
    expect(plan.stdout).toContain(
      "[ERROR] containerd-cri: containerd's configuration turns its CRI plugin off (disabled_plugins: cri): the kubelet cannot run pods on this containerd",
    );
    const refused = runCli(["install", "--host-root", node.root, "--artifacts", `dir:${artifacts}`]);
    expect(refused.status).toBe(1);
    expect(node.starts()).toBe(1);
    const forced = runCli([
      "install",
      "--host-root",
      node.root,
      "--artifacts",
      `dir:${artifacts}`,
      "--ignore-preflight-errors",
      "containerd-cri",
    ]);
    expect(forced.status).toBe(1);
    expect(forced.stderr).toContain(
      "containerd after systemctl restart: it does not serve CRI (no RuntimeService on its socket); its socket /run/containerd/containerd.sock answers, but it cannot run the pods it should.",
    );
    expect(fs.readFileSync(path.join(node.root, "etc/containerd/config.toml"), "utf8")).toBe(config);
    node.stop();
  });
});

describe.each(["1.7", "2"] as const)(
  "containerd %s with the real nydus-snapshotter (EXPERIMENTAL_SETUP_SNAPSHOTTER=nydus)",
  (minor) => {
    it("the snapshotter runs and answers, containerd loads its proxy plugin, CRI serves the handler mapped to it", async () => {
      // What kata-deploy's image carries for nydus: the real binaries (Debian's nydus-snapshotter),
      // its configuration and unit (test/fixtures/nydus-snapshotter, kata-deploy's own texts).
      const source = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-nydus-source-"));
      const nydus = path.dirname(
        realTool("nydus-snapshotter", realTools().find((t) => t.name === "nydus-snapshotter")?.minor ?? "")
          .path,
      );
      for (const bin of ["containerd-nydus-grpc", "nydus-overlayfs"])
        fs.copyFileSync(path.join(nydus, bin), path.join(source, bin));
      for (const text of ["config-guest-pulling.toml", "nydus-snapshotter.service"])
        fs.copyFileSync(
          path.join(import.meta.dirname, "../fixtures/nydus-snapshotter", text),
          path.join(source, text),
        );
      const config = fixture(MINORS[minor].configDefault);
      const node = await realContainerdHost(minor, {
        ...intelContainerd16(),
        files: { "/etc/containerd/config.toml": config },
      });
      const env = {
        EXPERIMENTAL_SETUP_SNAPSHOTTER: "nydus",
        SNAPSHOTTER_HANDLER_MAPPING: "qemu-coco-dev:nydus",
        KATA_INSTALL_NYDUS_SNAPSHOTTER_DIR: source,
      };
      const install = runCli(
        [
          "install",
          "--host-root",
          node.root,
          "--artifacts",
          `dir:${artifacts4}`,
          "--shims",
          "qemu,qemu-coco-dev",
        ],
        { env },
      );
      expect(install.status, `${install.stdout}\n${install.stderr}\n${node.log().slice(-1500)}`).toBe(0);
      console.log(
        `containerd ${minor} with ${realTools().find((t) => t.name === "nydus-snapshotter")?.versionLine}`,
      );
      // The snapshotter's own log says it started; its socket answers.
      const socket = path.join(node.root, "run/nydus-for-kata-tee/containerd-nydus-grpc.sock");
      expect(fs.existsSync(socket), node.unitLog("nydus-for-kata-tee")).toBe(true);
      expect(node.unitLog("nydus-for-kata-tee")).toContain("Start nydus-snapshotter.");
      const plugins = await containerdPlugins(node.socket, 5_000);
      expect(plugins).toContainEqual({
        plugin: "io.containerd.snapshotter.v1.nydus-for-kata-tee",
        error: null,
      });
      const served = await node.serving();
      expect(served.handlers).toEqual(expect.arrayContaining(["runc", "kata-qemu", "kata-qemu-coco-dev"]));
      expect(fs.readFileSync(path.join(node.root, MINORS[minor].handlersIn), "utf8")).toMatch(
        /snapshotter = "nydus-for-kata-tee"/,
      );

      const uninstall = runCli(["uninstall", "--host-root", node.root], { env });
      expect(uninstall.status, uninstall.stderr).toBe(0);
      expect(fs.readFileSync(path.join(node.root, "etc/containerd/config.toml"), "utf8")).toBe(config);
      expect((await node.serving()).handlers).toEqual(["runc"]);
      node.stop();
      fs.rmSync(source, { recursive: true, force: true });
    });
  },
);
