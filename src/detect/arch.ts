// The node's architecture in the kernel's names (uname -m), read from the host itself: a test host
// or a mounted node of another architecture must read as that architecture, whatever runs us.
import * as z from "zod/mini";
import type { DetectContext } from "./context.js";
import { archFromCpuinfo, parseCpuinfo } from "./cpuinfo.js";
import { defineSource } from "./source.js";

export const ArchFacts = z.nullable(z.string());

export const arch = defineSource({
  key: "arch",
  schema: ArchFacts,
  startsProcesses: false,
  unknown: null,
  detect: (ctx) => detectArch(ctx),
});

export function detectArch(ctx: DetectContext): Promise<string | null> {
  return ctx.once("arch", async () => {
    const declared = await ctx.readValue("arch", "/proc/sys/kernel/arch");
    if (declared) return declared;
    const cpuinfo = await ctx.read("arch", "/proc/cpuinfo", { required: true });
    const shaped = cpuinfo === null ? null : archFromCpuinfo(parseCpuinfo(cpuinfo));
    if (shaped === null) {
      ctx.problem(
        "arch",
        "neither /proc/sys/kernel/arch nor the shape of /proc/cpuinfo tells the architecture",
        {
          path: "/proc/cpuinfo",
        },
      );
    }
    return shaped;
  });
}
