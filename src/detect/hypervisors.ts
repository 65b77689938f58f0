// Hypervisors already on the node, wherever they came from. A distro qemu that is recent enough and
// has the devices Kata needs can replace Kata's bundled one; asking it which devices it has is the
// only way to know (RHEL's qemu-kvm has no virtio-9p-pci, some builds lack vhost-user-fs-pci).

import * as z from "zod/mini";
import { itemAt } from "../at.js";
import { versionIn } from "../version.js";
import { detectArch } from "./arch.js";
import type { DetectContext } from "./context.js";
import { defineSource } from "./source.js";

export const Origin = z.enum(["distro", "kata", "local"]);

export const HypervisorBinary = z.object({
  path: z.string(),
  origin: Origin,
  version: z.nullable(z.string()),
  /** qemu only: device models (`-device help`) and machine types (`-machine help`); null when not asked or not answered. */
  devices: z.optional(z.nullable(z.array(z.string()))),
  machines: z.optional(z.nullable(z.array(z.string()))),
});
export type HypervisorBinary = z.infer<typeof HypervisorBinary>;

export const HypervisorName = z.enum(["qemu", "cloudHypervisor", "firecracker", "virtiofsd"]);
export type HypervisorName = z.infer<typeof HypervisorName>;

export const HypervisorsFacts = z.object({
  /** The one Kata would use: the distro's when there is one, else Kata's own. */
  qemu: z.nullable(HypervisorBinary),
  cloudHypervisor: z.nullable(HypervisorBinary),
  firecracker: z.nullable(HypervisorBinary),
  virtiofsd: z.nullable(HypervisorBinary),
  /** Every copy found, so a distro qemu beside a Kata one is visible. */
  found: z.array(z.extend(HypervisorBinary, { name: HypervisorName })),
});
export type HypervisorsFacts = z.infer<typeof HypervisorsFacts>;

const DISTRO_DIRS = ["/usr/bin", "/usr/libexec", "/usr/lib/qemu", "/usr/sbin", "/bin"];
const LOCAL_DIRS = ["/usr/local/bin", "/usr/local/libexec"];
/** Kata's own binaries: under where it is installed (/opt/kata, or INSTALLATION_PREFIX's). */
const kataDirs = (prefix: string) => [`${prefix}/bin`, `${prefix}/libexec`];

/** The qemu binary name for each kernel architecture name. */
export const QEMU_SYSTEM: Record<string, string> = {
  x86_64: "qemu-system-x86_64",
  aarch64: "qemu-system-aarch64",
  s390x: "qemu-system-s390x",
  ppc64le: "qemu-system-ppc64",
  riscv64: "qemu-system-riscv64",
};

export const hypervisors = defineSource({
  key: "hypervisors",
  schema: HypervisorsFacts,
  startsProcesses: true,
  unknown: { qemu: null, cloudHypervisor: null, firecracker: null, virtiofsd: null, found: [] },
  async detect(ctx: DetectContext): Promise<HypervisorsFacts> {
    const arch = await detectArch(ctx);
    const qemuNames = [QEMU_SYSTEM[arch ?? ""], "qemu-kvm"].filter((n): n is string => n !== undefined);
    const searches: Array<[HypervisorName, string[]]> = [
      ["qemu", qemuNames],
      ["cloudHypervisor", ["cloud-hypervisor"]],
      ["firecracker", ["firecracker"]],
      ["virtiofsd", ["virtiofsd"]],
    ];
    const found = (
      await Promise.all(
        searches.map(async ([name, files]) => {
          const copies = await locate(ctx, files);
          return Promise.all(copies.map(async (copy) => ({ name, ...(await describe(ctx, name, copy)) })));
        }),
      )
    ).flat();
    const preferred = (name: HypervisorName) => {
      const copies = found.filter((copy) => copy.name === name);
      const pick =
        copies.find((c) => c.origin === "distro") ?? copies.find((c) => c.origin === "local") ?? copies[0];
      if (pick === undefined) return null;
      const { name: _name, ...binary } = pick;
      return binary;
    };
    return {
      qemu: preferred("qemu"),
      cloudHypervisor: preferred("cloudHypervisor"),
      firecracker: preferred("firecracker"),
      virtiofsd: preferred("virtiofsd"),
      found,
    };
  },
});

