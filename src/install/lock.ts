// One installer at a time per node: a lock file under the host root naming its owner — pid, pid
// namespace and the process's start time, so that a pid reused by another program, or a holder
// that died (kill -9), is told from a live kata-install. A stale lock is taken over, and said so;
// a live owner makes the second installer stop with a clear message; an owner this process cannot
// see (another pid namespace: a container, or the host seen from one) is refused with the exact
// command that clears it, rather than guessed at.
import fs from "node:fs";
import path from "node:path";
import { UserError } from "../errors.js";
import type { Host } from "../host/host.js";
import { ensureParents, removeEmptyDirs } from "./fs-ops.js";

export const LOCK_PATH = "/run/lock/kata-install.lock";

export interface Lock {
  release(): Promise<void>;
  /** The lock this one replaced, and why it was stale. */
  tookOver?: { pid: number; why: string };
}

interface Owner {
  pid: number;
  /** "pid:[4026531836]"; absent in locks written before it was recorded. */
  ns?: string;
  /** Field 22 of /proc/<pid>/stat: with pid and namespace, one process and no other. */
  start?: string;
}

/** This process, as a lock names it. */
function me(): Owner {
  return { pid: process.pid, ns: pidNamespace(), start: startTime(process.pid) };
}

function pidNamespace(): string | undefined {
  try {
    return fs.readlinkSync("/proc/self/ns/pid");
  } catch {
    return undefined;
  }
}

function startTime(pid: number): string | undefined {
  try {
    // The command name (field 2) may hold spaces and parentheses: count from the last ")".
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

function format(owner: Owner): string {
  return `${owner.pid}\n${owner.ns ?? ""}\n${owner.start ?? ""}\n`;
}

function readOwner(file: string): Owner | null {
  try {
    const [pid, ns, start] = fs.readFileSync(file, "utf8").split("\n");
    const n = Number(pid?.trim());
    if (!Number.isInteger(n) || n <= 0) return null;
    return { pid: n, ...(ns ? { ns } : {}), ...(start ? { start } : {}) };
  } catch {
    return null;
  }
}

type Verdict = { kind: "live" } | { kind: "stale"; why: string } | { kind: "unknown"; why: string };

/** Is the lock's owner a kata-install that still runs? */
function judge(owner: Owner): Verdict {
  const here = pidNamespace();
  if (owner.ns !== undefined && here !== undefined && owner.ns !== here)
    return {
      kind: "unknown",
      why: `it was taken in another pid namespace (${owner.ns}; this one is ${here})`,
    };
  const start = startTime(owner.pid);
  if (start === undefined) return { kind: "stale", why: `pid ${owner.pid} is gone` };
  if (owner.start !== undefined)
    return owner.start === start
      ? { kind: "live" }
      : { kind: "stale", why: `pid ${owner.pid} is now another process (it started later than the lock)` };
  // A lock without a start time (an older kata-install): alive only if it is a kata-install.
  let cmdline = "";
  try {
    cmdline = fs.readFileSync(`/proc/${owner.pid}/cmdline`, "utf8");
  } catch {
    return { kind: "stale", why: `pid ${owner.pid} is gone` };
  }
  return /kata-install|cli\.js/.test(cmdline)
    ? { kind: "live" }
    : { kind: "stale", why: `pid ${owner.pid} is not a kata-install (${cmdline.split("\0")[0] || "?"})` };
}

export async function acquireLock(host: Host): Promise<Lock> {
  // /run/lock exists on every node; a bare test tree may lack it: what we create, we remove.
  const createdDirs = await ensureParents(host, LOCK_PATH);
  const file = await host.resolve(LOCK_PATH);
  const self = me();
  removeUnlinkedTemps(file);
  let tookOver: Lock["tookOver"];
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      // Born whole: the content is written beside it, then hard-linked to the lock's name (which
      // fails if the lock exists). A lock created empty and filled after could be read, in between,
      // as naming no process, and taken over by a second installer.
      const temp = `${file}.${self.pid}`;
      fs.writeFileSync(temp, format(self), { mode: 0o644 });
      try {
        fs.linkSync(temp, file);
      } finally {
        fs.rmSync(temp, { force: true });
      }
      return {
        ...(tookOver ? { tookOver } : {}),
        release: async () => {
          // Only our own lock: a takeover by someone else must not be undone.
          if (readOwner(file)?.pid === self.pid && readOwner(file)?.start === self.start)
            fs.rmSync(file, { force: true });
          await removeEmptyDirs(host, createdDirs);
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const owner = readOwner(file);
      if (owner !== null) {
        const verdict = judge(owner);
        if (verdict.kind === "live")
          throw new UserError(
            `another kata-install (pid ${owner.pid}) is installing on this node: it holds ${LOCK_PATH}; try again when it has finished`,
          );
        if (verdict.kind === "unknown")
          throw new UserError(
            `${LOCK_PATH} is held by pid ${owner.pid}, but ${verdict.why}, where this kata-install cannot see whether it still runs. If no kata-install is running on this node, remove the lock: rm ${file}`,
          );
        tookOver = { pid: owner.pid, why: verdict.why };
      } else tookOver = { pid: 0, why: "the lock names no process" };
      fs.rmSync(file, { force: true });
    }
  }
  throw new UserError(`cannot take ${LOCK_PATH}: another kata-install took it at the same moment; try again`);
}

/** Lock contents a killed installer wrote but never linked to the lock's name (lock.<pid>). */
function removeUnlinkedTemps(file: string): void {
  const dir = path.dirname(file);
  const prefix = `${path.basename(file)}.`;
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(name.slice(prefix.length));
    if (!name.startsWith(prefix) || !Number.isInteger(pid) || pid === process.pid) continue;
    if (startTime(pid) === undefined) fs.rmSync(path.join(dir, name), { force: true });
  }
}
