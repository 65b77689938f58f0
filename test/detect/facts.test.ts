// The seven nodes of the facts issue, each read through the same code as a real node.
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { detectFacts, Facts } from "../../src/detect/facts.js";
import {
  amdSnpCrio,
  arm64Containerd20,
  gpuDistroQemuK3s,
  intelContainerd16,
  nestedVmWithoutVmx,
  noLoadableModules,
} from "../helpers/nodes.js";
import { buildHost, removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);

const detect = async (spec: Parameters<typeof buildHost>[0]) => {
  const facts = await detectFacts(buildHost(spec).host);
  // Whatever the node, the document honours its own contract.
  expect(Facts.safeParse(JSON.parse(JSON.stringify(facts))).success).toBe(true);
  return facts;
};

describe("Intel bare metal with containerd 1.6", async () => {
  const facts = await detect(intelContainerd16());

  it("reads the CPU", () => {
    expect(facts.arch).toBe("x86_64");
    expect(facts.cpu).toMatchObject({
      vendor: "GenuineIntel",
      count: 4,
      virtualization: "vmx",
      hypervisorGuest: false,
    });
    expect(facts.cpu.model).toBe("Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz");
    expect(facts.cpu.flags).toContain("sse4_1");
  });

  it("reads KVM and its nested parameter", () => {
    expect(facts.kvm).toMatchObject({ device: true, module: "kvm_intel", nested: true });
  });

  it("tells loaded, built-in, available and missing modules apart", () => {
    expect(facts.kernel.modulesSupported).toBe(true);
    expect(facts.kernel.modules.kvm_intel).toEqual({ state: "loaded", via: "/proc/modules" });
    expect(facts.kernel.modules.loop?.state).toBe("builtin");
    expect(facts.kernel.modules.tun).toMatchObject({
      state: "builtin",
      via: "/boot/config-5.15.0-105-generic CONFIG_TUN=y",
    });
    expect(facts.kernel.modules["9p"]?.state).toBe("available");
    expect(facts.kernel.modules.virtiofs?.state).toBe("available");
    expect(facts.kernel.modules.kvm_amd?.state).toBe("missing");
    expect(facts.kernel.filesystems).not.toContain("9p");
    expect(facts.kernel.config).toBe("/boot/config-5.15.0-105-generic");
  });

  it("finds containerd 1.6 and what its config holds", () => {
    expect(facts.runtime).toMatchObject({
      kind: "containerd",
      version: "1.6.12",
      socket: { path: "/run/containerd/containerd.sock", present: true },
      configPath: "/etc/containerd/config.toml",
      configExists: true,
      configVersion: 2,
      imports: [],
      dropInDir: null,
      defaultSnapshotter: "overlayfs",
    });
    expect(facts.runtime.handlers.map((h) => h.name)).toEqual(["runc"]);
    expect(facts.runtime.handlers[0]?.runtimeType).toBe("io.containerd.runc.v2");
  });

  it("reads block devices and hugepages", () => {
    expect(facts.storage.blockDevices).toEqual([
      { name: "loop0", sizeBytes: 0, transport: "virtual", remote: false },
      { name: "sda", sizeBytes: 937703088 * 512, transport: "local", remote: false },
    ]);
    expect(facts.kernel.hugepages).toEqual({
      defaultSizeKb: 2048,
      sizes: [
        { sizeKb: 2048, total: 0, free: 0 },
        { sizeKb: 1048576, total: 0, free: 0 },
      ],
    });
  });

  it("reports no hypervisor, no Kata, no problems", () => {
    expect(facts.hypervisors.qemu).toBeNull();
    expect(facts.kata.installed).toBe(false);
    expect(facts.problems).toEqual([]);
  });
});