async function locate(
  ctx: DetectContext,
  files: string[],
): Promise<Array<{ path: string; origin: z.infer<typeof Origin> }>> {
  const groups: Array<[z.infer<typeof Origin>, string[]]> = [
    ["distro", DISTRO_DIRS],
    ["local", LOCAL_DIRS],
    ["kata", kataDirs(ctx.kataPrefix)],
  ];
  const candidates = groups.flatMap(([origin, dirs]) =>
    dirs.flatMap((dir) => files.map((file) => ({ origin, dir, file }))),
  );
  // Every place at once (each is a stat through the host), then keep the order of preference.
  const found = await Promise.all(
    candidates.map(async ({ origin, dir, file }) => {
      const at = await ctx.host.which(file, [dir]);
      return at === null ? null : { path: at, origin, real: await ctx.host.resolve(at) };
    }),
  );
  const out: Array<{ path: string; origin: z.infer<typeof Origin> }> = [];
  const seen = new Set<string>();
  for (const copy of found) {
    // /bin is /usr/bin on merged-/usr systems: one binary, not two.
    if (copy === null || seen.has(copy.real)) continue;
    seen.add(copy.real);
    out.push({ path: copy.path, origin: copy.origin });
  }
  return out;
}

async function describe(
  ctx: DetectContext,
  name: HypervisorName,
  copy: { path: string; origin: z.infer<typeof Origin> },
): Promise<HypervisorBinary> {
  const source = "hypervisors";
  // Kata's own qemu is built with what Kata needs: only a host's qemu is asked for its devices
  // (the rules read them to decide whether it can stand in for the bundled one).
  const askDevices = name === "qemu" && copy.origin !== "kata";
  // All questions at once: each is a process start, and they do not depend on each other.
  const [versionRun, devices, machines] = await Promise.all([
    ctx.run(source, copy.path, ["--version"]),
    askDevices ? ctx.run(source, copy.path, ["-nodefaults", "-machine", "none", "-device", "help"]) : null,
    askDevices ? ctx.run(source, copy.path, ["-machine", "help"]) : null,
  ]);
  const version = versionRun.ok ? versionIn(versionRun.stdout) : null;
  if (versionRun.ok && version === null) {
    ctx.problem(source, `no version in its output: ${firstLine(versionRun.stdout)}`, {
      command: `${copy.path} --version`,
    });
  }
  if (devices === null || machines === null) return { ...copy, version };
  return {
    ...copy,
    version,
    devices: devices.ok ? parseQemuDevices(devices.stdout) : null,
    machines: machines.ok ? parseQemuMachines(machines.stdout) : null,
  };
}

/** The first dotted version number in a `--version` output ("QEMU emulator version 8.2.2 (…)", "cloud-hypervisor v40.0"). */
/** `-device help` lines: `name "virtio-9p-pci", bus virtio-bus, desc "…"`. */
export function parseQemuDevices(output: string): string[] {
  const names = [...output.matchAll(/^name "([^"]+)"/gm)].map((m) => itemAt(m, 1, "the device name"));
  return [...new Set(names)].sort();
}

/** `-machine help` lines after the header: `pc-q35-8.2           Standard PC (Q35 + ICH9, 2009)`. */
export function parseQemuMachines(output: string): string[] {
  return output
    .split("\n")
    .filter((line) => line.trim() !== "" && !/^Supported machines/i.test(line))
    .map((line) => itemAt(line.trim().split(/\s+/), 0, "the machine name"))
    .filter((name) => name !== "")
    .sort();
}

function firstLine(text: string): string {
  return (text.trim().split("\n")[0] ?? "").slice(0, 120);
}
