import * as z from "zod/mini";
import type { DetectContext } from "./context.js";
import { detectKernel } from "./kernel.js";
import { defineSource } from "./source.js";

export const IommuFacts = z.object({
  /** The kernel runs an IOMMU: it has formed IOMMU groups or registered an IOMMU device. */
  enabled: z.boolean(),
  groups: z.int(),
  /** Kernel command-line parameters that steer it (intel_iommu=on, amd_iommu=…, iommu=pt). */
  cmdline: z.array(z.string()),
});
export type IommuFacts = z.infer<typeof IommuFacts>;

export const iommu = defineSource({
  key: "iommu",
  schema: IommuFacts,
  startsProcesses: false,
  unknown: { enabled: false, groups: 0, cmdline: [] },
  async detect(ctx: DetectContext): Promise<IommuFacts> {
    const groups = await ctx.list("iommu", "/sys/kernel/iommu_groups");
    const units = await ctx.list("iommu", "/sys/class/iommu");
    const { cmdline } = await detectKernel(ctx);
    return {
      enabled: groups.length > 0 || units.length > 0,
      groups: groups.length,
      cmdline: cmdline.filter((arg) => /^(intel_iommu|amd_iommu|iommu)(=|$)/.test(arg)),
    };
  },
});
