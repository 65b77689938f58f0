// Container runtimes beyond the six zoo nodes: how the kind is chosen, and what each config holds.
import { afterAll, describe, expect, it } from "vitest";
import { DetectContext } from "../../src/detect/context.js";
import { hypervisors } from "../../src/detect/hypervisors.js";
import { kata } from "../../src/detect/kata.js";
import { runtime } from "../../src/detect/runtime/index.js";
import { nestedVmWithoutVmx } from "../helpers/nodes.js";
import { buildHost, removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);

const detectOn = async (extra: Partial<Parameters<typeof buildHost>[0]>) => {
  const ctx = new DetectContext(buildHost({ ...nestedVmWithoutVmx(), ...extra }).host);
  return { facts: await runtime.detect(ctx), problems: ctx.problems, ctx };
};

describe("runtime detection", () => {
  it("k0s: its own containerd config and socket", async () => {
    const { facts } = await detectOn({
      commands: { "/usr/local/bin/k0s": 'echo "v1.30.2+k0s.0"' },
      files: {
        "/etc/k0s/containerd.toml": 'version = 2\nimports = ["/etc/k0s/containerd.d/*.toml"]\n',
      },
      sockets: ["/run/k0s/containerd.sock"],
    });
    expect(facts).toMatchObject({
      kind: "k0s",
      version: "1.30.2",
      configPath: "/etc/k0s/containerd.toml",
      dropInDir: "/etc/k0s/containerd.d",
      socket: { path: "/run/k0s/containerd.sock", present: true },
    });
  });

  it("microk8s: the template it renders containerd's config from", async () => {
    const { facts } = await detectOn({
      files: {
        "/var/snap/microk8s/current/args/containerd-template.toml":
          // biome-ignore lint/suspicious/noTemplateCurlyInString: microk8s's template holds a literal ${SNAPSHOTTER}
          'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd]\n  snapshotter = "${SNAPSHOTTER}"\n',
        "/var/snap/microk8s/current/args/containerd.toml":
          'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd]\n  snapshotter = "overlayfs"\n',
      },
    });
    expect(facts).toMatchObject({
      kind: "microk8s",
      templatePath: "/var/snap/microk8s/current/args/containerd-template.toml",
      configVersion: 2,
      defaultSnapshotter: "overlayfs",
    });
  });

  it("rke2 is told from k3s by its files, though they share a socket path", async () => {
    const { facts } = await detectOn({
      commands: { "/usr/local/bin/rke2": 'echo "rke2 version v1.30.4+rke2r1 (abc)"' },
      files: { "/var/lib/rancher/rke2/agent/etc/containerd/config.toml": "version = 3\n" },
      sockets: ["/run/k3s/containerd/containerd.sock"],
    });
    expect(facts).toMatchObject({
      kind: "rke2",
      version: "1.30.4",
      configVersion: 3,
      socket: { present: true },
    });
    expect(facts.candidates.map((c) => c.kind)).toEqual(["rke2"]);
  });

  it("containerd and CRI-O both installed: the live socket decides; neither live is a recorded guess", async () => {
    const both = {
      commands: {
        "/usr/bin/containerd": 'echo "containerd github.com/containerd/containerd 1.7.24 abc"',
        "/usr/bin/crio": 'echo "crio version 1.31.1"',
      },
      files: { "/etc/containerd/config.toml": "version = 2\n", "/etc/crio/crio.conf": "[crio]\n" },
    };
    const live = await detectOn({ ...both, sockets: ["/var/run/crio/crio.sock"] });
    expect(live.facts.kind).toBe("crio");
    expect(live.problems).toEqual([]);
    const idle = await detectOn(both);
    expect(idle.facts.kind).toBe("crio");
    expect(idle.problems[0]?.reason).toMatch(/^several runtimes are installed \(crio, containerd\)/);
  });

  it("reads devmapper with a pool, a nydus proxy plugin and erofs; ignores devmapper without a pool", async () => {
    const { facts } = await detectOn({
      commands: { "/usr/bin/containerd": 'echo "containerd containerd.io 2.1.0 abc"' },
      files: {
        "/etc/containerd/config.toml": `version = 3
[plugins."io.containerd.snapshotter.v1.devmapper"]
  pool_name = "containerd-pool"
  root_path = "/var/lib/containerd/devmapper"
  base_image_size = "10GB"
[plugins."io.containerd.snapshotter.v1.erofs"]
[proxy_plugins.nydus]
  type = "snapshot"
  address = "/run/containerd-nydus/containerd-nydus-grpc.sock"
[proxy_plugins.stargz-content]
  type = "content"
  address = "/run/stargz.sock"
[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.kata-qemu]
  runtime_type = "io.containerd.kata-qemu.v2"
  runtime_path = "/opt/kata/bin/containerd-shim-kata-v2"
  [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.kata-qemu.options]
    ConfigPath = "/opt/kata/share/defaults/kata-containers/configuration-qemu.toml"
`,
      },
    });
    expect(facts.snapshotters).toEqual([
      { name: "devmapper", kind: "builtin", detail: "containerd-pool" },
      { name: "erofs", kind: "builtin", detail: null },
      { name: "nydus", kind: "proxy", detail: "/run/containerd-nydus/containerd-nydus-grpc.sock" },
    ]);
    expect(facts.handlers).toEqual([
      {
        name: "kata-qemu",
        runtimeType: "io.containerd.kata-qemu.v2",
        runtimePath: "/opt/kata/bin/containerd-shim-kata-v2",
        configPath: "/opt/kata/share/defaults/kata-containers/configuration-qemu.toml",
        file: "/etc/containerd/config.toml",
      },
    ]);
    const noPool = await detectOn({
      commands: { "/usr/bin/containerd": 'echo "containerd containerd.io 2.1.0 abc"' },
      files: {
        "/etc/containerd/config.toml":
          'version = 3\n[plugins."io.containerd.snapshotter.v1.devmapper"]\n  pool_name = ""\n',
      },
    });
    expect(noPool.facts.snapshotters).toEqual([]);
  });

  it("containerd installed without a config file: its defaults apply", async () => {
    const { facts } = await detectOn({
      commands: { "/usr/bin/containerd": 'echo "containerd containerd.io 1.7.24 abc"' },
    });
    expect(facts).toMatchObject({
      kind: "containerd",
      configExists: false,
      configVersion: null,
      handlers: [],
    });
  });

  it("relative imports resolve against the main config's directory", async () => {
    const { facts } = await detectOn({
      commands: { "/usr/bin/containerd": 'echo "containerd containerd.io 2.0.0 abc"' },
      files: {
        "/etc/containerd/config.toml": 'version = 3\nimports = ["conf.d/*.toml", "extra.toml"]\n',
        "/etc/containerd/conf.d/a.toml":
          'version = 3\n[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.a]\n',
        "/etc/containerd/extra.toml":
          'version = 3\n[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.b]\n',
      },
    });
    expect(facts.dropInDir).toBe("/etc/containerd/conf.d");
    expect(facts.handlers.map((h) => [h.name, h.file])).toEqual([
      ["a", "/etc/containerd/conf.d/a.toml"],
      ["b", "/etc/containerd/extra.toml"],
    ]);
  });
});

