// The decision over the zoo's nodes: one test per seed case, each asserting the decision and its
// provenance.
import { afterAll, describe, expect, it } from "vitest";
import { check, decideOn, droppedReason, shimNames } from "../helpers/decide.js";
import {
  amdSnpCrio,
  gpuDistroQemuK3s,
  INTEL_MODULES_AVAILABLE,
  intelContainerd16,
  nestedVmWithoutVmx,
  qemuScript,
} from "../helpers/nodes.js";
import { removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);

/** The Intel node, with the host kernel's virtio-fs and/or 9p taken away. */
function intelWithout(missing: string[]) {
  const spec = intelContainerd16();
  spec.kernel.available = INTEL_MODULES_AVAILABLE.filter((m) => !missing.includes(m));
  spec.kernel.config = {
    ...spec.kernel.config,
    ...Object.fromEntries(missing.map((m) => [m === "virtiofs" ? "CONFIG_VIRTIO_FS" : "CONFIG_9P_FS", "n"])),
  };
  return spec;
}

describe("shared filesystems: decided by the hypervisor's devices, not the host kernel", () => {
  it("the seed case: RHEL's qemu-kvm, no virtio-9p: used, with virtio-fs; no other qemu pulled", async () => {
    // (qemu-snp needs Kata's own qemu build on this SEV-SNP host: pinned out, to see qemu's choice.)
    const decision = await decideOn(amdSnpCrio(), { overrides: 'shims = ["qemu", "clh"]\n' });
    expect(decision.config.qemu?.["hypervisor.qemu.shared_fs"]).toMatchObject({
      value: "virtio-fs",
      source: { kind: "rule", name: "distro-qemu-virtio-fs", file: "rules/shared-fs.toml" },
    });
    expect(decision.artifacts.find((a) => a.name === "qemu")).toMatchObject({ from: "distro" });
    expect(decision.droppedArtifacts.map((a) => a.name)).toContain("qemu");
    expect(shimNames(decision)).toContain("clh");
  });

  it("no virtiofs (nor 9p) in the host kernel: clh stays, qemu keeps virtio-fs (virtiofsd and the guest do the work)", async () => {
    for (const missing of [["virtiofs"], ["virtiofs", "9p"]]) {
      const decision = await decideOn(intelWithout(missing));
      expect(shimNames(decision)).toEqual(expect.arrayContaining(["clh", "clh-runtime-rs", "qemu"]));
      expect(decision.config.qemu?.["hypervisor.qemu.shared_fs"]).toBeUndefined(); // the template's virtio-fs
      expect(decision.config["qemu-runtime-rs"]?.["hypervisor.qemu.shared_fs"]).toBeUndefined();
    }
  });

  it("both: no rule touches shared_fs, the template default stands", async () => {
    const decision = await decideOn(intelContainerd16());
    expect(decision.config.qemu?.["hypervisor.qemu.shared_fs"]).toBeUndefined();
    expect(shimNames(decision)).toEqual(expect.arrayContaining(["qemu", "clh", "dragonball"]));
  });
});

