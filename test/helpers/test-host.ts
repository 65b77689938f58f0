// Test hosts are real directory trees, read through the same Host as a node. A test describes a
// node in a few lines; this writes the files, devices, sockets and command scripts that say so.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { Host } from "../../src/host/host.js";

export interface PciSpec {
  address: string;
  vendor: string;
  device: string;
  class: string;
  driver?: string;
  iommuGroup?: number;
  sriovTotalVfs?: number;
  sriovNumVfs?: number;
  physfn?: string;
}

export interface BlockSpec {
  name: string;
  sectors: number;
  /** The sysfs device path /sys/block/<name> links to (relative to /sys/devices). */
  devicePath: string;
  /** nvme only: the controller's transport ("pcie", "tcp", …). */
  nvmeTransport?: string;
}

export interface NodeSpec {
  /** Written to /proc/sys/kernel/arch; omit to make detection read the cpuinfo's shape. */
  arch?: string;
  cpuinfo: string;
  osRelease?: string;
  kernel: {
    release: string;
    filesystems: string[];
    /** null: no /proc/modules (a kernel built without loadable modules). */
    loaded: string[] | null;
    builtin?: string[];
    /** Module files under /lib/modules/<release>, listed in modules.dep. */
    available?: string[];
    /** Kernel build config, written as /boot/config-<release> or /proc/config.gz. */
    config?: Record<string, string>;
    configGz?: boolean;
    cmdline?: string;
  };
  /** Directories under /sys/module, with their parameters. */
  sysModules?: Record<string, Record<string, string>>;
  kvmDevice?: boolean;
  pci?: PciSpec[];
  iommuGroups?: number;
  blocks?: BlockSpec[];
  hugepages?: { defaultKb: number; sizes: Array<{ kb: number; total: number; free: number }> };
  /** Unix sockets to create (a live runtime). */
  sockets?: string[];
  /** Executable scripts: host path → shell body (after the #! line). */
  commands?: Record<string, string>;
  /**
   * A node's systemctl, which restarts its runtime: /usr/bin/systemctl succeeding, as on a systemd
   * node, unless `commands` has one of its own; false: none (a node without systemd).
   */
  systemctl?: boolean;
  files?: Record<string, string | { content: string; mode?: number; uid?: number }>;
  symlinks?: Record<string, string>;
}

export interface TestHost {
  root: string;
  host: Host;
  write(hostPath: string, content: string, mode?: number): void;
  remove(): void;
}

const roots: string[] = [];

