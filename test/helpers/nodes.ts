// A zoo of nodes that later stages' tests reuse: each is a short description, built into a real
// directory tree by buildHost(). The cpuinfo texts are written here in the shapes real kernels print
// (tab or space padding before ":", one stanza per CPU, arm64's "Features", s390x's global block).
import { realTool } from "./real-tools.js";
import type { NodeSpec } from "./test-host.js";

const X86_BASE =
  "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ht syscall nx pdpe1gb rdtscp lm constant_tsc nopl xtopology pni pclmulqdq ssse3 fma cx16 sse4_1 sse4_2 x2apic movbe popcnt aes xsave avx f16c rdrand";

export function x86Cpuinfo(options: {
  vendor: string;
  model: string;
  flags: string;
  cpus?: number;
  pad?: "tab" | "space";
}): string {
  const sep = (key: string) =>
    options.pad === "space" ? `${key.padEnd(16)}: ` : `${key}${key.length < 8 ? "\t\t" : "\t"}: `;
  const stanzas: string[] = [];
  for (let i = 0; i < (options.cpus ?? 2); i++) {
    stanzas.push(
      [
        `${sep("processor")}${i}`,
        `${sep("vendor_id")}${options.vendor}`,
        `${sep("cpu family")}6`,
        `${sep("model name")}${options.model}`,
        `${sep("flags")}${X86_BASE} ${options.flags}`,
        `${sep("bugs")}spectre_v1 spectre_v2`,
        "power management:",
      ].join("\n"),
    );
  }
  return `${stanzas.join("\n\n")}\n\n`;
}

export const ARM64_CPUINFO = `${[0, 1, 2, 3]
  .map((i) =>
    [
      `processor\t: ${i}`,
      "BogoMIPS\t: 50.00",
      "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs",
      "CPU implementer\t: 0x41",
      "CPU architecture: 8",
      "CPU variant\t: 0x3",
      "CPU part\t: 0xd0c",
      "CPU revision\t: 1",
    ].join("\n"),
  )
  .join("\n\n")}\n`;

export const CONTAINERD_V2_MAIN = `# managed by the admin: keep this comment
version = 2
root = "/var/lib/containerd"

[plugins."io.containerd.grpc.v1.cri".containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
  SystemdCgroup = true
`;

const QEMU_DEVICE_HELP = `Storage devices:
name "virtio-blk-pci", bus PCI, alias "virtio-blk"
name "virtio-scsi-pci", bus PCI
name "vhost-user-fs-pci", bus PCI
name "virtio-9p-pci", bus PCI, alias "virtio-9p"
name "vhost-vsock-pci", bus PCI

Network devices:
name "virtio-net-pci", bus PCI, alias "virtio-net"

Misc devices:
name "vfio-pci", bus PCI, desc "VFIO-based PCI device assignment"
name "pcie-root-port", bus PCI`;

const QEMU_MACHINE_HELP = `Supported machines are:
microvm              microvm (i386)
pc                   Standard PC (i440FX + PIIX, 1996) (alias of pc-i440fx-8.2)
q35                  Standard PC (Q35 + ICH9, 2009) (alias of pc-q35-8.2)
pc-q35-8.2           Standard PC (Q35 + ICH9, 2009)
none                 empty machine`;

/** A qemu stand-in that answers --version, -device help and -machine help like the real one. */
export function qemuScript(
  version: string,
  devices = QEMU_DEVICE_HELP,
  machines = QEMU_MACHINE_HELP,
): string {
  return `case "$*" in
  *--version*) echo "QEMU emulator version ${version} (Debian 1:${version}+dfsg-1)"; echo "Copyright (c) 2003-2024 Fabrice Bellard and the QEMU Project developers" ;;
  *"-device help"*) cat <<'HELP'
${devices}
HELP
  ;;
  *"-machine help"*) cat <<'HELP'
${machines}
HELP
  ;;
  *) echo "unexpected arguments: $*" >&2; exit 1 ;;
esac`;
}

