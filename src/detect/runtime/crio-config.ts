// CRI-O reads /etc/crio/crio.conf, then every file of /etc/crio/crio.conf.d in lexical order; later
// files override earlier ones key by key.
import type { DetectContext } from "../context.js";
import { dig, isTable, readToml } from "../toml.js";
import { CRIO_CONFIG, CRIO_DROP_IN_DIR } from "./layouts.js";
import type { RuntimeHandler } from "./schema.js";

export interface CrioConfig {
  exists: boolean;
  files: string[];
  handlers: RuntimeHandler[];
}

export async function readCrioConfig(ctx: DetectContext): Promise<CrioConfig> {
  const dropIns = (await ctx.list("runtime", CRIO_DROP_IN_DIR)).map((name) => `${CRIO_DROP_IN_DIR}/${name}`);
  const files = [CRIO_CONFIG, ...dropIns];
  const byName = new Map<string, RuntimeHandler>();
  const present: string[] = [];
  for (const file of files) {
    const table = await readToml(ctx, "runtime", file);
    if (table === null) continue;
    present.push(file);
    const runtimes = dig(table, ["crio", "runtime", "runtimes"]);
    if (!isTable(runtimes)) continue;
    for (const [name, value] of Object.entries(runtimes)) {
      if (!isTable(value)) continue;
      const previous = byName.get(name);
      byName.set(name, {
        name,
        runtimeType: str(value.runtime_type) ?? previous?.runtimeType ?? null,
        runtimePath: str(value.runtime_path) ?? previous?.runtimePath ?? null,
        configPath: str(value.runtime_config_path) ?? previous?.configPath ?? null,
        file,
      });
    }
  }
  return { exists: present.length > 0, files: present, handlers: [...byName.values()] };
}

function str(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}