export function buildHost(spec: NodeSpec): TestHost {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-host-"));
  roots.push(root);
  const at = (hostPath: string) => path.join(root, hostPath);
  const write = (hostPath: string, content: string | Buffer, mode = 0o644) => {
    fs.mkdirSync(path.dirname(at(hostPath)), { recursive: true });
    fs.writeFileSync(at(hostPath), content, { mode });
    fs.chmodSync(at(hostPath), mode);
  };
  const link = (hostPath: string, target: string) => {
    fs.mkdirSync(path.dirname(at(hostPath)), { recursive: true });
    fs.rmSync(at(hostPath), { force: true });
    fs.symlinkSync(target, at(hostPath));
  };

  if (spec.arch !== undefined) write("/proc/sys/kernel/arch", `${spec.arch}\n`);
  write("/proc/cpuinfo", spec.cpuinfo);
  write(
    "/etc/os-release",
    spec.osRelease ?? 'ID=debian\nVERSION_ID="12"\nPRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n',
  );

  const k = spec.kernel;
  write("/proc/sys/kernel/osrelease", `${k.release}\n`);
  write("/proc/cmdline", `${k.cmdline ?? "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro quiet"}\n`);
  write(
    "/proc/filesystems",
    `${k.filesystems
      .map((f) => (["ext4", "xfs", "btrfs", "erofs"].includes(f) ? `\t${f}` : `nodev\t${f}`))
      .join("\n")}\n`,
  );
  if (k.loaded !== null) {
    write("/proc/modules", k.loaded.map((m) => `${m} 16384 0 - Live 0x0000000000000000\n`).join(""));
  }
  const modDir = `/lib/modules/${k.release}`;
  if (k.builtin)
    write(`${modDir}/modules.builtin`, k.builtin.map((m) => `kernel/drivers/${m}.ko\n`).join(""));
  if (k.available) {
    write(`${modDir}/modules.dep`, k.available.map((m) => `kernel/drivers/${m}.ko.xz:\n`).join(""));
    for (const m of k.available) write(`${modDir}/kernel/drivers/${m}.ko.xz`, "");
  }
  if (k.config) {
    const text = Object.entries(k.config)
      .map(([key, value]) => (value === "n" ? `# ${key} is not set` : `${key}=${value}`))
      .join("\n");
    if (k.configGz) write("/proc/config.gz", gzipSync(`${text}\n`));
    else write(`/boot/config-${k.release}`, `${text}\n`);
  }
  const sysModules = { ...Object.fromEntries((k.loaded ?? []).map((m) => [m, {}])), ...spec.sysModules };
  for (const [name, params] of Object.entries(sysModules)) {
    fs.mkdirSync(at(`/sys/module/${name}`), { recursive: true });
    for (const [param, value] of Object.entries(params))
      write(`/sys/module/${name}/parameters/${param}`, `${value}\n`);
  }
  if (spec.kvmDevice) makeCharDevice(at("/dev/kvm"), 10, 232);

  for (const dev of spec.pci ?? []) {
    const dir = `/sys/devices/pci0000:00/${dev.address}`;
    write(`${dir}/vendor`, `0x${dev.vendor}\n`);
    write(`${dir}/device`, `0x${dev.device}\n`);
    write(`${dir}/class`, `0x${dev.class}\n`);
    if (dev.driver) {
      fs.mkdirSync(at(`/sys/bus/pci/drivers/${dev.driver}`), { recursive: true });
      link(`${dir}/driver`, `../../../bus/pci/drivers/${dev.driver}`);
    }
    if (dev.iommuGroup !== undefined) {
      fs.mkdirSync(at(`/sys/kernel/iommu_groups/${dev.iommuGroup}/devices`), { recursive: true });
      link(`${dir}/iommu_group`, `../../../kernel/iommu_groups/${dev.iommuGroup}`);
    }
    if (dev.sriovTotalVfs !== undefined) write(`${dir}/sriov_totalvfs`, `${dev.sriovTotalVfs}\n`);
    if (dev.sriovNumVfs !== undefined) write(`${dir}/sriov_numvfs`, `${dev.sriovNumVfs}\n`);
    if (dev.physfn) link(`${dir}/physfn`, `../${dev.physfn}`);
    link(`/sys/bus/pci/devices/${dev.address}`, `../../../devices/pci0000:00/${dev.address}`);
  }
  for (let g = 0; g < (spec.iommuGroups ?? 0); g++)
    fs.mkdirSync(at(`/sys/kernel/iommu_groups/${g}/devices`), { recursive: true });

  for (const block of spec.blocks ?? []) {
    const dir = `/sys/devices/${block.devicePath}/block/${block.name}`;
    write(`${dir}/size`, `${block.sectors}\n`);
    if (block.nvmeTransport) write(`/sys/devices/${block.devicePath}/transport`, `${block.nvmeTransport}\n`);
    if (block.nvmeTransport) link(`${dir}/device`, "../..");
    link(`/sys/block/${block.name}`, `../devices/${block.devicePath}/block/${block.name}`);
  }
  if (spec.hugepages) {
    write(
      "/proc/meminfo",
      `MemTotal:       16384000 kB\nHugepagesize:       ${spec.hugepages.defaultKb} kB\n`,
    );
    for (const size of spec.hugepages.sizes) {
      write(`/sys/kernel/mm/hugepages/hugepages-${size.kb}kB/nr_hugepages`, `${size.total}\n`);
      write(`/sys/kernel/mm/hugepages/hugepages-${size.kb}kB/free_hugepages`, `${size.free}\n`);
    }
  }
  for (const socket of spec.sockets ?? []) makeSocket(at(socket));
  const commands = { ...spec.commands };
  if (spec.systemctl !== false && !Object.keys(commands).some((c) => c.endsWith("/systemctl")))
    commands["/usr/bin/systemctl"] = "exit 0";
  for (const [hostPath, body] of Object.entries(commands)) write(hostPath, `#!/bin/sh\n${body}\n`, 0o755);
  for (const [hostPath, file] of Object.entries(spec.files ?? {})) {
    if (typeof file === "string") write(hostPath, file);
    else {
      write(hostPath, file.content, file.mode ?? 0o644);
      if (file.uid !== undefined) fs.chownSync(at(hostPath), file.uid, file.uid);
    }
  }
  for (const [hostPath, target] of Object.entries(spec.symlinks ?? {})) link(hostPath, target);

  return {
    root,
    host: new Host({ root }),
    write: (hostPath, content, mode) => write(hostPath, content, mode),
    remove: () => fs.rmSync(root, { recursive: true, force: true }),
  };
}

export function removeTestHosts(): void {
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
}

function makeCharDevice(file: string, major: number, minor: number): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  // Node has no mknod(2); the tests run as root (as CI does), which mknod(1) needs.
  execFileSync("mknod", [file, "c", String(major), String(minor)]);
}

function makeSocket(file: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  // A bound Unix socket leaves its file behind when the process exits (Node's server would unlink it).
  execFileSync("python3", ["-c", "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])", file]);
}