export const INTEL_MODULES_AVAILABLE = [
  "9p",
  "9pnet",
  "9pnet_virtio",
  "virtiofs",
  "fuse",
  "vfio",
  "vfio_pci",
  "vfio_iommu_type1",
  "dm_mod",
  "dm_verity",
  "erofs",
];

/**
 * A node's mkfs.erofs: the real one of erofs-utils (Debian's, scripts/test-tools.sh), run from the
 * test host's PATH. "1.8" (trixie's 1.8.6) and "1.9" (sid's 1.9.4) take --mkfs-time and --sort,
 * which kata-deploy's erofs differ settings pass it; "1.5" (bookworm's) takes neither.
 */
export function mkfsErofsScript(minor: "1.5" | "1.8" | "1.9" = "1.8"): string {
  return `exec ${JSON.stringify(realTool("erofs-utils", minor).path)} "$@"`;
}

/** Intel bare metal with vmx, containerd 1.6 from the distribution (config version 2). */
export function intelContainerd16(): NodeSpec {
  return {
    arch: "x86_64",
    cpuinfo: x86Cpuinfo({
      vendor: "GenuineIntel",
      model: "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz",
      flags: "vmx ept vpid",
      cpus: 4,
    }),
    osRelease:
      'NAME="Ubuntu"\nID=ubuntu\nID_LIKE=debian\nVERSION_ID="22.04"\nPRETTY_NAME="Ubuntu 22.04.4 LTS"\n',
    kernel: {
      release: "5.15.0-105-generic",
      filesystems: ["sysfs", "proc", "tmpfs", "overlay", "ext4", "fuse"],
      loaded: ["kvm", "kvm_intel", "vhost", "vhost_net", "vhost_vsock", "overlay", "br_netfilter"],
      builtin: ["loop"],
      available: INTEL_MODULES_AVAILABLE,
      config: {
        CONFIG_KVM: "m",
        CONFIG_KVM_INTEL: "m",
        CONFIG_9P_FS: "m",
        CONFIG_VIRTIO_FS: "m",
        CONFIG_TUN: "y",
      },
    },
    sysModules: { kvm_intel: { nested: "Y", ept: "Y" }, kvm: { halt_poll_ns: "200000" } },
    kvmDevice: true,
    iommuGroups: 0,
    blocks: [
      {
        name: "sda",
        sectors: 937703088,
        devicePath: "pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0",
      },
      { name: "loop0", sectors: 0, devicePath: "virtual" },
    ],
    hugepages: {
      defaultKb: 2048,
      sizes: [
        { kb: 2048, total: 0, free: 0 },
        { kb: 1048576, total: 0, free: 0 },
      ],
    },
    sockets: ["/run/containerd/containerd.sock"],
    commands: {
      "/usr/bin/containerd": 'echo "containerd github.com/containerd/containerd 1.6.12-0ubuntu1~22.04.3 "',
    },
    files: { "/etc/containerd/config.toml": CONTAINERD_V2_MAIN },
  };
}

/** The same node with containerd 1.7: still its own config.toml edited in place, a snapshotter per handler. */
export function intelContainerd17(): NodeSpec {
  const spec = intelContainerd16();
  spec.commands = {
    ...spec.commands,
    "/usr/bin/containerd": 'echo "containerd github.com/containerd/containerd 1.7.24 "',
  };
  return spec;
}

