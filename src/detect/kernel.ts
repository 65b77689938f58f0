import path from "node:path";
import * as z from "zod/mini";
import { itemAt } from "../at.js";
import type { DetectContext } from "./context.js";
import { type KernelConfig, readKernelConfig } from "./kernel-config.js";
import { defineSource } from "./source.js";

/**
 * The kernel modules Kata depends on, with the config symbol that builds each one. Names use "_":
 * the kernel treats "-" and "_" in module names alike.
 */
export const KATA_MODULES: Record<string, string> = {
  kvm: "CONFIG_KVM",
  kvm_intel: "CONFIG_KVM_INTEL",
  kvm_amd: "CONFIG_KVM_AMD",
  kvm_hv: "CONFIG_KVM_BOOK3S_64_HV",
  vhost: "CONFIG_VHOST",
  vhost_net: "CONFIG_VHOST_NET",
  vhost_vsock: "CONFIG_VHOST_VSOCK",
  vsock: "CONFIG_VSOCKETS",
  tun: "CONFIG_TUN",
  "9p": "CONFIG_9P_FS",
  "9pnet": "CONFIG_NET_9P",
  "9pnet_virtio": "CONFIG_NET_9P_VIRTIO",
  virtiofs: "CONFIG_VIRTIO_FS",
  fuse: "CONFIG_FUSE_FS",
  overlay: "CONFIG_OVERLAY_FS",
  vfio: "CONFIG_VFIO",
  vfio_pci: "CONFIG_VFIO_PCI",
  vfio_iommu_type1: "CONFIG_VFIO_IOMMU_TYPE1",
  erofs: "CONFIG_EROFS_FS",
  dm_mod: "CONFIG_BLK_DEV_DM",
  dm_verity: "CONFIG_DM_VERITY",
  dm_thin_pool: "CONFIG_DM_THIN_PROVISIONING",
  loop: "CONFIG_BLK_DEV_LOOP",
  br_netfilter: "CONFIG_BRIDGE_NETFILTER",
};

/** Modules that register a filesystem, under the name /proc/filesystems shows. */
const FILESYSTEM_OF: Record<string, string> = {
  "9p": "9p",
  virtiofs: "virtiofs",
  fuse: "fuse",
  overlay: "overlay",
  erofs: "erofs",
};

export const ModuleState = z.enum(["loaded", "builtin", "available", "missing"]);
export const ModuleFacts = z.object({
  state: ModuleState,
  /** The evidence for the state: which file said so. */
  via: z.string(),
});

const HugepageSize = z.object({ sizeKb: z.number(), total: z.number(), free: z.number() });

export const KernelFacts = z.object({
  release: z.nullable(z.string()),
  cmdline: z.array(z.string()),
  filesystems: z.array(z.string()),
  modulesSupported: z.boolean(),
  /** Where the build configuration was read from, if anywhere. */
  config: z.nullable(z.string()),
  modules: z.record(z.string(), ModuleFacts),
  hugepages: z.object({ defaultSizeKb: z.nullable(z.number()), sizes: z.array(HugepageSize) }),
});
export type KernelFacts = z.infer<typeof KernelFacts>;

export const kernel = defineSource({
  key: "kernel",
  schema: KernelFacts,
  startsProcesses: false,
  unknown: {
    release: null,
    cmdline: [],
    filesystems: [],
    modulesSupported: false,
    config: null,
    modules: {},
    hugepages: { defaultSizeKb: null, sizes: [] },
  },
  detect: detectKernel,
});

export function detectKernel(ctx: DetectContext): Promise<KernelFacts> {
  return ctx.once("kernel", async () => {
    const release = await ctx.readValue("kernel", "/proc/sys/kernel/osrelease", { required: true });
    const cmdline = (await ctx.readValue("kernel", "/proc/cmdline")) ?? "";
    const filesystems = parseFilesystems(
      (await ctx.read("kernel", "/proc/filesystems", { required: true })) ?? "",
    );
    const procModules = await ctx.read("kernel", "/proc/modules");
    const modulesSupported = procModules !== null;
    const config = await readKernelConfig(ctx, release);
    const modules = await moduleStates(ctx, {
      release,
      filesystems: new Set(filesystems),
      loaded: new Set(
        (procModules ?? "").split("\n").map((line) => itemAt(line.split(" "), 0, "a module's name")),
      ),
      modulesSupported,
      config,
    });
    return {
      release,
      cmdline: cmdline.split(/\s+/).filter(Boolean),
      filesystems,
      modulesSupported,
      config: config?.source ?? null,
      modules,
      hugepages: await hugepages(ctx),
    };
  });
}

