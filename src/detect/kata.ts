// An existing Kata install: kata-deploy's, a package's, or ours (recognised by our journal).
import * as z from "zod/mini";
import type { DetectContext } from "./context.js";
import { parseVersion } from "./hypervisors.js";
import { defineSource } from "./source.js";

export const KATA_PREFIX = "/opt/kata";
const DEFAULTS_DIR = "share/defaults/kata-containers";
/** Where kata-install keeps its journal under the prefix (the install issue). */
export const JOURNAL_DIR = ".install";

export const KataFacts = z.object({
  installed: z.boolean(),
  prefix: z.nullable(z.string()),
  version: z.nullable(z.string()),
  /** configuration-<shim>.toml files shipped under <prefix>/share/defaults/kata-containers. */
  configs: z.array(z.string()),
  /** The admin's own configuration, which Kata prefers over the shipped ones. */
  etcConfig: z.nullable(z.string()),
  managedBy: z.nullable(z.enum(["kata-install", "other"])),
});
export type KataFacts = z.infer<typeof KataFacts>;

export const kata = defineSource({
  key: "kata",
  schema: KataFacts,
  async detect(ctx: DetectContext): Promise<KataFacts> {
    const etcConfig = (await ctx.host.exists("/etc/kata-containers/configuration.toml"))
      ? "/etc/kata-containers/configuration.toml"
      : null;
    const prefix = KATA_PREFIX;
    const runtimeBinary = `${prefix}/bin/kata-runtime`;
    const shimBinary = `${prefix}/bin/containerd-shim-kata-v2`;
    const hasRuntime = await ctx.host.exists(runtimeBinary);
    const hasShim = await ctx.host.exists(shimBinary);
    const configs = (await ctx.list("kata", `${prefix}/${DEFAULTS_DIR}`)).filter((name) =>
      /^configuration.*\.toml$/.test(name),
    );
    if (!hasRuntime && !hasShim && configs.length === 0) {
      return { installed: false, prefix: null, version: null, configs: [], etcConfig, managedBy: null };
    }
    const probe = hasRuntime ? runtimeBinary : hasShim ? shimBinary : null;
    const run = probe === null ? null : await ctx.run("kata", probe, ["--version"]);
    return {
      installed: true,
      prefix,
      version: run?.ok ? parseVersion(run.stdout) : null,
      configs,
      etcConfig,
      managedBy: (await ctx.host.exists(`${prefix}/${JOURNAL_DIR}`)) ? "kata-install" : "other",
    };
  },
});