/** AMD EPYC with SEV-SNP enabled in KVM, on RHEL with CRI-O and RHEL's qemu-kvm (no virtio-9p). */
export function amdSnpCrio(): NodeSpec {
  return {
    arch: "x86_64",
    cpuinfo: x86Cpuinfo({
      vendor: "AuthenticAMD",
      model: "AMD EPYC 7413 24-Core Processor",
      flags: "svm npt sev sev_es sev_snp debug_swap",
      cpus: 2,
      pad: "tab",
    }),
    osRelease:
      'NAME="Red Hat Enterprise Linux"\nID="rhel"\nID_LIKE="fedora"\nVERSION_ID="9.4"\nPRETTY_NAME="Red Hat Enterprise Linux 9.4 (Plow)"\n',
    kernel: {
      release: "5.14.0-427.13.1.el9_4.x86_64",
      filesystems: ["sysfs", "proc", "overlay", "xfs", "fuse", "virtiofs"],
      loaded: ["kvm", "kvm_amd", "vhost", "vhost_net", "vhost_vsock", "virtiofs", "fuse", "overlay"],
      available: ["vfio", "vfio_pci", "vfio_iommu_type1", "dm_mod", "erofs"],
      config: { CONFIG_9P_FS: "n", CONFIG_NET_9P: "n" },
    },
    sysModules: { kvm_amd: { sev: "Y", sev_es: "Y", sev_snp: "Y", nested: "1" } },
    kvmDevice: true,
    iommuGroups: 40,
    sockets: ["/var/run/crio/crio.sock"],
    commands: {
      "/usr/bin/crio": 'echo "crio version 1.30.3"',
      "/usr/libexec/qemu-kvm": qemuScript(
        "8.2.0",
        // RHEL's qemu-kvm: everything Kata's configuration uses, but no virtio-9p.
        'name "virtio-blk-pci", bus PCI\nname "virtio-scsi-pci", bus PCI\nname "vhost-user-fs-pci", bus PCI\nname "vhost-vsock-pci", bus PCI\nname "vfio-pci", bus PCI',
      ),
    },
    files: {
      "/etc/crio/crio.conf.d/10-crio.conf":
        '[crio.runtime]\ndefault_runtime = "crun"\n\n[crio.runtime.runtimes.crun]\nruntime_path = "/usr/libexec/crio/crun"\nruntime_root = "/run/crun"\n',
      "/var/lib/kubelet/kubeadm-flags.env":
        'KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///var/run/crio/crio.sock --pod-infra-container-image=registry.k8s.io/pause:3.9"\n',
    },
  };
}

/** A cloud VM: the hypervisor flag, no vmx/svm passed through, yet a /dev/kvm node exists. */
export function nestedVmWithoutVmx(): NodeSpec {
  return {
    arch: "x86_64",
    cpuinfo: x86Cpuinfo({
      vendor: "GenuineIntel",
      model: "Intel Xeon Processor (Icelake)",
      flags: "hypervisor",
      cpus: 2,
      pad: "space",
    }),
    kernel: {
      release: "6.1.0-21-cloud-amd64",
      filesystems: ["sysfs", "proc", "overlay", "ext4"],
      loaded: ["kvm", "overlay"],
      available: ["vhost", "vhost_net", "vhost_vsock", "kvm_intel", "kvm_amd"],
    },
    kvmDevice: true,
  };
}

/** A kernel built without loadable modules (CONFIG_MODULES unset): everything is built in or absent. */
export function noLoadableModules(): NodeSpec {
  return {
    arch: "x86_64",
    cpuinfo: x86Cpuinfo({ vendor: "AuthenticAMD", model: "AMD EPYC", flags: "svm hypervisor" }),
    kernel: {
      release: "6.1.102-custom",
      filesystems: ["sysfs", "proc", "overlay", "virtiofs", "fuse"],
      loaded: null,
      configGz: true,
      config: {
        CONFIG_MODULES: "n",
        CONFIG_KVM: "y",
        CONFIG_KVM_AMD: "y",
        CONFIG_VHOST: "y",
        CONFIG_VHOST_NET: "y",
        CONFIG_VHOST_VSOCK: "y",
        CONFIG_VIRTIO_FS: "y",
        CONFIG_FUSE_FS: "y",
        CONFIG_9P_FS: "n",
        CONFIG_NET_9P: "n",
      },
    },
    sysModules: { kvm: {}, kvm_amd: { nested: "0" }, fuse: {} },
    kvmDevice: true,
  };
}