describe("AMD with SEV-SNP and CRI-O", async () => {
  const facts = await detect(amdSnpCrio());

  it("sees SEV, SEV-ES and SEV-SNP on both sides: CPU and KVM", () => {
    expect(facts.cpu.virtualization).toBe("svm");
    expect(facts.security.sevSnp).toEqual({ cpu: true, kvm: true, usable: true });
    expect(facts.security.sev.usable).toBe(true);
    expect(facts.security.sevEs.usable).toBe(true);
    expect(facts.security.tdx).toEqual({ cpu: false, kvm: null, usable: false });
    expect(facts.kvm).toMatchObject({ module: "kvm_amd", nested: true });
  });

  it("follows the kubelet's endpoint to CRI-O and reads its drop-ins", () => {
    expect(facts.runtime).toMatchObject({
      kind: "crio",
      version: "1.30.3",
      socket: { path: "/var/run/crio/crio.sock", present: true },
      dropInDir: "/etc/crio/crio.conf.d",
      imports: ["/etc/crio/crio.conf.d/10-crio.conf"],
      configVersion: null,
    });
    expect(facts.runtime.handlers).toEqual([
      {
        name: "crun",
        runtimeType: null,
        runtimePath: "/usr/libexec/crio/crun",
        configPath: null,
        file: "/etc/crio/crio.conf.d/10-crio.conf",
      },
    ]);
  });

  it("finds RHEL's qemu-kvm and the devices it lacks", () => {
    expect(facts.hypervisors.qemu).toMatchObject({
      path: "/usr/libexec/qemu-kvm",
      origin: "distro",
      version: "8.2.0",
    });
    expect(facts.hypervisors.qemu?.devices).toContain("vhost-user-fs-pci");
    expect(facts.hypervisors.qemu?.devices).not.toContain("virtio-9p-pci");
  });

  it("records 9p as not built", () => {
    expect(facts.kernel.modules["9p"]).toEqual({ state: "missing", via: "CONFIG_9P_FS is not set" });
    expect(facts.os).toMatchObject({ id: "rhel", versionId: "9.4", idLike: ["fedora"] });
  });
});

describe("a nested VM without vmx or svm but with /dev/kvm", async () => {
  const facts = await detect(nestedVmWithoutVmx());

  it("says the node is a guest without a virtualisation extension", () => {
    expect(facts.cpu.virtualization).toBeNull();
    expect(facts.cpu.hypervisorGuest).toBe(true);
    expect(facts.kvm).toEqual({ device: true, module: "kvm", nested: null, params: {} });
    expect(facts.kernel.modules.kvm_intel?.state).toBe("available");
    expect(facts.runtime.kind).toBeNull();
  });
});

describe("a kernel without loadable modules", async () => {
  const facts = await detect(noLoadableModules());

  it("reads modules from the compressed build config and /sys/module", () => {
    expect(facts.kernel.modulesSupported).toBe(false);
    expect(facts.kernel.config).toBe("/proc/config.gz");
    expect(facts.kernel.modules.vhost_vsock).toEqual({
      state: "builtin",
      via: "/proc/config.gz CONFIG_VHOST_VSOCK=y",
    });
    expect(facts.kernel.modules.virtiofs?.state).toBe("builtin");
    expect(facts.kernel.modules["9p"]).toEqual({ state: "missing", via: "CONFIG_9P_FS is not set" });
    expect(facts.kernel.modules.vfio).toEqual({
      state: "missing",
      via: "CONFIG_VFIO absent from /proc/config.gz",
    });
    expect(
      Object.values(facts.kernel.modules).some((m) => m.state === "loaded" || m.state === "available"),
    ).toBe(false);
    expect(facts.kvm).toMatchObject({ module: "kvm_amd", nested: false });
  });
});

describe("an arm64 host", async () => {
  const facts = await detect(arm64Containerd20());

  it("reads as aarch64 from the cpuinfo's shape, whatever machine runs the test", () => {
    expect(facts.arch).toBe("aarch64");
    expect(facts.cpu).toMatchObject({
      vendor: "ARM",
      model: "part 0xd0c",
      count: 4,
      virtualization: null,
      hypervisorGuest: null,
    });
    expect(facts.cpu.flags).toContain("asimd");
  });

  it("reads containerd 2.0's version 3 config and the drop-ins it imports", () => {
    expect(facts.runtime).toMatchObject({
      kind: "containerd",
      version: "2.0.4",
      configVersion: 3,
      imports: ["/etc/containerd/conf.d/*.toml"],
      dropInDir: "/etc/containerd/conf.d",
      defaultSnapshotter: "overlayfs",
    });
    expect(facts.runtime.handlers).toEqual([
      {
        name: "runsc",
        runtimeType: "io.containerd.runsc.v1",
        runtimePath: null,
        configPath: null,
        file: "/etc/containerd/conf.d/20-gvisor.toml",
      },
    ]);
  });
});

