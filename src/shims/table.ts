// Every shim kata-install knows, one record each: what kata-install itself knows of it, and nothing
// the release's configuration says (its hypervisor section, runtime, keys and defaults are the
// release's: decide/catalog.ts reads them off the release being installed). A record has every
// field, "none" where a part does not apply, so that a shim added half-way does not compile, and
// test/shims/table.test.ts holds each record (and every shim of the release fixtures) to it. What
// other parts of kata-install say of a shim is derived from here: the capability table decide
// reads (vetting), the guest-pull default and the chart's shim list (chart), the RuntimeClass's
// overhead, node selectors and TEE key (runtimeClass, tee), the links into `current` (links).
import type { TeeKey } from "./tees.js";

export type Arch = "x86_64" | "aarch64" | "s390x" | "ppc64le";
export type ChartArch = "amd64" | "arm64" | "s390x" | "ppc64le";

/**
 * What kata-install checks of a node before it installs the shim unasked, and what it can do (the
 * `shims` table). A shim is a candidate on a node when the node's architecture is listed and it is
 * not opt-in; it is dropped when one of its `requires` features is not true on the node (features
 * are variables that the rules in rules/features.toml set from facts).
 */
export interface Vetting {
  description: string;
  /** The [hypervisor.<section>] of its Kata configuration, until the release is read. */
  hypervisor: string;
  /** "go" or "rust", until the release is read. */
  runtime: "go" | "rust";
  arches: Arch[];
  /** What it can share files with, in Kata's shared_fs names. */
  shared_fs: string[];
  block_device_drivers: string[];
  vfio_hotplug: boolean;
  vfio_coldplug: boolean;
  virtio_mem: boolean;
  memory_hotplug: boolean;
  seccomp: boolean;
  rate_limiters: boolean;
  /** A snapshotter it needs, or "". */
  snapshotter: string;
  /** "vsock": the host's vhost_vsock; "hybrid-vsock": a Unix socket the VMM proxies. */
  agent_transport: "vsock" | "hybrid-vsock" | "remote";
  /** Feature variables (rules/features.toml) that must be true on the node; its TEE's among them. */
  requires: string[];
  /**
   * The artifacts it needs (its shim, hypervisor, guest kernel and guest image, firmware):
   * artifacts/catalogue.toml adds what those depend on.
   */
  artifacts: string[];
  /** More of them on one architecture (aarch64's qemu boots through UEFI firmware). */
  arch_artifacts: Partial<Record<Arch, string[]>> | "none";
  /** Its artifacts that the host's own package may stand in for (rules/shims.toml [host_part.*]). */
  host_parts: string[];
  /** Development, debug and platform-specific shims come only when asked for (overrides, SHIMS_<ARCH>). */
  opt_in: boolean;
}

export type Labels = Readonly<Record<string, string>>;

/** A shim of kata-deploy's chart (its values.yaml): where it runs, and what the chart sets for it by default. */
export interface ChartShim {
  arches: ChartArch[];
  snapshotter: string;
  /**
   * The chart pulls its images inside the guest by default (containerd.snapshotter = "nydus",
   * crio.guestPull = true) and gives it an agent proxy of its own: the confidential shims, whose
   * guests must not see the node's copy of an image, and remote (peer pods). kata-install does the
   * same (decide/handler-settings.ts).
   */
  guestPull: boolean;
  /** false: off unless enabled (remote). */
  enabled: boolean;
}

/** A pod overhead, as a RuntimeClass's podFixed has it. */
export interface Overhead {
  memory: string;
  cpu: string;
}

interface ShimParts {
  /** What kata-install vets on a node; "none": the release's or the chart's, described by no rule (installed only when asked for, with a warning). */
  vetting: Vetting | "none";
  /** The TEE its guests run in (tees.ts); "none" for none. */
  tee: TeeKey | "none";
  /**
   * The release's directories of its own (share/kata-qemu) that the prefix links through `current`
   * (install/artifacts.ts LINKS); "none": none. One its artifacts fill but no shim links fails
   * test/shims/table.test.ts.
   */
  links: string[] | "none";
}

