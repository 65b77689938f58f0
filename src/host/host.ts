// The one place that knows how the node is reached. Every path a detector or installer uses is a
// path *on the host* ("/proc/cpuinfo"); the Host maps it under its root, so the same code reads the
// real node (root "/"), the node mounted in the kata-deploy container ("/host"), or a test host.
//
// File access is synchronous behind an async interface: detection makes hundreds of tiny procfs
// and sysfs reads, which cost more as thread-pool round trips than as I/O (measured in bench/),
// while host commands, the slow part, still run concurrently. The interface stays async so that a
// Host reached some other way needs no change in its callers.
import { isUtf8 } from "node:buffer";
import type { Stats } from "node:fs";
import fs from "node:fs";
import path from "node:path";
import { must } from "../at.js";
import { HostError } from "../errors.js";
import { fileTree } from "../file-tree.js";
import {
  type CommandResult,
  DEFAULT_TIMEOUT_MS,
  type RunOptions,
  runCommand,
  type StrategyName,
} from "./command.js";

export type ReadResult = { ok: true; text: string } | { ok: false; missing: boolean; reason: string };
export type DirResult = { ok: true; entries: string[] } | { ok: false; missing: boolean; reason: string };
/** What a look at the host found, or why not: `missing` tells absence from a failure to look. */
export type Looked<T> = { ok: true; value: T } | { ok: false; missing: boolean; reason: string };

/** Directories searched for host commands, in the order a login shell's PATH would have them. */
export const HOST_PATH = ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"];

const MAX_LINKS = 40;

export interface HostOptions {
  root?: string;
  /** How commands run; by default direct on "/" and root-exec anywhere else. */
  strategy?: StrategyName;
  /**
   * The host paths mounted under the root (a pod's narrow hostPath mounts, HOST_MOUNTS); unset: the
   * whole host is. A path outside them is not looked at: unknown, never absent.
   */
  mounts?: readonly string[];
}

/**
 * A host path outside the pod's mounts: what is there cannot be known from here, and nothing is
 * written there (said as the path and what to do, not as a system error).
 */
export class NotMountedError extends HostError {
  readonly code = "ENOTMOUNTED";
  constructor(readonly hostPath: string) {
    super(
      `${hostPath} is not mounted in this pod (HOST_MOUNTS): mount it in the DaemonSet (a hostPath under /host), then run kata-install again`,
    );
  }
}

export class Host {
  readonly root: string;
  readonly strategy: StrategyName;
  readonly mounts: readonly string[] | null;
  private readonly dirCache = new Map<string, string>();

  constructor(options: HostOptions = {}) {
    this.root = path.resolve(options.root ?? "/");
    this.strategy = options.strategy ?? (this.root === "/" ? "direct" : "root-exec");
    // "/etc/crio/" is the mount "/etc/crio": compared without a trailing "/".
    this.mounts =
      options.mounts === undefined
        ? null
        : options.mounts.map((m) => normaliseHostPath(m).replace(/(.)\/+$/, "$1"));
  }

  /** Where a host path lives on this machine, with symlinks inside the host resolved against the host root. */
  async resolve(hostPath: string): Promise<string> {
    return this.resolveSync(hostPath);
  }

  /**
   * resolve(), for the few callers that cannot wait (reading the node's overrides file while the
   * inputs are checked): the same answer.
   */
  resolveSync(hostPath: string): string {
    const resolved = this.resolveInRoot(hostPath);
    if (this.mounts !== null) {
      // Where links led, not the name asked for: a link in a mount may point outside them all.
      const there = this.hostPathOf(resolved) ?? normaliseHostPath(hostPath);
      if (!this.mounts.some((m) => m === "/" || there === m || there.startsWith(`${m}/`)))
        throw new NotMountedError(there === normaliseHostPath(hostPath) ? there : `${hostPath} (${there})`);
    }
    return resolved;
  }

