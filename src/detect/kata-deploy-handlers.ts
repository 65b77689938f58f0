// kata-deploy's older layouts, recognised by the handlers it wrote: 3.x wrote its containerd
// handlers into config.toml itself (or into a drop-in under the prefix) and edited the release's
// configuration files in place, with no per-shim copies (runtimes/<shim>/) to find it by; its
// oldest handlers name no path at all and run its per-shim shim from the PATH. A handler of
// kata-deploy's shape pointing into the prefix makes the install there kata-deploy's, with the
// shims those handlers serve, and what it wrote into their configuration files in place.
import type { DetectContext } from "./context.js";
import { deploySnapshotters, editsIn, type KataFacts } from "./kata.js";
import type { RuntimeHandler } from "./runtime/schema.js";

const DEFAULTS = "share/defaults/kata-containers";
/** A shim's configuration under DEFAULTS: the release's (Go, runtime-rs) or kata-deploy's copy. */
const IN_DEFAULTS = /^(?:runtime-rs\/)?(?:runtimes\/[^/]+\/)?configuration-([^/]+)\.toml$/;

/** The shim a handler of kata-deploy's serves, and the configuration file it reads; null if not one. */
export function deployedShim(
  handler: RuntimeHandler,
  kata: Pick<KataFacts, "configs"> & { prefix: string },
  deployDropIns: readonly string[],
): { shim: string; config: string } | null {
  const { name, runtimeType, runtimePath, configPath } = handler;
  const { prefix } = kata;
  // kata-deploy names a handler kata-<shim>, and kata-<shim>-<suffix> under /opt/kata-<suffix>.
  const suffix = /^kata-(.+)$/.exec(prefix.slice(prefix.lastIndexOf("/") + 1))?.[1];
  const serves = (shim: string) =>
    name === `kata-${shim}` || (suffix !== undefined && name === `kata-${shim}-${suffix}`);
  if (!name.startsWith("kata-")) return null;
  // kata-deploy names the containerd runtime type after the handler; on CRI-O its drop-in says it.
  const deploysShape =
    runtimeType === `io.containerd.${name}.v2` ||
    (deployDropIns.includes(handler.file) && runtimePath?.startsWith(`${prefix}/`) === true);
  if (!deploysShape) return null;
  if (configPath === null) {
    // The oldest: no paths; its shim reads <prefix>/share/defaults/…/configuration-<shim>.toml.
    if (runtimePath !== null) return null;
    const file = kata.configs.find((f) => serves(f.slice("configuration-".length, -".toml".length)));
    return file === undefined
      ? null
      : {
          shim: file.slice("configuration-".length, -".toml".length),
          config: `${prefix}/${DEFAULTS}/${file}`,
        };
  }
  const base = `${prefix}/${DEFAULTS}/`;
  const shim = configPath.startsWith(base) ? IN_DEFAULTS.exec(configPath.slice(base.length))?.[1] : undefined;
  if (shim === undefined || !serves(shim)) return null;
  if (runtimePath !== null && !runtimePath.startsWith(`${prefix}/`)) return null;
  return { shim, config: configPath };
}

/**
 * The kata facts, with an install at the prefix that kata-deploy's handlers point into taken for
 * kata-deploy's (and the shims they serve added). Kata-install's own install, or none, unchanged.
 */
export async function withDeployHandlers(
  ctx: DetectContext,
  kata: KataFacts,
  handlers: readonly RuntimeHandler[],
): Promise<KataFacts> {
  if (!kata.installed || kata.prefix === null || kata.managedBy === "kata-install") return kata;
  const prefix = kata.prefix;
  const known = new Set(kata.deploy?.shims ?? []);
  const found = new Map<string, string>();
  for (const handler of handlers) {
    const served = deployedShim(handler, { prefix, configs: kata.configs }, kata.deploy?.dropIns ?? []);
    if (served !== null && !known.has(served.shim)) found.set(served.shim, served.config);
  }
  if (found.size === 0) return kata;
  const settings = [...(kata.deploy?.settings ?? [])];
  for (const [shim, config] of found) {
    // The file itself, where 3.x wrote the proxy, DEBUG's flags and the annotations it allows.
    const edits = await editsIn(ctx, config);
    if (edits !== null) settings.push({ shim, file: config, values: edits });
  }
  const snapshotters = kata.deploy?.snapshotters ?? (await deploySnapshotters(ctx, prefix, []));
  return {
    ...kata,
    managedBy: "kata-deploy",
    deploy: {
      dropIns: kata.deploy?.dropIns ?? [],
      shims: [...known, ...found.keys()].sort(),
      settings,
      ...(snapshotters.length > 0 ? { snapshotters } : {}),
    },
  };
}
