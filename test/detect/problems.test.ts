// A node whose files are malformed or unreadable: facts record each problem, nothing throws, and
// nothing unknown is reported as absent.
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { detectFacts, Facts } from "../../src/detect/facts.js";
import { intelContainerd16 } from "../helpers/nodes.js";
import { buildHost, removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);

describe("a host with malformed and unreadable files", async () => {
  const spec = intelContainerd16();
  spec.files = {
    ...spec.files,
    "/etc/containerd/config.toml":
      'version = 2\n[plugins."io.containerd.grpc.v1.cri"\nsnapshotter = "overlayfs"\n',
    "/sys/bus/pci/devices/0000:00:02.0/vendor": "0x8086\n",
  };
  spec.commands = {
    ...spec.commands,
    "/usr/bin/containerd": "echo 'segmentation fault' >&2; exit 139",
    "/usr/bin/qemu-system-x86_64": "sleep 5",
  };
  spec.symlinks = { "/etc/os-release": "os-release", "/usr/lib/os-release": "/etc/os-release" };
  const built = buildHost(spec);
  // A directory where a file should be: reading it fails with EISDIR, as an unreadable file would.
  fs.rmSync(path.join(built.root, "/proc/filesystems"));
  fs.mkdirSync(path.join(built.root, "/proc/filesystems"));
  fs.rmSync(path.join(built.root, "/proc/sys/kernel/osrelease"));
  const facts = await detectFacts(built.host, { commandTimeoutMs: 300 });

  it("still returns a valid document", () => {
    expect(Facts.safeParse(facts).success).toBe(true);
  });

  it("names the TOML file, line and column that do not parse", () => {
    const problem = facts.problems.find((p) => p.path === "/etc/containerd/config.toml");
    expect(problem?.source).toBe("runtime");
    expect(problem?.reason).toMatch(/^invalid TOML at line 2, column \d+/);
    // The runtime is still known; what its config holds is not claimed.
    expect(facts.runtime.kind).toBe("containerd");
    expect(facts.runtime.configExists).toBe(true);
    expect(facts.runtime.configVersion).toBeNull();
  });

  it("records a command that failed and one that hung, with the reason", () => {
    expect(facts.problems).toContainEqual({
      source: "runtime",
      command: "/usr/bin/containerd --version",
      reason: "exited 139: segmentation fault",
    });
    expect(facts.problems).toContainEqual({
      source: "hypervisors",
      command: "/usr/bin/qemu-system-x86_64 --version",
      reason: "timed out after 300 ms",
    });
    expect(facts.runtime.version).toBeNull();
    expect(facts.hypervisors.qemu).toMatchObject({
      path: "/usr/bin/qemu-system-x86_64",
      version: null,
      devices: null,
    });
  });

  it("records unreadable and missing required files", () => {
    expect(facts.problems).toContainEqual({
      source: "kernel",
      path: "/proc/filesystems",
      reason: "is a directory",
    });
    expect(facts.problems).toContainEqual({
      source: "kernel",
      path: "/proc/sys/kernel/osrelease",
      reason: "does not exist",
    });
    expect(facts.problems).toContainEqual({
      source: "os",
      path: "/etc/os-release",
      reason: "too many symbolic links",
    });
    expect(facts.kernel.release).toBeNull();
    expect(facts.os.id).toBeNull();
  });

  it("a PCI device with only some attributes has the rest as null", () => {
    expect(facts.pci.devices).toEqual([
      {
        address: "0000:00:02.0",
        vendor: "8086",
        device: null,
        class: null,
        driver: null,
        iommuGroup: null,
        sriovTotalVfs: null,
        sriovNumVfs: null,
        physfn: null,
      },
    ]);
  });
});

describe("an empty directory as a host", async () => {
  const facts = await detectFacts(
    buildHost({ cpuinfo: "", kernel: { release: "", filesystems: [], loaded: null } }).host,
  );

  it("knows nothing, says why, and does not throw", () => {
    expect(facts.arch).toBeNull();
    expect(facts.cpu).toEqual({
      vendor: null,
      model: null,
      count: 0,
      flags: [],
      virtualization: null,
      hypervisorGuest: null,
    });
    expect(facts.problems.map((p) => p.source)).toContain("arch");
    expect(facts.runtime.kind).toBeNull();
  });
});
