import * as z from "zod/mini";
import { detectArch } from "./arch.js";
import type { DetectContext } from "./context.js";
import { cpuCount, flagsFromCpuinfo, modelFromCpuinfo, parseCpuinfo, vendorFromCpuinfo } from "./cpuinfo.js";
import { defineSource } from "./source.js";

export const Virtualization = z.enum(["vmx", "svm", "sie"]);

export const CpuFacts = z.object({
  vendor: z.nullable(z.string()),
  model: z.nullable(z.string()),
  count: z.int().check(z.nonnegative()),
  flags: z.array(z.string()),
  /** The CPU's hardware virtualisation extension as the host kernel shows it. */
  virtualization: z.nullable(Virtualization),
  /** The node is itself a virtual machine; null when the architecture gives no sign either way. */
  hypervisorGuest: z.nullable(z.boolean()),
});
export type CpuFacts = z.infer<typeof CpuFacts>;

export const cpu = defineSource({
  key: "cpu",
  schema: CpuFacts,
  startsProcesses: false,
  unknown: { vendor: null, model: null, count: 0, flags: [], virtualization: null, hypervisorGuest: null },
  detect: detectCpu,
});

export function detectCpu(ctx: DetectContext): Promise<CpuFacts> {
  return ctx.once("cpu", async () => {
    const text = await ctx.read("cpu", "/proc/cpuinfo", { required: true });
    const blocks = text === null ? [] : parseCpuinfo(text);
    const flags = flagsFromCpuinfo(blocks);
    const arch = await detectArch(ctx);
    return {
      vendor: vendorFromCpuinfo(blocks),
      model: modelFromCpuinfo(blocks),
      count: cpuCount(blocks),
      flags,
      virtualization: virtualizationOf(flags),
      hypervisorGuest: text === null ? null : await guestOf(ctx, arch, flags, blocks),
    };
  });
}

function virtualizationOf(flags: readonly string[]): CpuFacts["virtualization"] {
  if (flags.includes("vmx")) return "vmx";
  if (flags.includes("svm")) return "svm";
  if (flags.includes("sie")) return "sie";
  return null;
}

async function guestOf(
  ctx: DetectContext,
  arch: string | null,
  flags: readonly string[],
  blocks: ReturnType<typeof parseCpuinfo>,
): Promise<boolean | null> {
  // x86 kernels set the "hypervisor" flag whenever CPUID says a hypervisor is present.
  if (arch === "x86_64" || arch === "i686") return flags.includes("hypervisor");
  // Xen guests of any architecture say so here.
  if ((await ctx.readValue("cpu", "/sys/hypervisor/type")) !== null) return true;
  if (arch === "s390x") {
    // /proc/sysinfo lists a "VM00" level when running under z/VM or KVM; an LPAR alone has none.
    const sysinfo = await ctx.read("cpu", "/proc/sysinfo");
    return sysinfo === null ? null : /^VM00 /m.test(sysinfo);
  }
  if (arch === "ppc64le") {
    // PowerNV is bare metal; pSeries runs under a hypervisor (PowerVM or KVM).
    const platform = blocks.map((b) => b.get("platform")).find((p) => p !== undefined);
    if (platform === "PowerNV") return false;
    if (platform === "pSeries") return true;
  }
  return null;
}