/**
 * A shim's record. Its entry in kata-deploy's chart decides its RuntimeClass's overhead: the
 * chart's runtimeclasses template sets one for each of its shims, so a chart shim must say which;
 * only a shim the chart lacks takes "default" (runtime_classes.overhead, templates/k8s/values.toml).
 */
export type ShimRecord = ShimParts &
  /** Its entry in kata-deploy's chart. */
  (
    | { chart: ChartShim; runtimeClass: RuntimeClassParts<Overhead> }
    /** The chart has none. */
    | { chart: "none"; runtimeClass: RuntimeClassParts<Overhead | "default"> }
  );

interface RuntimeClassParts<O> {
  /** The pod overhead kata-deploy's chart sets for it; "default": runtime_classes.overhead. */
  overhead: O;
  /** Node labels its pods need beside katacontainers.io/shim.<shim>; "none": none (a TEE's label then, where NFD runs). */
  nodeSelector: Labels | "none";
}

/** The default shim when nothing names one: this one when it is installed, else the first by name. */
export const DEFAULT_SHIM = "qemu";

const GPU_CC_OFF = { "nvidia.com/cc.ready.state": "false" };

/**
 * The table. The shims rules vet come first, in the order candidates are considered (decide's
 * shim order), then the others by name.
 */
export const SHIM_TABLE = {
  qemu: {
    vetting: {
      description: "QEMU with the Go runtime: the broadest device support",
      hypervisor: "qemu",
      runtime: "go",
      arches: ["x86_64", "aarch64", "s390x", "ppc64le"],
      shared_fs: ["virtio-fs", "virtio-9p", "none"],
      block_device_drivers: ["virtio-scsi", "virtio-blk", "nvdimm"],
      vfio_hotplug: true,
      vfio_coldplug: true,
      virtio_mem: true,
      memory_hotplug: true,
      seccomp: true,
      rate_limiters: true,
      snapshotter: "",
      agent_transport: "vsock",
      requires: ["kvm", "vhost-vsock"],
      artifacts: ["base", "qemu", "virtiofsd", "guest-kernel", "guest-image"],
      host_parts: ["qemu", "virtiofsd"],
      opt_in: false,
      arch_artifacts: { aarch64: ["aavmf"] },
    },
    tee: "none",
    runtimeClass: { overhead: { memory: "320Mi", cpu: "250m" }, nodeSelector: "none" },
    chart: {
      arches: ["amd64", "arm64", "s390x", "ppc64le"],
      snapshotter: "",
      guestPull: false,
      enabled: true,
    },
    links: ["share/kata-qemu", "share/kata-qemu-no-shared-fs"],
  },
  "qemu-runtime-rs": {
    vetting: {
      description: "QEMU with the Rust runtime",
      hypervisor: "qemu",
      runtime: "rust",
      arches: ["x86_64", "aarch64", "s390x", "ppc64le"],
      shared_fs: ["virtio-fs", "none"],
      block_device_drivers: ["virtio-scsi", "virtio-blk", "nvdimm"],
      vfio_hotplug: true,
      vfio_coldplug: true,
      virtio_mem: true,
      memory_hotplug: true,
      seccomp: true,
      rate_limiters: false,
      snapshotter: "",
      agent_transport: "vsock",
      requires: ["kvm", "vhost-vsock"],
      artifacts: ["base-rust", "qemu", "virtiofsd", "guest-kernel", "guest-image"],
      host_parts: ["qemu", "virtiofsd"],
      opt_in: false,
      arch_artifacts: { aarch64: ["aavmf"] },
    },
    tee: "none",
    runtimeClass: { overhead: { memory: "320Mi", cpu: "250m" }, nodeSelector: "none" },
    chart: {
      arches: ["amd64", "arm64", "s390x", "ppc64le"],
      snapshotter: "",
      guestPull: false,
      enabled: true,
    },
    links: "none",
  },
  clh: {
    vetting: {
      description: "Cloud Hypervisor with the Go runtime: small, fast, virtio-fs only",
      hypervisor: "clh",
      runtime: "go",
      arches: ["x86_64", "aarch64"],
      shared_fs: ["virtio-fs", "none"],
      block_device_drivers: ["virtio-blk"],
      vfio_hotplug: true,
      vfio_coldplug: true,
      virtio_mem: true,
      memory_hotplug: true,
      seccomp: true,
      rate_limiters: true,
      snapshotter: "",
      agent_transport: "hybrid-vsock",
      requires: ["kvm"],
      artifacts: ["base", "cloud-hypervisor", "virtiofsd", "guest-kernel", "guest-image"],
      host_parts: ["virtiofsd"],
      opt_in: false,
      arch_artifacts: "none",
    },
    tee: "none",
    runtimeClass: { overhead: { memory: "130Mi", cpu: "250m" }, nodeSelector: "none" },
    chart: { arches: ["amd64"], snapshotter: "", guestPull: false, enabled: true },
    links: "none",
  },
  "clh-runtime-rs": {
    vetting: {
      description: "Cloud Hypervisor with the Rust runtime",
      hypervisor: "clh",
      runtime: "rust",
      arches: ["x86_64"],
      shared_fs: ["virtio-fs", "none"],
      block_device_drivers: ["virtio-blk"],
      vfio_hotplug: true,
      vfio_coldplug: false,
      virtio_mem: false,
      memory_hotplug: true,
      seccomp: true,
      rate_limiters: true,
      snapshotter: "",
      agent_transport: "hybrid-vsock",
      requires: ["kvm"],
      artifacts: ["base-rust", "cloud-hypervisor", "virtiofsd", "guest-kernel", "guest-image"],
      host_parts: ["virtiofsd"],
      opt_in: false,
      arch_artifacts: "none",
    },
    tee: "none",
    runtimeClass: { overhead: { memory: "130Mi", cpu: "250m" }, nodeSelector: "none" },
    chart: { arches: ["amd64"], snapshotter: "", guestPull: false, enabled: true },
    links: "none",
  },
  fc: {
    vetting: {
      description: "Firecracker: minimal device model, block devices only (no shared filesystem)",
      hypervisor: "firecracker",
      runtime: "go",
      arches: ["x86_64", "aarch64"],
      shared_fs: ["none"],
      block_device_drivers: ["virtio-mmio"],
      vfio_hotplug: false,
      vfio_coldplug: false,
      virtio_mem: false,
      memory_hotplug: false,
      seccomp: true,
      rate_limiters: true,
      snapshotter: "devmapper",
      agent_transport: "hybrid-vsock",
      requires: ["kvm", "block-snapshotter"],
      artifacts: ["base", "firecracker", "guest-kernel", "guest-image"],
      host_parts: [],
      opt_in: false,
      arch_artifacts: "none",
    },
    tee: "none",
    runtimeClass: { overhead: { memory: "130Mi", cpu: "250m" }, nodeSelector: "none" },
    chart: { arches: ["amd64"], snapshotter: "devmapper", guestPull: false, enabled: true },
    links: "none",
  },
  dragonball: {
    vetting: {
      description: "Dragonball: the VMM built into the Rust runtime",
      hypervisor: "dragonball",
      runtime: "rust",
      arches: ["x86_64", "aarch64"],
      shared_fs: ["inline-virtio-fs", "virtio-fs", "none"],
      block_device_drivers: ["virtio-blk-mmio"],
      vfio_hotplug: true,
      vfio_coldplug: false,
      virtio_mem: false,
      memory_hotplug: true,
      seccomp: true,
      rate_limiters: false,
      snapshotter: "",
      agent_transport: "hybrid-vsock",
      requires: ["kvm"],
      artifacts: ["base-rust", "dragonball-kernel", "guest-image"],
      host_parts: [],
      opt_in: false,
      arch_artifacts: "none",
    },
    tee: "none",
    runtimeClass: { overhead: { memory: "130Mi", cpu: "250m" }, nodeSelector: "none" },
    chart: { arches: ["amd64"], snapshotter: "", guestPull: false, enabled: true },
    links: "none",
  },
  "qemu-tdx": {
    vetting: {
      description: "QEMU confidential guests on Intel TDX",
      hypervisor: "qemu",
      runtime: "go",
      arches: ["x86_64"],
      shared_fs: ["none", "virtio-fs"],
      block_device_drivers: ["virtio-scsi", "virtio-blk"],
      vfio_hotplug: false,
      vfio_coldplug: true,
      virtio_mem: false,
      memory_hotplug: false,
      seccomp: true,
      rate_limiters: true,
      snapshotter: "",
      agent_transport: "vsock",
      requires: ["kvm", "vhost-vsock", "tdx"],
      artifacts: ["base", "qemu", "guest-kernel-vmlinuz", "guest-image-confidential", "ovmf-tdx"],
      host_parts: [],
      opt_in: false,
      arch_artifacts: "none",
    },
    tee: "tdx",
    runtimeClass: { overhead: { memory: "2048Mi", cpu: "1.0" }, nodeSelector: "none" },
    chart: { arches: ["amd64"], snapshotter: "nydus", guestPull: true, enabled: true },
    links: ["share/kata-qemu-tdx-experimental"],
  },
  "qemu-snp": {
    vetting: {
      description: "QEMU confidential guests on AMD SEV-SNP",
      hypervisor: "qemu",
      runtime: "go",
      arches: ["x86_64"],
      shared_fs: ["none", "virtio-fs"],
      block_device_drivers: ["virtio-scsi", "virtio-blk"],
      vfio_hotplug: false,
      vfio_coldplug: true,
      virtio_mem: false,
      memory_hotplug: false,
      seccomp: true,
      rate_limiters: true,
      snapshotter: "",
      agent_transport: "vsock",
      requires: ["kvm", "vhost-vsock", "sev-snp"],
      artifacts: ["base", "qemu", "guest-kernel-vmlinuz", "guest-image-confidential", "ovmf-sev"],
      host_parts: [],
      opt_in: false,
      arch_artifacts: "none",
    },
    tee: "sevSnp",
    runtimeClass: { overhead: { memory: "2048Mi", cpu: "1.0" }, nodeSelector: "none" },
    chart: { arches: ["amd64"], snapshotter: "nydus", guestPull: true, enabled: true },
    links: ["share/kata-qemu-snp-experimental"],
  },
  "qemu-se": {
    vetting: {
      description: "QEMU confidential guests on IBM Secure Execution (s390x)",
      hypervisor: "qemu",
      runtime: "go",
      arches: ["s390x"],
      shared_fs: ["none", "virtio-fs"],
      block_device_drivers: ["virtio-blk"],
      vfio_hotplug: false,
      vfio_coldplug: true,
      virtio_mem: false,
      memory_hotplug: false,
      seccomp: true,
      rate_limiters: true,
      snapshotter: "",
      agent_transport: "vsock",
      requires: ["kvm", "vhost-vsock", "se"],
      artifacts: ["base", "qemu", "se-boot-image"],
      host_parts: [],
      opt_in: false,
      arch_artifacts: "none",
    },
    tee: "s390xSe",
    runtimeClass: { overhead: { memory: "1024Mi", cpu: "1.0" }, nodeSelector: "none" },
    chart: { arches: ["s390x"], snapshotter: "nydus", guestPull: true, enabled: true },
    links: "none",
  },
  "qemu-nvidia-gpu": {
    vetting: {
      description: "QEMU with an NVIDIA GPU passed through to the guest",
      hypervisor: "qemu",
      runtime: "go",
      arches: ["x86_64"],
      shared_fs: ["virtio-fs", "none"],
      block_device_drivers: ["virtio-scsi", "virtio-blk"],
      vfio_hotplug: true,
      vfio_coldplug: true,
      virtio_mem: false,
      memory_hotplug: false,
      seccomp: true,
      rate_limiters: true,
      snapshotter: "",
      agent_transport: "vsock",
      requires: ["kvm", "vhost-vsock", "nvidia-gpu-passthrough"],
      artifacts: ["base", "qemu", "virtiofsd", "nvidia-gpu-kernel-vmlinuz", "guest-image-nvidia-gpu", "ovmf"],
      host_parts: ["virtiofsd"],
      opt_in: false,
      arch_artifacts: "none",
    },
    tee: "none",
    runtimeClass: { overhead: { memory: "10240Mi", cpu: "1.0" }, nodeSelector: GPU_CC_OFF },
    chart: { arches: ["amd64"], snapshotter: "", guestPull: false, enabled: true },
    links: "none",
  },
  "qemu-nvidia-gpu-snp": {
    vetting: {
      description: "QEMU with an NVIDIA GPU in an AMD SEV-SNP confidential guest",
      hypervisor: "qemu",
      runtime: "go",
      arches: ["x86_64"],
      shared_fs: ["none"],
      block_device_drivers: ["virtio-scsi", "virtio-blk"],
      vfio_hotplug: false,
      vfio_coldplug: true,
      virtio_mem: false,
      memory_hotplug: false,
      seccomp: true,
      rate_limiters: true,
      snapshotter: "",
      agent_transport: "vsock",
      requires: ["kvm", "vhost-vsock", "sev-snp", "nvidia-gpu-passthrough"],
      artifacts: [
        "base",
        "qemu-snp",
        "nvidia-gpu-kernel-vmlinuz",
        "guest-image-nvidia-gpu-confidential",
        "ovmf-sev",
      ],
      host_parts: [],
      opt_in: false,
      arch_artifacts: "none",
    },
    tee: "sevSnp",
    runtimeClass: {
      overhead: { memory: "10240Mi", cpu: "1.0" },
      nodeSelector: { "nvidia.com/cc.ready.state": "true", "amd.feature.node.kubernetes.io/snp": "true" },
    },
    chart: { arches: ["amd64"], snapshotter: "nydus", guestPull: true, enabled: true },
    links: "none",
  },
  "qemu-nvidia-gpu-tdx": {
    vetting: {
      description: "QEMU with an NVIDIA GPU in an Intel TDX confidential guest",
      hypervisor: "qemu",
      runtime: "go",
      arches: ["x86_64"],
      shared_fs: ["none"],
      block_device_drivers: ["virtio-scsi", "virtio-blk"],
      vfio_hotplug: false,
      vfio_coldplug: true,
      virtio_mem: false,
      memory_hotplug: false,
      seccomp: true,
      rate_limiters: true,
      snapshotter: "",
      agent_transport: "vsock",
      requires: ["kvm", "vhost-vsock", "tdx", "nvidia-gpu-passthrough"],
      artifacts: [
        "base",
        "qemu-tdx",
        "nvidia-gpu-kernel-vmlinuz",
        "guest-image-nvidia-gpu-confidential",
        "ovmf-tdx",
      ],
      host_parts: [],
      opt_in: false,
      arch_artifacts: "none",
    },
    tee: "tdx",
    runtimeClass: {
      overhead: { memory: "10240Mi", cpu: "1.0" },
      nodeSelector: { "nvidia.com/cc.ready.state": "true", "intel.feature.node.kubernetes.io/tdx": "true" },
    },
    chart: { arches: ["amd64"], snapshotter: "nydus", guestPull: true, enabled: true },
    links: "none",
  },
  "qemu-coco-dev": {
    vetting: {
      description: "QEMU with the confidential guest stack but no TEE: for developing confidential workloads",
      hypervisor: "qemu",
      runtime: "go",
      arches: ["x86_64", "s390x"],
      shared_fs: ["none", "virtio-fs"],
      block_device_drivers: ["virtio-scsi", "virtio-blk"],
      vfio_hotplug: false,
      vfio_coldplug: false,
      virtio_mem: false,
      memory_hotplug: false,
      seccomp: true,
      rate_limiters: true,
      snapshotter: "",
      agent_transport: "vsock",
      requires: ["kvm", "vhost-vsock"],
      artifacts: ["base", "qemu", "guest-kernel-vmlinuz", "guest-image-confidential"],
      host_parts: [],
      opt_in: true,
      arch_artifacts: "none",
    },
    tee: "none",
    runtimeClass: { overhead: { memory: "160Mi", cpu: "250m" }, nodeSelector: "none" },
    chart: { arches: ["amd64", "s390x"], snapshotter: "nydus", guestPull: true, enabled: true },
    links: "none",
  },
  remote: {
    vetting: {
      description: "Peer pods: the VM runs elsewhere (cloud-api-adaptor); no local hypervisor",
      hypervisor: "remote",
      runtime: "go",
      arches: ["x86_64", "s390x", "ppc64le"],
      shared_fs: ["none"],
      block_device_drivers: [],
      vfio_hotplug: false,
      vfio_coldplug: false,
      virtio_mem: false,
      memory_hotplug: false,
      seccomp: false,
      rate_limiters: false,
      snapshotter: "",
      agent_transport: "remote",
      requires: [],
      artifacts: ["base"],
      host_parts: [],
      opt_in: true,
      arch_artifacts: "none",
    },
    tee: "none",
    runtimeClass: { overhead: { memory: "120Mi", cpu: "250m" }, nodeSelector: "none" },
    chart: { arches: ["amd64", "ppc64le", "s390x"], snapshotter: "nydus", guestPull: true, enabled: false },
    links: "none",
  },
  "clh-azure": {
    vetting: "none",
    tee: "none",
    runtimeClass: { overhead: { memory: "130Mi", cpu: "250m" }, nodeSelector: "none" },
    chart: { arches: ["amd64"], snapshotter: "", guestPull: false, enabled: true },
    links: "none",
  },
  "clh-azure-runtime-rs": {
    vetting: "none",
    tee: "none",
    runtimeClass: { overhead: { memory: "130Mi", cpu: "250m" }, nodeSelector: "none" },
    chart: { arches: ["amd64"], snapshotter: "", guestPull: false, enabled: true },
    links: "none",
  },
  "openvmm-azure-runtime-rs": {
    vetting: "none",
    tee: "none",
    runtimeClass: { overhead: { memory: "130Mi", cpu: "250m" }, nodeSelector: "none" },
    chart: { arches: ["amd64"], snapshotter: "", guestPull: false, enabled: true },
    links: "none",
  },
  "qemu-coco-dev-runtime-rs": {
    vetting: "none",
    tee: "none",
    runtimeClass: { overhead: { memory: "320Mi", cpu: "250m" }, nodeSelector: "none" },
    chart: { arches: ["amd64", "arm64", "s390x"], snapshotter: "nydus", guestPull: true, enabled: true },
    links: "none",
  },
  "qemu-nvidia-cpu": {
    vetting: "none",
    tee: "none",
    runtimeClass: { overhead: { memory: "320Mi", cpu: "250m" }, nodeSelector: "none" },
    chart: { arches: ["amd64", "arm64"], snapshotter: "", guestPull: false, enabled: true },
    links: "none",
  },
  "qemu-nvidia-cpu-runtime-rs": {
    vetting: "none",
    tee: "none",
    runtimeClass: { overhead: { memory: "320Mi", cpu: "250m" }, nodeSelector: "none" },
    chart: { arches: ["amd64", "arm64"], snapshotter: "", guestPull: false, enabled: true },
    links: "none",
  },
  "qemu-nvidia-gpu-runtime-rs": {
    vetting: "none",
    tee: "none",
    runtimeClass: { overhead: { memory: "10240Mi", cpu: "1.0" }, nodeSelector: GPU_CC_OFF },
    chart: { arches: ["amd64", "arm64"], snapshotter: "", guestPull: false, enabled: true },
    links: "none",
  },
  "qemu-nvidia-gpu-snp-runtime-rs": {
    vetting: "none",
    tee: "sevSnp",
    runtimeClass: {
      overhead: { memory: "10240Mi", cpu: "1.0" },
      nodeSelector: { "nvidia.com/cc.ready.state": "true", "amd.feature.node.kubernetes.io/snp": "true" },
    },
    chart: { arches: ["amd64"], snapshotter: "nydus", guestPull: true, enabled: true },
    links: "none",
  },
  "qemu-nvidia-gpu-tdx-runtime-rs": {
    vetting: "none",
    tee: "tdx",
    runtimeClass: {
      overhead: { memory: "10240Mi", cpu: "1.0" },
      nodeSelector: { "nvidia.com/cc.ready.state": "true", "intel.feature.node.kubernetes.io/tdx": "true" },
    },
    chart: { arches: ["amd64"], snapshotter: "nydus", guestPull: true, enabled: true },
    links: "none",
  },
  "qemu-se-runtime-rs": {
    vetting: "none",
    tee: "s390xSe",
    runtimeClass: { overhead: { memory: "1024Mi", cpu: "1.0" }, nodeSelector: "none" },
    chart: { arches: ["s390x"], snapshotter: "nydus", guestPull: true, enabled: true },
    links: "none",
  },
  "qemu-snp-runtime-rs": {
    vetting: "none",
    tee: "sevSnp",
    runtimeClass: { overhead: { memory: "2048Mi", cpu: "1.0" }, nodeSelector: "none" },
    chart: { arches: ["amd64"], snapshotter: "nydus", guestPull: true, enabled: true },
    links: "none",
  },
  "qemu-tdx-runtime-rs": {
    vetting: "none",
    tee: "tdx",
    runtimeClass: { overhead: { memory: "2048Mi", cpu: "1.0" }, nodeSelector: "none" },
    chart: { arches: ["amd64"], snapshotter: "nydus", guestPull: true, enabled: true },
    links: "none",
  },
  "rs-fc": {
    vetting: "none",
    tee: "none",
    runtimeClass: { overhead: "default", nodeSelector: "none" },
    chart: "none",
    links: "none",
  },
  stratovirt: {
    vetting: "none",
    tee: "none",
    runtimeClass: { overhead: "default", nodeSelector: "none" },
    chart: "none",
    links: "none",
  },
} as const satisfies Record<string, ShimRecord>;