  private resolveInRoot(hostPath: string): string {
    const clean = normaliseHostPath(hostPath);
    if (this.root === "/") return clean;
    // Fast path: the kernel resolves the path; if it stays under the root no link left the host.
    // Detection asks after many paths a node does not have: a stat that answers "none" costs
    // little, a failed realpath an Error with its stack (measured: bench/startup-snapshot.ts).
    const full = path.join(this.root, clean);
    let real: string | undefined;
    try {
      if (fs.statSync(full, { throwIfNoEntry: false }) !== undefined) real = fs.realpathSync.native(full);
    } catch {
      real = undefined;
    }
    if (real !== undefined) {
      if (this.contains(real)) return real;
    } else {
      // Missing: fine if its directory resolves inside the root and the name itself is no link
      // (a dangling absolute link may well exist inside the host).
      const parent = this.realParent(path.posix.dirname(clean));
      if (parent !== null && !isLink(path.join(parent, path.posix.basename(clean)))) {
        return path.join(parent, path.posix.basename(clean));
      }
    }
    return this.walk(clean);
  }

  /**
   * The host path of a path resolve() gave (it is always under the root as given): what the node
   * itself calls that file; null for a path outside the root.
   */
  hostPathOf(resolved: string): string | null {
    if (this.root === "/") return resolved;
    return this.contains(resolved) ? `/${path.relative(this.root, resolved)}` : null;
  }

  private contains(real: string): boolean {
    return real === this.root || real.startsWith(`${this.root}${path.sep}`);
  }

  private realParent(dir: string): string | null {
    let cached = this.dirCache.get(dir);
    if (cached === undefined) {
      const full = path.join(this.root, dir);
      try {
        const there = fs.statSync(full, { throwIfNoEntry: false }) !== undefined;
        const real = there ? fs.realpathSync.native(full) : "";
        cached = this.contains(real) ? real : "";
      } catch {
        cached = "";
      }
      this.dirCache.set(dir, cached);
    }
    return cached === "" ? null : cached;
  }

  /** Component by component, re-rooting absolute link targets: a link to "/usr/lib/x" means the host's. */
  private walk(clean: string): string {
    // The parts of normalised paths (no "", ".", ".."), so joined by hand: path.join is the cost.
    const parts = clean.split("/").filter(Boolean);
    let current = "/";
    let hops = 0;
    while (parts.length > 0) {
      const part = must(parts.shift(), "the next part");
      const next = current === "/" ? `/${part}` : `${current}/${part}`;
      const full = this.root + next;
      // Not there: nothing below it is either, so no link is left to follow (the read that
      // follows reports it missing). Otherwise not a link (or not to be looked at): go on.
      let target: string | null = null;
      try {
        const stats = fs.lstatSync(full, { throwIfNoEntry: false });
        if (stats === undefined) return parts.length === 0 ? full : `${full}/${parts.join("/")}`;
        if (stats.isSymbolicLink()) target = fs.readlinkSync(full);
      } catch {
        target = null;
      }
      if (target === null) {
        current = next;
        continue;
      }
      if (++hops > MAX_LINKS)
        throw Object.assign(new Error(`too many symbolic links at ${next}`), { code: "ELOOP" });
      const base = target.startsWith("/") ? "/" : current;
      parts.unshift(...normaliseHostPath(path.posix.join(base, target)).split("/").filter(Boolean));
      current = "/";
    }
    return current === "/" ? this.root : this.root + current;
  }

  /**
   * A host file's text. `utf8`: text that is not valid UTF-8 is a failure, said so, rather than
   * read with replacement characters (a configuration edited from such a text would not be the
   * admin's bytes any more).
   */
  async readText(hostPath: string, options: { maxBytes?: number; utf8?: boolean } = {}): Promise<ReadResult> {
    const maxBytes = options.maxBytes ?? MAX_TEXT_BYTES;
    try {
      const file = await this.resolve(hostPath);
      // procfs and sysfs report sizes of 0 or 4096 whatever they hold; readFile then reads to EOF
      // in moderate chunks (a single huge read makes sysctl handlers fail with ENOMEM).
      const stats = fs.statSync(file, { throwIfNoEntry: false });
      if (stats === undefined) return NO_SUCH_PATH;
      // By type before it is opened: a FIFO or a device would block the read (and us) forever.
      const odd = notRegular(stats);
      if (odd !== null) return { ok: false, missing: false, reason: odd };
      if (stats.isFile() && stats.size > maxBytes)
        return { ok: false, missing: false, reason: tooLarge(maxBytes) };
      const bytes = fs.readFileSync(file);
      if (bytes.length > maxBytes) return { ok: false, missing: false, reason: tooLarge(maxBytes) };
      if (options.utf8 && !isUtf8(bytes)) return { ok: false, missing: false, reason: NOT_UTF8 };
      return { ok: true, text: bytes.toString("utf8") };
    } catch (error) {
      return failure(error);
    }
  }