describe("a distro qemu", () => {
  const withQemu = (version: string, devices?: string) => {
    const spec = intelContainerd16();
    spec.commands = { ...spec.commands, "/usr/bin/qemu-system-x86_64": qemuScript(version, devices) };
    return spec;
  };

  it("good enough: used, the configuration points at it, the bundled artifact is skipped", async () => {
    const decision = await decideOn(withQemu("8.2.2"));
    expect(decision.droppedArtifacts).toContainEqual({
      name: "qemu",
      reason: "the host's own qemu (/usr/bin/qemu-system-x86_64, 8.2.2) is used instead",
      source: expect.objectContaining({ kind: "rule", name: "use-distro-qemu" }),
    });
    expect(decision.artifacts.find((a) => a.name === "qemu")).toMatchObject({ from: "distro" });
    expect(decision.config.qemu?.["hypervisor.qemu.path"]).toMatchObject({
      value: "/usr/bin/qemu-system-x86_64",
      source: { kind: "derived", name: "the host's qemu", from: { kind: "rule", name: "use-distro-qemu" } },
    });
    expect(decision.config.clh?.["hypervisor.qemu.path"]).toBeUndefined();
  });

  it("the admin pins the bundled one: bundled it is, and the rule is recorded as beaten", async () => {
    const decision = await decideOn(withQemu("8.2.2"), {
      overrides: '[artifacts.qemu]\nsource = "bundled"\n',
    });
    const qemu = decision.artifacts.find((a) => a.name === "qemu");
    expect(qemu).toMatchObject({
      from: "bundled",
      source: { kind: "overrides", name: "artifacts.qemu.source", line: 2 },
    });
    expect(decision.config.qemu?.["hypervisor.qemu.path"]).toBeUndefined();
  });

  it("too old, or without vhost-user-fs: not used", async () => {
    expect((await decideOn(withQemu("6.2.0"))).artifacts.find((a) => a.name === "qemu")?.from).toBe(
      "bundled",
    );
    const noVirtiofs = await decideOn(
      withQemu("8.2.2", 'name "virtio-blk-pci", bus PCI\nname "vhost-vsock-pci", bus PCI'),
    );
    expect(noVirtiofs.artifacts.find((a) => a.name === "qemu")?.from).toBe("bundled");
    expect(noVirtiofs.vars["distro-qemu"]).toBe(false);
  });

  it("without the machine type Kata's configuration names on this architecture (q35): not used", async () => {
    const spec = intelContainerd16();
    spec.commands = {
      ...spec.commands,
      "/usr/bin/qemu-system-x86_64": qemuScript(
        "8.2.2",
        undefined,
        "Supported machines are:\nmicrovm              microvm (i386)\npc                   Standard PC (i440FX + PIIX, 1996)",
      ),
    };
    const decision = await decideOn(spec);
    expect(decision.artifacts.find((a) => a.name === "qemu")?.from).toBe("bundled");
    expect(decision.checks.find((c) => c.id === "distro-qemu")?.message).toContain("machine type");
  });

  it("a distro virtiofsd: used when it is the Rust one, 1.10 or later; otherwise the bundled one, and preflight says why", async () => {
    const good = await decideOn(gpuDistroQemuK3s());
    expect(good.artifacts.find((a) => a.name === "virtiofsd")).toMatchObject({ from: "distro" });
    expect(good.config.qemu?.["hypervisor.qemu.virtio_fs_daemon"]).toMatchObject({
      value: "/usr/libexec/virtiofsd",
      source: { kind: "derived", name: "the host's virtiofsd" },
    });
    const spec = gpuDistroQemuK3s();
    spec.commands = { ...spec.commands, "/usr/libexec/virtiofsd": 'echo "virtiofsd backend 1.5.0"' };
    const old = await decideOn(spec);
    expect(old.artifacts.find((a) => a.name === "virtiofsd")).toMatchObject({ from: "bundled" });
    expect(old.config.qemu?.["hypervisor.qemu.virtio_fs_daemon"]).toBeUndefined();
    expect(old.checks.find((c) => c.id === "distro-virtiofsd")).toMatchObject({
      severity: "info",
      status: "fail",
      message: expect.stringContaining("(/usr/libexec/virtiofsd, 1.5.0) is not used"),
    });
  });

  it("a distro virtiofsd on a node whose shims include the Rust runtime's: its allowlist only where the release has one, nothing refused", async () => {
    const spec = intelContainerd16();
    spec.kernel.filesystems = [...spec.kernel.filesystems, "virtiofs"];
    spec.commands = { ...spec.commands, "/usr/libexec/virtiofsd": 'echo "virtiofsd backend 1.10.1"' };
    const decision = await decideOn(spec);
    expect(decision.artifacts.find((a) => a.name === "virtiofsd")).toMatchObject({ from: "distro" });
    expect(shimNames(decision)).toContain("clh-runtime-rs");
    // No check of kata-install's own making fails the default install (the Rust runtime's
    // configuration has no valid_virtio_fs_daemon_paths: an allowlist it does not have allows all).
    expect(
      decision.checks.filter((c) => c.status === "fail" && (c.id === "config-key" || c.severity === "error")),
    ).toEqual([]);
    expect(decision.config.clh?.["hypervisor.clh.valid_virtio_fs_daemon_paths"]).toMatchObject({
      value: ["/usr/libexec/virtiofsd"],
    });
    expect(
      decision.config["clh-runtime-rs"]?.["hypervisor.clh.valid_virtio_fs_daemon_paths"],
    ).toBeUndefined();
    expect(decision.config["clh-runtime-rs"]?.["hypervisor.clh.virtio_fs_daemon"]).toMatchObject({
      value: "/usr/libexec/virtiofsd",
    });
  });

  it("lacking a device the configuration uses (virtio-scsi): Kata's bundled qemu, and preflight says why", async () => {
    const spec = intelContainerd16();
    spec.commands = {
      ...spec.commands,
      "/usr/libexec/qemu-kvm": qemuScript(
        "8.2.0",
        'name "virtio-blk-pci", bus PCI\nname "vhost-vsock-pci", bus PCI\nname "vhost-user-fs-pci", bus PCI',
      ),
    };
    const decision = await decideOn(spec);
    expect(decision.vars["distro-qemu"]).toBe(false);
    expect(decision.artifacts.find((a) => a.name === "qemu")?.from).toBe("bundled");
    expect(decision.checks.find((c) => c.id === "distro-qemu")).toMatchObject({
      status: "fail",
      severity: "info",
      message: expect.stringMatching(/^the host's qemu \(\/usr\/libexec\/qemu-kvm, 8\.2\.0\) is not used/),
    });
  });
});

describe("firecracker, confidential and GPU shims", () => {
  it("firecracker only with a devmapper pool; dropped otherwise with the reason", async () => {
    const without = await decideOn(intelContainerd16());
    expect(droppedReason(without, "fc")?.reason).toBe(
      "needs block-snapshotter: the container runtime has a block-device snapshotter (devmapper with a pool) — not the case here",
    );
    const spec = intelContainerd16();
    spec.files = {
      ...spec.files,
      "/etc/containerd/config.toml": `${spec.files?.["/etc/containerd/config.toml"]}\n[plugins."io.containerd.snapshotter.v1.devmapper"]\n  pool_name = "containerd-pool"\n`,
    };
    const withPool = await decideOn(spec);
    expect(shimNames(withPool)).toContain("fc");
    expect(withPool.handlers.fc?.snapshotter?.value).toBe("devmapper");
  });

  it("SEV-SNP host: qemu-snp in, qemu-tdx out with the reason", async () => {
    const decision = await decideOn(amdSnpCrio());
    expect(shimNames(decision)).toContain("qemu-snp");
    expect(droppedReason(decision, "qemu-tdx")?.reason).toBe(
      "needs tdx: the host runs Intel TDX (CPU and KVM) — not the case here",
    );
    expect(decision.artifacts.map((a) => a.name)).toEqual(
      expect.arrayContaining(["guest-image-confidential", "guest-kernel", "ovmf-sev"]),
    );
    expect(decision.artifacts.map((a) => a.name)).not.toContain("ovmf-tdx");
  });

  it("TDX host: qemu-tdx in", async () => {
    const spec = intelContainerd16();
    spec.cpuinfo = spec.cpuinfo.replaceAll("vmx ept vpid", "vmx ept vpid tdx_host_platform");
    spec.sysModules = { ...spec.sysModules, kvm_intel: { nested: "Y", tdx: "Y" } };
    const decision = await decideOn(spec);
    expect(shimNames(decision)).toContain("qemu-tdx");
    expect(shimNames(decision)).not.toContain("qemu-snp");
  });

  it("an NVIDIA GPU bound to vfio-pci with the IOMMU on: the GPU shim, and VFIO ports", async () => {
    const decision = await decideOn(gpuDistroQemuK3s());
    expect(shimNames(decision)).toContain("qemu-nvidia-gpu");
    expect(decision.config.qemu?.["hypervisor.qemu.hot_plug_vfio"]).toMatchObject({
      value: "root-port",
      source: { name: "vfio-hotplug-for-passthrough" },
    });
    expect(decision.config.clh?.["hypervisor.clh.hot_plug_vfio"]?.value).toBe("root-port");
    expect(decision.config["qemu-nvidia-gpu"]?.["hypervisor.qemu.cold_plug_vfio"]?.value).toBe("root-port");
    // qemu runs on the distro qemu; the GPU shim still needs Kata's.
    expect(decision.artifacts.find((a) => a.name === "qemu")).toMatchObject({
      from: "bundled",
      neededBy: ["qemu-nvidia-gpu"],
    });
    expect(decision.config.qemu?.["hypervisor.qemu.path"]?.value).toBe("/usr/bin/qemu-system-x86_64");
  });

  it("the same GPU without an IOMMU: no GPU shim, and no VFIO ports where nothing is bound", async () => {
    const spec = gpuDistroQemuK3s();
    spec.pci = spec.pci?.map((d) => ({
      ...d,
      iommuGroup: undefined,
      driver: d.driver === "vfio-pci" ? "nvidia" : d.driver,
    }));
    spec.iommuGroups = 0;
    const decision = await decideOn(spec);
    expect(droppedReason(decision, "qemu-nvidia-gpu")?.reason).toMatch(/^needs nvidia-gpu-passthrough/);
    expect(decision.config.qemu?.["hypervisor.qemu.hot_plug_vfio"]).toBeUndefined();
  });
});

describe("host requirements and the container runtime", () => {
  it("a VM without nested virtualisation is an error with the reason, and everything else is still checked", async () => {
    const decision = await decideOn(nestedVmWithoutVmx());
    expect(check(decision, "nested-virtualization")).toMatchObject({
      status: "fail",
      severity: "error",
      rule: "nested-virtualization-off",
      message:
        "this node is a virtual machine and its CPU shows neither vmx nor svm: nested virtualisation is off",
    });
    expect(check(decision, "cpu-virtualization")?.status).toBe("pass");
    expect(check(decision, "kvm-device")?.status).toBe("pass");
    expect(check(decision, "container-runtime")?.status).toBe("fail");
    expect(check(decision, "vhost")?.status).toBe("pass"); // available as a module
  });

  it("bare-metal Intel without vmx: cpu-virtualization fails", async () => {
    const spec = intelContainerd16();
    spec.cpuinfo = spec.cpuinfo.replaceAll("vmx ept vpid", "");
    const decision = await decideOn(spec);
    expect(check(decision, "cpu-virtualization")).toMatchObject({
      status: "fail",
      rule: "x86-cpu-virtualization",
    });
    expect(check(decision, "nested-virtualization")?.status).toBe("pass");
  });

  it("containerd 1.6: config.toml is edited in place (info), not a drop-in", async () => {
    const decision = await decideOn(intelContainerd16());
    expect(check(decision, "containerd-drop-in")).toMatchObject({ status: "fail", severity: "info" });
    expect(decision.vars["runtime-config-in-place"]).toBe(true);
    expect(decision.runtime).toMatchObject({
      value: "containerd",
      source: { kind: "default", name: "detected" },
    });
  });

  it("k3s without an imported drop-in directory is an error", async () => {
    const decision = await decideOn(gpuDistroQemuK3s());
    expect(check(decision, "runtime-drop-in-dir")).toMatchObject({ status: "fail", severity: "error" });
  });

  it("CRI-O: no drop-in objection", async () => {
    const decision = await decideOn(amdSnpCrio());
    expect(decision.checks.filter((c) => c.status === "fail")).toEqual([]);
  });
});
