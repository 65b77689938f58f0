// Confidential-computing support. Each feature has two sides, both recorded: the CPU advertises it
// (cpuinfo, firmware) and KVM has it enabled (module parameter). Only both make it usable.
import * as z from "zod/mini";
import type { DetectContext } from "./context.js";
import { detectCpu } from "./cpu.js";
import { parseBool } from "./kvm.js";
import { defineSource } from "./source.js";

export const SecurityFeature = z.object({
  cpu: z.boolean(),
  /** KVM's switch for it; null when the host does not expose one (module absent, or none exists). */
  kvm: z.nullable(z.boolean()),
  usable: z.boolean(),
});
export type SecurityFeature = z.infer<typeof SecurityFeature>;

export const SecurityFacts = z.object({
  sev: SecurityFeature,
  sevEs: SecurityFeature,
  sevSnp: SecurityFeature,
  tdx: SecurityFeature,
  sgx: SecurityFeature,
  s390xSe: SecurityFeature,
});
export type SecurityFacts = z.infer<typeof SecurityFacts>;

export const security = defineSource({
  key: "security",
  schema: SecurityFacts,
  startsProcesses: false,
  unknown: {
    sev: feature(false, null),
    sevEs: feature(false, null),
    sevSnp: feature(false, null),
    tdx: feature(false, null),
    sgx: feature(false, null),
    s390xSe: feature(false, null),
  },
  async detect(ctx: DetectContext): Promise<SecurityFacts> {
    const { flags } = await detectCpu(ctx);
    const has = (flag: string) => flags.includes(flag);
    const param = async (module: string, name: string) =>
      parseBool(await ctx.readValue("security", `/sys/module/${module}/parameters/${name}`));
    const sgxDevice =
      (await ctx.exists("security", "/dev/sgx_enclave")) ||
      (await ctx.exists("security", "/dev/sgx/enclave"));
    // IBM Secure Execution: the ultravisor is there (firmware) and the host booted with prot_virt=1.
    const uv = await ctx.exists("security", "/sys/firmware/uv");
    const protVirt = await ctx.readValue("security", "/sys/firmware/uv/prot_virt_host");
    return {
      sev: feature(has("sev"), await param("kvm_amd", "sev")),
      sevEs: feature(has("sev_es"), await param("kvm_amd", "sev_es")),
      sevSnp: feature(has("sev_snp"), await param("kvm_amd", "sev_snp")),
      // Linux 6.x shows "tdx_host_platform" on hosts whose firmware enabled TDX.
      tdx: feature(has("tdx_host_platform") || has("tdx"), await param("kvm_intel", "tdx")),
      sgx: feature(has("sgx"), has("sgx") ? sgxDevice : null),
      s390xSe: feature(uv, protVirt === null ? null : protVirt === "1"),
    };
  },
});

function feature(cpu: boolean, kvm: boolean | null): SecurityFeature {
  return { cpu, kvm, usable: cpu && kvm === true };
}