  async readBytes(
    hostPath: string,
  ): Promise<{ ok: true; bytes: Buffer } | { ok: false; missing: boolean; reason: string }> {
    try {
      const file = await this.resolve(hostPath);
      const stats = fs.statSync(file);
      const odd = notRegular(stats);
      if (odd !== null) return { ok: false, missing: false, reason: odd };
      if (stats.size > MAX_TEXT_BYTES) return { ok: false, missing: false, reason: tooLarge(MAX_TEXT_BYTES) };
      return { ok: true, bytes: fs.readFileSync(file) };
    } catch (error) {
      return failure(error);
    }
  }

  async readDir(hostPath: string): Promise<DirResult> {
    try {
      const entries = fs.readdirSync(await this.resolve(hostPath));
      return { ok: true, entries: entries.sort() };
    } catch (error) {
      return failure(error);
    }
  }

  /** Every file below a host directory, as paths relative to it, or why not. */
  async lookTree(hostPath: string): Promise<Looked<string[]>> {
    try {
      return { ok: true, value: fileTree(await this.resolve(hostPath)).map((e) => e.path) };
    } catch (error) {
      return failure(error);
    }
  }

  /** Every file below a host directory, as paths relative to it; [] when it cannot be listed. */
  async listTree(hostPath: string): Promise<string[]> {
    const looked = await this.lookTree(hostPath);
    return looked.ok ? looked.value : [];
  }

  /** stat() following links inside the host, or why not. */
  async lookStat(hostPath: string): Promise<Looked<Stats>> {
    try {
      const stats = fs.statSync(await this.resolve(hostPath), { throwIfNoEntry: false });
      return stats === undefined ? NO_SUCH_PATH : { ok: true, value: stats };
    } catch (error) {
      return failure(error);
    }
  }

  /** stat() following links inside the host; null when the path does not exist (or cannot be looked at). */
  async stat(hostPath: string): Promise<Stats | null> {
    const looked = await this.lookStat(hostPath);
    return looked.ok ? looked.value : null;
  }

  async exists(hostPath: string): Promise<boolean> {
    return (await this.stat(hostPath)) !== null;
  }

  /**
   * Where a host path lives with its last component not followed: for operating on a link itself
   * (reading, replacing or removing it) rather than on what it points to.
   */
  async resolveLink(hostPath: string): Promise<string> {
    const clean = normaliseHostPath(hostPath);
    return path.join(await this.resolve(path.posix.dirname(clean)), path.posix.basename(clean));
  }

  /** The target of a symbolic link, as written on the host, or why not (not a link: missing). */
  async lookLink(hostPath: string): Promise<Looked<string>> {
    try {
      const clean = normaliseHostPath(hostPath);
      const parent = await this.resolve(path.posix.dirname(clean));
      return { ok: true, value: fs.readlinkSync(path.join(parent, path.posix.basename(clean))) };
    } catch (error) {
      // A path that is there but no link has no target: as absent a link as a missing path.
      if ((error as NodeJS.ErrnoException).code === "EINVAL")
        return { ok: false, missing: true, reason: "not a symbolic link" };
      return failure(error);
    }
  }

  /** The target of a symbolic link, as written on the host; null when it is not a link. */
  async readlink(hostPath: string): Promise<string | null> {
    const looked = await this.lookLink(hostPath);
    return looked.ok ? looked.value : null;
  }

