// Where an install puts things on the node: Kata's release layout under the prefix, one directory
// per shim so that each has its own config.d/.
import type { Catalog } from "../decide/catalog.js";
import type { Decision } from "../decide/decision.js";
import { kataDirFromEnv } from "../detect/context.js";

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

/** A runtime handler of the install: one per shim, and with DEBUG a -debug one beside it. */
export interface Handler {
  shim: string;
  name: string;
  /** kata-deploy's -debug variant: the same shim with guest debug on, its own configuration. */
  debug: boolean;
  runtimeType: string;
  runtimePath: string;
  configPath: string;
  snapshotter?: string;
  pullImage: boolean;
}

/**
 * Where a debug handler's configuration lives, as kata-deploy puts its variants:
 * custom-runtimes/<handler>/configuration-<shim>.toml, with a config.d/ of its own.
 */
export function debugConfigDir(decision: Decision, shim: string): string {
  return `${installDir(decision)}/share/defaults/kata-containers/custom-runtimes/${handlerName(decision, shim)}-debug`;
}

export function handlersFor(decision: Decision, catalog: Catalog): Handler[] {
  return decision.shims.flatMap(({ name }) => {
    const runtime = catalog.shims.get(name)?.runtime ?? "go";
    const handler = handlerName(decision, name);
    const common = {
      shim: name,
      runtimePath: shimBinary(decision, runtime),
      snapshotter: decision.handlers[name]?.snapshotter?.value,
      pullImage: decision.handlers[name]?.pullType?.value === "guest-pull",
    };
    const normal: Handler = {
      ...common,
      name: handler,
      debug: false,
      runtimeType: `io.containerd.${handler}.v2`,
      configPath: shimConfigPath(decision, name, runtime),
    };
    if (!decision.install.debug.value) return [normal];
    // The variant pulls images as its shim does: it shares the shim's shared_fs (kata-deploy too).
    const debug: Handler = {
      ...common,
      name: `${handler}-debug`,
      debug: true,
      runtimeType: `io.containerd.${handler}-debug.v2`,
      configPath: `${debugConfigDir(decision, name)}/configuration-${name}.toml`,
    };
    return [normal, debug];
  });
}

/**
 * The install directory from kata-deploy's variables alone, as recovery and uninstall need it before
 * (or without) a decision: the same rule as installDir().
 */
export function installDirFromEnv(env: Readonly<Record<string, string | undefined>>): string {
  return kataDirFromEnv(env);
}

/**
 * The paths kata-deploy leaves for each shim's configuration (the release's own places), as links
 * to the one kata-install writes: kata-runtime, kata-ctl and admins look there, and Kata resolves
 * the link, so config.d/ beside the real file applies.
 */
export function defaultConfigLinks(
  decision: Decision,
  catalog: Catalog,
): Array<{ path: string; target: string }> {
  const base = `${installDir(decision)}/share/defaults/kata-containers`;
  return decision.shims.map(({ name }) => ({
    path: `${base}/${catalog.shims.get(name)?.runtime === "rust" ? "runtime-rs/" : ""}configuration-${name}.toml`,
    target: `runtimes/${name}/configuration-${name}.toml`,
  }));
}

/** Under the install directory: programs kata-install writes (not Kata's, so not under bin/, a link). */
export const WRAPPERS_DIR = "kata-install/bin";

/** The drop-in holding what kata-install decided for one shim. */
export const DECIDED_DROP_IN = "50-kata-install.toml";
