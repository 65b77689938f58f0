// What every fact source gets: the host, a memo so that a file read or a command run by two sources
// happens once, and the problem log. A source records what it could not learn here instead of
// throwing or guessing.

import type { Stats } from "node:fs";
import { UserError } from "../errors.js";
import { type CommandResult, DEFAULT_TIMEOUT_MS, type RunOptions } from "../host/command.js";
import type { Host, Looked } from "../host/host.js";
import type { ProbeCache } from "./probe-cache.js";
import type { Problem } from "./problems.js";

export interface ReadOptions {
  /** A missing file is itself a problem (it should exist on any Linux node). */
  required?: boolean;
  /** Text that is not valid UTF-8 is a problem, said so (a configuration's). */
  utf8?: boolean;
}

export interface DetectOptions {
  /** How long any one host command may take (a hung hypervisor binary or preflight.d hook). */
  commandTimeoutMs?: number;
  /** Answers of kata-install's own binaries, known from an earlier install. */
  probes?: ProbeCache;
  /** kata-deploy's CONTAINERD_CONFIG_FILE_NAME: containerd reads /etc/containerd/<this>. */
  containerdConfigName?: string;
  /** Where an installed Kata is looked for: /opt/kata, or as INSTALLATION_PREFIX and MULTI_INSTALL_SUFFIX say. */
  kataPrefix?: string;
  /** EXPERIMENTAL_SETUP_SNAPSHOTTER names erofs: look for the mkfs.erofs its differ runs. */
  erofsUtils?: boolean;
  /** EXPERIMENTAL_SETUP_SNAPSHOTTER names nydus: look for the runtime's unit files its unit binds to. */
  runtimeUnits?: boolean;
}

/** Where Kata goes when nothing says otherwise: kata-deploy's place, and the one its release is built for. */
export const DEFAULT_PREFIX = "/opt/kata";

/** kata-deploy's install directory: <INSTALLATION_PREFIX>/opt/kata[-<MULTI_INSTALL_SUFFIX>]. */
export function kataDirFromEnv(env: Readonly<Record<string, string | undefined>>): string {
  const given = env.INSTALLATION_PREFIX?.trim();
  const prefix = given ? `${given.replace(/\/+$/, "")}${DEFAULT_PREFIX}` : DEFAULT_PREFIX;
  const suffix = env.MULTI_INSTALL_SUFFIX?.trim();
  return suffix ? `${prefix}-${suffix}` : prefix;
}

/**
 * What of kata-deploy's environment says where to look (not what to decide): Kata's install
 * directory, and the file name containerd was started with (a plain name in /etc/containerd, as
 * kata-deploy checks it).
 */
export function detectOptionsFromEnv(env: Readonly<Record<string, string | undefined>>): DetectOptions {
  const kataPrefix = kataDirFromEnv(env);
  const asked = (env.EXPERIMENTAL_SETUP_SNAPSHOTTER ?? "").split(",").map((s) => s.trim());
  const looks = {
    kataPrefix,
    ...(asked.includes("erofs") ? { erofsUtils: true } : {}),
    ...(asked.includes("nydus") ? { runtimeUnits: true } : {}),
  };
  const name = env.CONTAINERD_CONFIG_FILE_NAME?.trim();
  if (!name) return looks;
  if (!isPlainFileName(name))
    throw new UserError(
      `CONTAINERD_CONFIG_FILE_NAME: expected a file name in /etc/containerd (no "/"), got "${name}"`,
    );
  return { containerdConfigName: name, ...looks };
}

export function isPlainFileName(name: string): boolean {
  return name !== "." && name !== ".." && !name.includes("/") && !name.includes("\0");
}

export class DetectContext {
  readonly problems: Problem[] = [];
  private readonly memo = new Map<string, Promise<unknown>>();

  readonly commandTimeoutMs: number;
  private readonly probes: ProbeCache | null;
  readonly containerdConfigName: string | null;
  readonly kataPrefix: string;
  readonly erofsUtils: boolean;
  readonly runtimeUnits: boolean;