describe("a GPU node with a distro qemu, SR-IOV and k3s", async () => {
  const facts = await detect(gpuDistroQemuK3s());

  it("finds the distro qemu with its version, devices and machine types", () => {
    expect(facts.hypervisors.qemu).toMatchObject({
      path: "/usr/bin/qemu-system-x86_64",
      origin: "distro",
      version: "8.2.2",
    });
    expect(facts.hypervisors.qemu?.devices).toEqual(
      expect.arrayContaining(["virtio-9p-pci", "vhost-user-fs-pci", "vfio-pci", "vhost-vsock-pci"]),
    );
    expect(facts.hypervisors.qemu?.machines).toEqual(
      expect.arrayContaining(["q35", "pc-q35-8.2", "microvm"]),
    );
    expect(facts.hypervisors.virtiofsd).toMatchObject({ path: "/usr/libexec/virtiofsd", version: "1.10.1" });
    expect(facts.hypervisors.cloudHypervisor).toBeNull();
    expect(facts.hypervisors.found.map((f) => f.name)).toEqual(["qemu", "virtiofsd"]);
  });

  it("reads the GPU, its driver and IOMMU group, and the SR-IOV NIC with its VF", () => {
    const gpu = facts.pci.devices.find((d) => d.address === "0000:17:00.0");
    expect(gpu).toEqual({
      address: "0000:17:00.0",
      vendor: "10de",
      device: "2330",
      class: "030200",
      driver: "vfio-pci",
      iommuGroup: "12",
      sriovTotalVfs: null,
      sriovNumVfs: null,
      physfn: null,
    });
    const pf = facts.pci.devices.find((d) => d.address === "0000:31:00.0");
    expect(pf).toMatchObject({ sriovTotalVfs: 8, sriovNumVfs: 1, driver: "mlx5_core" });
    expect(facts.pci.devices.find((d) => d.address === "0000:31:00.1")?.physfn).toBe("0000:31:00.0");
    expect(facts.iommu).toEqual({ enabled: true, groups: 4, cmdline: ["intel_iommu=on", "iommu=pt"] });
  });

  it("tells local NVMe from NVMe over fabrics and iSCSI", () => {
    const byName = Object.fromEntries(facts.storage.blockDevices.map((b) => [b.name, b]));
    expect(byName.nvme0n1).toMatchObject({ transport: "nvme", remote: false, sizeBytes: 3750748848 * 512 });
    expect(byName.nvme1n1).toMatchObject({ transport: "nvme-fabrics", remote: true });
    expect(byName.sdb).toMatchObject({ transport: "iscsi", remote: true });
  });

  it("finds k3s, its generated config and its template", () => {
    expect(facts.runtime).toMatchObject({
      kind: "k3s",
      version: "1.30.4",
      socket: { path: "/run/k3s/containerd/containerd.sock", present: true },
      configPath: "/var/lib/rancher/k3s/agent/etc/containerd/config.toml",
      templatePath: "/var/lib/rancher/k3s/agent/etc/containerd/config.toml.tmpl",
      configVersion: 2,
      dropInDir: null,
    });
    expect(facts.kvm.nested).toBe(false);
    // rke2 shares k3s's socket path; a socket alone must not make it a candidate.
    expect(facts.runtime.candidates.map((c) => c.kind)).toEqual(["k3s"]);
    expect(facts.problems).toEqual([]);
  });

  it("counts a registered filesystem without a loaded module as built in", () => {
    expect(facts.kernel.modules.fuse).toEqual({ state: "builtin", via: "/proc/filesystems fuse" });
    expect(facts.kernel.modules["9p"]?.state).toBe("loaded");
  });
});

describe("a path detection cannot look at (not merely absent)", async () => {
  const built = buildHost(intelContainerd16());
  // /dev/kvm a link to itself: there, but no stat() gets through it.
  const kvm = path.join(built.root, "dev/kvm");
  fs.rmSync(kvm, { force: true });
  fs.symlinkSync("kvm", kvm);
  const facts = await detectFacts(built.host);

  it("is recorded as a problem naming the path, and read as absent", () => {
    expect(facts.kvm.device).toBe(false);
    expect(facts.problems).toContainEqual(expect.objectContaining({ source: "kvm", path: "/dev/kvm" }));
  });
});
