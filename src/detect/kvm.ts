import * as z from "zod/mini";
import type { DetectContext } from "./context.js";
import { defineSource } from "./source.js";

/** The vendor KVM modules, most specific first; plain "kvm" is the common core. */
const VENDOR_MODULES = ["kvm_intel", "kvm_amd", "kvm_hv", "kvm_pvm"] as const;

export const KvmFacts = z.object({
  /** /dev/kvm exists and is a character device. */
  device: z.boolean(),
  /** The KVM module the host has: the vendor one when present, else "kvm"; null when none. */
  module: z.nullable(z.string()),
  /** Nested virtualisation enabled in the vendor module; null when the host does not say. */
  nested: z.nullable(z.boolean()),
  /** Parameters of that module, as /sys/module/<module>/parameters shows them. */
  params: z.record(z.string(), z.string()),
});
export type KvmFacts = z.infer<typeof KvmFacts>;

export const kvm = defineSource({
  key: "kvm",
  schema: KvmFacts,
  startsProcesses: false,
  unknown: { device: false, module: null, nested: null, params: {} },
  detect: detectKvm,
});

export function detectKvm(ctx: DetectContext): Promise<KvmFacts> {
  return ctx.once("kvm", async () => {
    const stats = await ctx.stat("kvm", "/dev/kvm");
    if (stats !== null && !stats.isCharacterDevice()) {
      ctx.problem("kvm", "exists but is not a character device", { path: "/dev/kvm" });
    }
    const present = new Set(await ctx.list("kvm", "/sys/module"));
    const module = VENDOR_MODULES.find((name) => present.has(name)) ?? (present.has("kvm") ? "kvm" : null);
    const params: Record<string, string> = {};
    if (module !== null) {
      const dir = `/sys/module/${module}/parameters`;
      for (const name of await ctx.list("kvm", dir)) {
        const value = await ctx.readValue("kvm", `${dir}/${name}`);
        if (value !== null) params[name] = value;
      }
    }
    return {
      device: stats?.isCharacterDevice() ?? false,
      module,
      nested: params.nested === undefined ? null : parseBool(params.nested),
      params,
    };
  });
}

/** Kernel module parameters print booleans as Y/N or 1/0. */
export function parseBool(value: string | null | undefined): boolean | null {
  if (value === undefined || value === null) return null;
  if (/^(y|yes|1|on|true)$/i.test(value.trim())) return true;
  if (/^(n|no|0|off|false)$/i.test(value.trim())) return false;
  return null;
}