  constructor(
    readonly host: Host,
    options: DetectOptions = {},
  ) {
    this.commandTimeoutMs = options.commandTimeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.probes = options.probes ?? null;
    this.containerdConfigName = options.containerdConfigName ?? null;
    this.kataPrefix = options.kataPrefix ?? DEFAULT_PREFIX;
    this.erofsUtils = options.erofsUtils === true;
    this.runtimeUnits = options.runtimeUnits === true;
  }

  /** Run `compute` once per key for the whole detection; later callers share its result. */
  once<T>(key: string, compute: () => Promise<T>): Promise<T> {
    let pending = this.memo.get(key) as Promise<T> | undefined;
    if (pending === undefined) {
      pending = compute();
      this.memo.set(key, pending);
    }
    return pending;
  }

  problem(source: string, reason: string, where: { path?: string; command?: string } = {}): void {
    this.problems.push({ source, reason, ...where });
  }

  /** The text of a host file, or null. Failures other than "missing" are always recorded. */
  read(source: string, hostPath: string, options: ReadOptions = {}): Promise<string | null> {
    return this.once(`read${options.utf8 ? "-utf8" : ""}:${hostPath}`, async () => {
      const result = await this.host.readText(hostPath, { utf8: options.utf8 === true });
      if (result.ok) return result.text;
      if (!result.missing || options.required) this.problem(source, result.reason, { path: hostPath });
      return null;
    });
  }

  /** A one-line sysfs/procfs value, trimmed; null when absent or unreadable. */
  async readValue(source: string, hostPath: string, options: ReadOptions = {}): Promise<string | null> {
    const text = await this.read(source, hostPath, options);
    return text === null ? null : text.trim();
  }

  /** Directory entries, sorted; [] when absent (recorded when unreadable). */
  list(source: string, hostPath: string): Promise<string[]> {
    return this.once(`list:${hostPath}`, async () => {
      const result = await this.host.readDir(hostPath);
      if (result.ok) return result.entries;
      if (!result.missing) this.problem(source, result.reason, { path: hostPath });
      return [];
    });
  }

  /** stat() of a host path; null when absent, and any other failure to look recorded. */
  async stat(source: string, hostPath: string): Promise<Stats | null> {
    return this.noted(source, hostPath, await this.host.lookStat(hostPath));
  }

  async exists(source: string, hostPath: string): Promise<boolean> {
    return (await this.stat(source, hostPath)) !== null;
  }

  /** A link's target; null when there is no link there, and any other failure recorded. */
  async readlink(source: string, hostPath: string): Promise<string | null> {
    return this.noted(source, hostPath, await this.host.lookLink(hostPath));
  }

  /** Every file below a directory; [] when absent, and any other failure recorded. */
  async listTree(source: string, hostPath: string): Promise<string[]> {
    return this.noted(source, hostPath, await this.host.lookTree(hostPath)) ?? [];
  }

  private noted<T>(source: string, hostPath: string, looked: Looked<T>): T | null {
    if (looked.ok) return looked.value;
    if (!looked.missing) this.problem(source, looked.reason, { path: hostPath });
    return null;
  }

  /** Run a host command once per detection; failures are recorded against `source`. */
  run(
    source: string,
    command: string,
    args: readonly string[],
    options: RunOptions = {},
  ): Promise<CommandResult> {
    const key = probeKey(command, args);
    return this.once(key, async () => {
      const cache = this.probes?.covers(command, args) && options.input === undefined ? this.probes : null;
      const identity = cache ? await cache.identity(command) : null;
      const known = cache && identity ? cache.get(key, identity) : null;
      if (known) return known;
      const result = await this.host.run(command, args, { timeoutMs: this.commandTimeoutMs, ...options });
      if (cache && identity) cache.set(key, identity, result);
      if (!result.ok) this.problem(source, result.reason, { command: [command, ...args].join(" ") });
      return result;
    });
  }
}

/** The key of a command's answer, in a detection's memo and in the probe cache. */
export function probeKey(command: string, args: readonly string[]): string {
  return `run:${command}\0${args.join("\0")}`;
}
