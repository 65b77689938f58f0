// The kernel's build configuration: /proc/config.gz (CONFIG_IKCONFIG_PROC) or /boot/config-<release>.
// It tells which features are built in ("y") or built as modules ("m"), even when /proc/modules
// does not exist because the kernel has no loadable modules at all.

import { itemAt } from "../at.js";
import type { DetectContext } from "./context.js";

export interface KernelConfig {
  source: string;
  values: Map<string, string>;
}

export function parseKernelConfig(text: string): Map<string, string> {
  const values = new Map<string, string>();
  for (const line of text.split("\n")) {
    const set = /^(CONFIG_[A-Za-z0-9_]+)=(.*)$/.exec(line);
    if (set) {
      values.set(itemAt(set, 1, "the option"), itemAt(set, 2, "its value"));
      continue;
    }
    const unset = /^# (CONFIG_[A-Za-z0-9_]+) is not set$/.exec(line);
    if (unset) values.set(itemAt(unset, 1, "the option"), "n");
  }
  return values;
}

export function readKernelConfig(ctx: DetectContext, release: string | null): Promise<KernelConfig | null> {
  return ctx.once("kernel-config", async () => {
    const packed = await ctx.host.readBytes("/proc/config.gz");
    if (packed.ok) {
      try {
        // Loaded only for a node that has the file (most read /boot's plain one).
        const { gunzipSync } = await import("node:zlib");
        return {
          source: "/proc/config.gz",
          values: parseKernelConfig(gunzipSync(packed.bytes).toString("utf8")),
        };
      } catch (error) {
        ctx.problem("kernel", `cannot decompress: ${(error as Error).message}`, { path: "/proc/config.gz" });
      }
    } else if (!packed.missing) {
      ctx.problem("kernel", packed.reason, { path: "/proc/config.gz" });
    }
    if (release === null) return null;
    const boot = `/boot/config-${release}`;
    const text = await ctx.read("kernel", boot);
    return text === null ? null : { source: boot, values: parseKernelConfig(text) };
  });
}