export type ShimName = keyof typeof SHIM_TABLE;

/** Every record, typed as the interface (the literal types of SHIM_TABLE are for ShimName). */
export const SHIMS: ReadonlyMap<string, ShimRecord> = new Map(Object.entries(SHIM_TABLE));

export const SHIM_NAMES: readonly ShimName[] = Object.keys(SHIM_TABLE) as ShimName[];

/** A shim's record; undefined for a name kata-install does not know (a later release's). */
export function shimRecord(name: string): ShimRecord | undefined {
  return SHIMS.get(name);
}

/** The shims whose images kata-deploy's chart pulls inside the guest by default. */
export const GUEST_PULL: ReadonlySet<string> = new Set(
  [...SHIMS].filter(([, r]) => r.chart !== "none" && r.chart.guestPull).map(([name]) => name),
);

/** The shims of kata-deploy's chart, in the table's order. */
export const CHART_SHIM_NAMES: readonly string[] = [...SHIMS]
  .filter(([, r]) => r.chart !== "none")
  .map(([n]) => n);

/** The links each shim's own directories need, sorted (install/artifacts.ts puts them among Kata's usual ones). */
export const SHIM_LINKS: readonly string[] = [
  ...new Set([...SHIMS.values()].flatMap((r) => (r.links === "none" ? [] : r.links))),
].sort();
