// Where an install puts things on the node: Kata's release layout under the prefix, one directory
// per shim so that each has its own config.d/.
import { DEFAULT_PREFIX } from "../decide/decide.js";
import type { Decision } from "../decide/decision.js";

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
 * The install directory from kata-deploy's variables alone, as recovery and uninstall need it before
 * (or without) a decision: the same rule as installDir().
 */
export function installDirFromEnv(env: Readonly<Record<string, string | undefined>>): string {
  const given = env.INSTALLATION_PREFIX?.trim();
  const prefix = given ? `${given.replace(/\/+$/, "")}/opt/kata` : DEFAULT_PREFIX;
  const suffix = env.MULTI_INSTALL_SUFFIX?.trim();
  return suffix ? `${prefix}-${suffix}` : prefix;
}

/** The drop-in holding what kata-install decided for one shim. */
export const DECIDED_DROP_IN = "50-kata-install.toml";
