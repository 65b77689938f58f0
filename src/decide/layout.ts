// Where an install puts things on the node: Kata's release layout under the prefix, one directory
// per shim so that each has its own config.d/.

import { kataDirFromEnv } from "../detect/context.js";
import type { Catalog } from "./catalog.js";
import type { Decision, HandlerSettings } from "./decision.js";

/** The install directory: the prefix, with kata-deploy's MULTI_INSTALL_SUFFIX appended. */
export function installDir(decision: Decision): string {
  const suffix = decision.install.suffix.value;
  return suffix ? `${decision.install.prefix.value}-${suffix}` : decision.install.prefix.value;
}

export function handlerName(decision: Decision, shim: string): string {
  const suffix = decision.install.suffix.value;
  return suffix ? `kata-${shim}-${suffix}` : `kata-${shim}`;
}

/**
 * Where a shim's configuration lives, as kata-deploy puts it: runtimes/<shim>/ for the Go runtime,
 * runtime-rs/runtimes/<shim>/ for the Rust one (handlers' ConfigPath, admins' config.d).
 */
export function shimConfigDir(decision: Decision, shim: string, runtime: "go" | "rust" = "go"): string {
  const base = `${installDir(decision)}/share/defaults/kata-containers`;
  return runtime === "rust" ? `${base}/runtime-rs/runtimes/${shim}` : `${base}/runtimes/${shim}`;
}

export function shimConfigPath(decision: Decision, shim: string, runtime: "go" | "rust" = "go"): string {
  return `${shimConfigDir(decision, shim, runtime)}/configuration-${shim}.toml`;
}

export function shimBinary(decision: Decision, runtime: "go" | "rust"): string {
  return runtime === "rust"
    ? `${installDir(decision)}/runtime-rs/bin/containerd-shim-kata-v2`
    : `${installDir(decision)}/bin/containerd-shim-kata-v2`;
}

/**
 * A runtime handler of the install: one per shim; with DEBUG a -debug one beside it; and the
 * admin's custom runtimes, each on a shim's base.
 */
export interface Handler {
  shim: string;
  name: string;
  /**
   * A variant of the shim with a configuration of its own under custom-runtimes/: kata-deploy's
   * -debug one (guest debug on), or a custom runtime of the admin's. Null: the shim's own handler.
   */
  variant: "debug" | "custom" | null;
  runtimeType: string;
  runtimePath: string;
  configPath: string;
  snapshotter?: string;
  pullImage: boolean;
}

/** Where the variants' configurations live, as kata-deploy puts them: one directory per handler. */
export function variantsDir(decision: Decision): string {
  return `${installDir(decision)}/share/defaults/kata-containers/custom-runtimes`;
}

/** A variant handler's directory: configuration-<shim>.toml and a config.d/ of its own. */
export function variantConfigDir(decision: Decision, handler: string): string {
  return `${variantsDir(decision)}/${handler}`;
}

/** The debug handler's directory of a shim. */
export function debugConfigDir(decision: Decision, shim: string): string {
  return variantConfigDir(decision, `${handlerName(decision, shim)}-debug`);
}

export function handlersFor(decision: Decision, catalog: Catalog): Handler[] {
  const runtimeOf = (shim: string) => catalog.shims.get(shim)?.runtime ?? "go";
  const handler = (
    shim: string,
    name: string,
    variant: Handler["variant"],
    settings: HandlerSettings | undefined,
  ): Handler => ({
    shim,
    name,
    variant,
    runtimeType: `io.containerd.${name}.v2`,
    runtimePath: shimBinary(decision, runtimeOf(shim)),
    configPath:
      variant === null
        ? shimConfigPath(decision, shim, runtimeOf(shim))
        : `${variantConfigDir(decision, name)}/configuration-${shim}.toml`,
    snapshotter: settings?.snapshotter?.value,
    pullImage: settings?.pullType?.value === "guest-pull",
  });
  const shims = decision.shims.flatMap(({ name }) => {
    const settings = decision.handlers[name];
    const normal = handler(name, handlerName(decision, name), null, settings);
    // The debug variant pulls images as its shim does: it shares the shim's shared_fs (kata-deploy too).
    if (!decision.install.debug.value) return [normal];
    return [normal, handler(name, `${handlerName(decision, name)}-debug`, "debug", settings)];
  });
  const custom = decision.customRuntimes.map((c) => handler(c.base, c.handler, "custom", c.settings));
  return [...shims, ...custom];
}

/**
 * The install directory from kata-deploy's variables alone, as recovery and uninstall need it before
 * (or without) a decision: the same rule as installDir().
 */
export const installDirFromEnv = kataDirFromEnv;

/**
 * The paths kata-deploy leaves for each shim's configuration (the release's own places), as links
 * to the one kata-install writes: kata-runtime, kata-ctl and admins look there, and Kata resolves
 * the link, so config.d/ beside the real file applies.
 */
export function defaultConfigLinks(
  decision: Decision,
  catalog: Catalog,
): Array<{ path: string; target: string; reason?: string }> {
  const base = `${installDir(decision)}/share/defaults/kata-containers`;
  const links: Array<{ path: string; target: string; reason?: string }> = decision.shims.map(({ name }) => ({
    path: `${base}/${catalog.shims.get(name)?.runtime === "rust" ? "runtime-rs/" : ""}configuration-${name}.toml`,
    target: `runtimes/${name}/configuration-${name}.toml`,
  }));
  // The release's default configuration (configuration.toml, what kata-runtime reads without
  // --config) where it has it, linking to the same name, when that shim is installed: through the
  // shim's link, Kata reaches the file kata-install writes and its config.d/.
  const defaults = catalog.release?.defaultConfigs ?? {};
  for (const [runtime, target] of Object.entries(defaults) as Array<["go" | "rust", string]>) {
    const shim = /^configuration-(.+)\.toml$/.exec(target)?.[1];
    if (shim === undefined || target.includes("/")) continue;
    if (
      !decision.shims.some((s) => s.name === shim) ||
      (catalog.shims.get(shim)?.runtime ?? "go") !== runtime
    )
      continue;
    links.push({
      path: `${base}/${runtime === "rust" ? "runtime-rs/" : ""}configuration.toml`,
      target,
      reason: `the release's default configuration, as it links it (${target}): what kata-runtime and Kata's other tools read without --config`,
    });
  }
  return links;
}

/** Under the install directory: programs kata-install writes (not Kata's, so not under bin/, a link). */
export const WRAPPERS_DIR = "kata-install/bin";

/** Where the wrapper of Kata's qemu `binary` goes under the install directory `dir`. */
export function wrapperPath(dir: string, binary: string): string {
  return `${dir}/${WRAPPERS_DIR}/${binary}-installation-prefix`;
}

/** The drop-in holding what kata-install decided for one shim. */
export const DECIDED_DROP_IN = "50-kata-install.toml";