export function parseFilesystems(text: string): string[] {
  return text
    .split("\n")
    .map((line) => line.trim().split(/\s+/).pop() ?? "")
    .filter(Boolean)
    .sort();
}

interface ModuleInputs {
  release: string | null;
  filesystems: Set<string>;
  loaded: Set<string>;
  modulesSupported: boolean;
  config: KernelConfig | null;
}

async function moduleStates(ctx: DetectContext, inputs: ModuleInputs): Promise<KernelFacts["modules"]> {
  const dir = inputs.release === null ? null : `/lib/modules/${inputs.release}`;
  const builtin =
    dir === null ? new Set<string>() : moduleNames(await ctx.read("kernel", `${dir}/modules.builtin`));
  const available =
    dir === null || !inputs.modulesSupported ? new Set<string>() : await availableModules(ctx, dir);
  const sysModules = new Set((await ctx.list("kernel", "/sys/module")).map(canonical));
  const states: KernelFacts["modules"] = {};
  for (const [name, symbol] of Object.entries(KATA_MODULES)) {
    const configured = inputs.config?.values.get(symbol);
    if (inputs.loaded.has(name)) states[name] = { state: "loaded", via: "/proc/modules" };
    else if (builtin.has(name)) states[name] = { state: "builtin", via: `${dir}/modules.builtin` };
    // A registered filesystem whose module is not loaded can only be built in.
    else if (FILESYSTEM_OF[name] !== undefined && inputs.filesystems.has(FILESYSTEM_OF[name])) {
      states[name] = { state: "builtin", via: `/proc/filesystems ${FILESYSTEM_OF[name]}` };
    } else if (configured === "y")
      states[name] = { state: "builtin", via: `${inputs.config?.source} ${symbol}=y` };
    // /sys/module also lists built-in code that has parameters; a module that is not in /proc/modules
    // (or a kernel without modules) can only be built in.
    else if (sysModules.has(name)) states[name] = { state: "builtin", via: `/sys/module/${name}` };
    else if (available.has(name)) states[name] = { state: "available", via: `${dir}` };
    else {
      const why =
        configured === "m"
          ? `${symbol}=m but no module file under ${dir}`
          : configured === "n"
            ? `${symbol} is not set`
            : inputs.config !== null
              ? `${symbol} absent from ${inputs.config.source}`
              : "not found";
      states[name] = { state: "missing", via: why };
    }
  }
  return states;
}

/** Module names from modules.builtin / modules.dep style lines ("kernel/fs/9p/9p.ko.xz: ..."). */
export function moduleNames(text: string | null): Set<string> {
  const names = new Set<string>();
  for (const line of (text ?? "").split("\n")) {
    const file = line.split(":")[0]?.trim();
    if (file) names.add(canonical(path.posix.basename(file).replace(/\.ko(\.(xz|zst|gz))?$/, "")));
  }
  return names;
}

async function availableModules(ctx: DetectContext, dir: string): Promise<Set<string>> {
  const dep = await ctx.read("kernel", `${dir}/modules.dep`);
  if (dep !== null) return moduleNames(dep);
  if (!(await ctx.exists("kernel", dir))) return new Set();
  // No modules.dep (depmod never ran): look at the files themselves.
  ctx.problem("kernel", "modules.dep is missing; module files were searched instead (run depmod)", {
    path: `${dir}/modules.dep`,
  });
  const files = await ctx.listTree("kernel", `${dir}/kernel`);
  return moduleNames(files.filter((file) => /\.ko(\.(xz|zst|gz))?$/.test(file)).join("\n"));
}

function canonical(name: string): string {
  return name.replaceAll("-", "_");
}

async function hugepages(ctx: DetectContext): Promise<KernelFacts["hugepages"]> {
  const meminfo = (await ctx.read("kernel", "/proc/meminfo")) ?? "";
  const size = /^Hugepagesize:\s+(\d+)\s*kB/m.exec(meminfo);
  const sizes: KernelFacts["hugepages"]["sizes"] = [];
  for (const entry of await ctx.list("kernel", "/sys/kernel/mm/hugepages")) {
    const kb = /^hugepages-(\d+)kB$/.exec(entry);
    if (!kb) continue;
    const base = `/sys/kernel/mm/hugepages/${entry}`;
    const total = Number((await ctx.readValue("kernel", `${base}/nr_hugepages`)) ?? 0);
    const free = Number((await ctx.readValue("kernel", `${base}/free_hugepages`)) ?? 0);
    sizes.push({ sizeKb: Number(kb[1]), total, free });
  }
  sizes.sort((a, b) => a.sizeKb - b.sizeKb);
  return { defaultSizeKb: size ? Number(size[1]) : null, sizes };
}