/** An arm64 server (no /proc/sys/kernel/arch: the cpuinfo's shape must tell) with containerd 2.0. */
export function arm64Containerd20(): NodeSpec {
  return {
    cpuinfo: ARM64_CPUINFO,
    kernel: {
      release: "6.8.0-1012-aws",
      filesystems: ["sysfs", "proc", "overlay", "ext4", "fuse", "9p"],
      loaded: ["kvm", "vhost", "vhost_net", "vhost_vsock", "9p", "9pnet", "9pnet_virtio", "overlay"],
      available: ["virtiofs", "vfio", "vfio_pci"],
    },
    kvmDevice: true,
    sockets: ["/run/containerd/containerd.sock"],
    commands: {
      "/usr/local/bin/containerd":
        'echo "containerd github.com/containerd/containerd/v2 v2.0.4 1a43cb6a1035441f9aca8f5666a9b3ef9e70ab20"',
    },
    files: {
      "/etc/containerd/config.toml":
        'version = 3\nimports = ["/etc/containerd/conf.d/*.toml"]\n\n[plugins."io.containerd.cri.v1.images"]\n  snapshotter = "overlayfs"\n',
      "/etc/containerd/conf.d/20-gvisor.toml":
        'version = 3\n[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runsc]\n  runtime_type = "io.containerd.runsc.v1"\n',
    },
  };
}

/** A GPU node: distro qemu, an NVIDIA GPU bound to vfio-pci, an SR-IOV NIC with a VF, IOMMU on, k3s. */
export function gpuDistroQemuK3s(): NodeSpec {
  return {
    arch: "x86_64",
    cpuinfo: x86Cpuinfo({
      vendor: "GenuineIntel",
      model: "Intel(R) Xeon(R) Platinum 8480+",
      flags: "vmx ept",
      cpus: 2,
    }),
    kernel: {
      release: "6.8.0-45-generic",
      cmdline: "BOOT_IMAGE=/vmlinuz-6.8.0-45-generic root=UUID=abc ro intel_iommu=on iommu=pt",
      filesystems: ["sysfs", "proc", "overlay", "ext4", "fuse", "9p", "virtiofs"],
      loaded: [
        "kvm",
        "kvm_intel",
        "vhost",
        "vhost_net",
        "vhost_vsock",
        "vfio",
        "vfio_pci",
        "vfio_iommu_type1",
        "9p",
        "9pnet_virtio",
        "virtiofs",
      ],
      available: ["dm_mod", "erofs"],
    },
    sysModules: { kvm_intel: { nested: "N" } },
    kvmDevice: true,
    pci: [
      { address: "0000:00:00.0", vendor: "8086", device: "09a2", class: "060000", iommuGroup: 0 },
      {
        address: "0000:17:00.0",
        vendor: "10de",
        device: "2330",
        class: "030200",
        driver: "vfio-pci",
        iommuGroup: 12,
      },
      {
        address: "0000:31:00.0",
        vendor: "15b3",
        device: "101d",
        class: "020000",
        driver: "mlx5_core",
        iommuGroup: 20,
        sriovTotalVfs: 8,
        sriovNumVfs: 1,
      },
      {
        address: "0000:31:00.1",
        vendor: "15b3",
        device: "101e",
        class: "020000",
        driver: "mlx5_core",
        iommuGroup: 21,
        physfn: "0000:31:00.0",
      },
    ],
    blocks: [
      {
        name: "nvme0n1",
        sectors: 3750748848,
        devicePath: "pci0000:00/0000:3a:00.0/nvme/nvme0/nvme0n1",
        nvmeTransport: "pcie",
      },
      {
        name: "nvme1n1",
        sectors: 2097152,
        devicePath: "virtual/nvme-fabrics/ctl/nvme1/nvme1n1",
        nvmeTransport: "tcp",
      },
      { name: "sdb", sectors: 2097152, devicePath: "platform/host3/session1/target3:0:0/3:0:0:0" },
    ],
    sockets: ["/run/k3s/containerd/containerd.sock"],
    commands: {
      "/usr/bin/qemu-system-x86_64": qemuScript("8.2.2"),
      "/usr/libexec/virtiofsd": 'echo "virtiofsd backend 1.10.1"',
      "/usr/local/bin/k3s": 'echo "k3s version v1.30.4+k3s1 (98262b5d)"; echo "go version go1.22.5"',
    },
    files: {
      "/etc/rancher/k3s/config.yaml": "write-kubeconfig-mode: 644\n",
      "/var/lib/rancher/k3s/agent/etc/containerd/config.toml":
        '# File generated by k3s. DO NOT EDIT.\nversion = 2\n\n[plugins."io.containerd.grpc.v1.cri".containerd]\n  snapshotter = "overlayfs"\n\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\n  runtime_type = "io.containerd.runc.v2"\n',
      "/var/lib/rancher/k3s/agent/etc/containerd/config.toml.tmpl": '{{ template "base" . }}\n',
    },
  };
}