  /** The host path of an executable file named `name` in the host's PATH (or in `dirs`), or null. */
  async which(name: string, dirs: readonly string[] = HOST_PATH): Promise<string | null> {
    for (const dir of dirs) {
      const candidate = path.posix.join(dir, name);
      const stats = await this.stat(candidate);
      if (stats?.isFile() && (stats.mode & 0o111) !== 0) return candidate;
    }
    return null;
  }

  /** Run a command on the host. `command` is a host path, or a name looked up in the host's PATH. */
  async run(command: string, args: readonly string[] = [], options: RunOptions = {}): Promise<CommandResult> {
    let file = command;
    if (this.strategy === "root-exec" && !command.startsWith("/")) {
      const found = await this.which(command);
      if (found === null) return notFound(command, this.root);
      file = found;
    }
    if (this.strategy === "root-exec") {
      // What runs is the file inside the root, its links followed inside it: an absolute link
      // must not run the file of that name on the machine running kata-install.
      let real: string;
      try {
        real = this.resolveSync(file);
      } catch (error) {
        return notRunnable(file, (error as Error).message);
      }
      return runCommand("root-exec", this.root, this.hostPathOf(real) ?? file, args, {
        timeoutMs: DEFAULT_TIMEOUT_MS,
        ...options,
      });
    }
    return runCommand(this.strategy, this.root, file, args, { timeoutMs: DEFAULT_TIMEOUT_MS, ...options });
  }

  /** Render a host path for messages: always the path as the admin knows it on the node. */
  display(hostPath: string): string {
    return normaliseHostPath(hostPath);
  }
}

/** The most kata-install reads of a host's text file: configurations are kilobytes. */
export const MAX_TEXT_BYTES = 4 * 1024 * 1024;

export const NOT_UTF8 = "is not valid UTF-8 text";

export function tooLarge(maxBytes: number): string {
  return `is larger than ${maxBytes} bytes`;
}

export function normaliseHostPath(hostPath: string): string {
  // normalize() of an absolute path cannot climb above "/": "../../etc" stays inside the host.
  return path.posix.normalize(`/${hostPath}`);
}

/** Why a file that is there cannot be read as a file's text (null: it can, or it is a directory, whose read says so). */
export function notRegular(stats: Stats): string | null {
  if (stats.isFile() || stats.isDirectory()) return null;
  if (stats.isFIFO()) return "is a FIFO, not a regular file";
  if (stats.isSocket()) return "is a socket, not a regular file";
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return "is a device, not a regular file";
  return "is not a regular file";
}

function isLink(file: string): boolean {
  try {
    return fs.lstatSync(file, { throwIfNoEntry: false })?.isSymbolicLink() ?? false;
  } catch {
    return false;
  }
}

/** What failure() says of ENOENT, for the looks that learn it without an exception. */
const NO_SUCH_PATH = { ok: false, missing: true, reason: "does not exist" } as const;

/** A failure to look at or read a file, as words (never a bare errno code). */
export function failure(error: unknown): { ok: false; missing: boolean; reason: string } {
  const code = (error as NodeJS.ErrnoException)?.code;
  switch (code) {
    case "ENOENT":
    case "ENOTDIR":
      return { ok: false, missing: true, reason: "does not exist" };
    case "EACCES":
    case "EPERM":
      return { ok: false, missing: false, reason: "permission denied" };
    case "EISDIR":
      return { ok: false, missing: false, reason: "is a directory" };
    case "ELOOP":
      return { ok: false, missing: false, reason: "too many symbolic links" };
    case "ENOTMOUNTED":
      return { ok: false, missing: false, reason: "is not mounted in this pod (HOST_MOUNTS): unknown" };
    default:
      return { ok: false, missing: false, reason: (error as Error)?.message ?? String(error) };
  }
}

function notRunnable(command: string, why: string): CommandResult {
  return { ok: false, exitCode: null, stdout: "", stderr: "", timedOut: false, reason: `${command}: ${why}` };
}

function notFound(command: string, root: string): CommandResult {
  return {
    ok: false,
    exitCode: null,
    stdout: "",
    stderr: "",
    timedOut: false,
    reason: `${command}: not found in the PATH of the host at ${root}`,
  };
}