describe("an existing Kata install", () => {
  it("is found with its version, configurations and owner", async () => {
    const ctx = new DetectContext(
      buildHost({
        ...nestedVmWithoutVmx(),
        commands: { "/opt/kata/bin/kata-runtime": 'echo "kata-runtime  : 3.9.0"; echo "   commit   : abc"' },
        files: {
          "/opt/kata/share/defaults/kata-containers/configuration-qemu.toml": "",
          "/opt/kata/share/defaults/kata-containers/configuration-clh.toml": "",
          "/opt/kata/share/defaults/kata-containers/README": "",
          "/opt/kata/.install/journal.json": "{}",
          "/etc/kata-containers/configuration.toml": "",
        },
      }).host,
    );
    expect(await kata.detect(ctx)).toEqual({
      installed: true,
      prefix: "/opt/kata",
      version: "3.9.0",
      configs: ["configuration-clh.toml", "configuration-qemu.toml"],
      etcConfig: "/etc/kata-containers/configuration.toml",
      managedBy: "kata-install",
    });
  });

  it("Kata's own qemu is asked its version only; a host's qemu is asked its devices", async () => {
    const ask =
      'case "$1" in --version) echo "QEMU emulator version 9.1.2";; *) echo "asked $*" >&2; exit 1;; esac';
    const ctx = new DetectContext(
      buildHost({ ...nestedVmWithoutVmx(), commands: { "/opt/kata/bin/qemu-system-x86_64": ask } }).host,
    );
    const facts = await hypervisors.detect(ctx);
    expect(facts.qemu).toEqual({
      path: "/opt/kata/bin/qemu-system-x86_64",
      origin: "kata",
      version: "9.1.2",
    });
    expect(ctx.problems).toEqual([]);
  });
});