/** k3s whose containerd configuration imports a drop-in directory (newer k3s templates do). */
export function k3sImportingDropIns(): NodeSpec {
  const spec = intelContainerd16();
  spec.commands = { "/usr/local/bin/k3s": 'echo "k3s version v1.31.2+k3s1 (6da2fe5d)"' };
  spec.sockets = ["/run/k3s/containerd/containerd.sock"];
  spec.files = {
    "/var/lib/rancher/k3s/agent/etc/containerd/config.toml":
      'version = 2\nimports = ["/var/lib/rancher/k3s/agent/etc/containerd/config.toml.d/*.toml"]\n',
  };
  return spec;
}

/** Intel with rke2: its embedded containerd, its template importing config.toml.d as k3s's does. */
export function rke2Node(): NodeSpec {
  const spec = intelContainerd16();
  spec.commands = { "/usr/local/bin/rke2": 'echo "rke2 version v1.31.2+rke2r1 (6da2fe5d)"' };
  spec.sockets = ["/run/k3s/containerd/containerd.sock"];
  spec.files = {
    "/var/lib/rancher/rke2/agent/etc/containerd/config.toml":
      'version = 2\nimports = ["/var/lib/rancher/rke2/agent/etc/containerd/config.toml.d/*.toml"]\n',
  };
  return spec;
}

/** Intel with k0s: its containerd (socket /run/k0s/containerd.sock) reads /etc/k0s/containerd.d. */
export function k0sNode(): NodeSpec {
  const spec = intelContainerd16();
  spec.commands = { "/usr/local/bin/k0s": 'echo "v1.31.2+k0s.0"' };
  spec.sockets = ["/run/k0s/containerd.sock"];
  spec.files = {
    "/etc/k0s/containerd.toml":
      '# k0s_managed=true\nversion = 2\nimports = ["/etc/k0s/containerd.d/*.toml"]\n',
  };
  return spec;
}

/**
 * The node with fs-verity where containerd keeps its layers: a kernel with CONFIG_FS_VERITY and
 * /var/lib/containerd on btrfs, in the host's mount table (/proc/1/mountinfo, proc(5)'s shape).
 */
export function withFsVerity(spec: NodeSpec): NodeSpec {
  return {
    ...spec,
    kernel: { ...spec.kernel, config: { ...spec.kernel.config, CONFIG_FS_VERITY: "y" } },
    files: {
      ...spec.files,
      "/proc/1/mountinfo":
        "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n30 22 8:17 / /var/lib/containerd rw,relatime shared:9 - btrfs /dev/sdb1 rw\n",
    },
  };
}
