// One installer at a time per node: a lock file under the host root, held open by the kata-install
// that took it for as long as it runs. Its content names the holder (pid, pid namespace, start
// time), but what makes it held is the file itself, open in that process (/proc/<pid>/fd): a forged
// lock naming a live pid — pid 1, with its real start time — names a process that does not hold it,
// and is taken over, said so. A holder that died (kill -9) holds nothing either. An owner this
// process cannot see (another pid namespace: a container, or the host seen from one) is refused with
// the exact command that clears it, rather than guessed at.
//
// The lock's directory (/run/lock) is world-writable on Debian and Ubuntu: nothing there is opened
// through a link or waited on. The temp name is made with O_EXCL under an unguessable name; a link,
// FIFO or device at the lock's name is not a lock kata-install made, and is taken over (its name
// removed, never what it points at); a directory there (anyone may make one, with files inside that
// only its maker can remove) is renamed aside whole, its contents untouched; the lock is read only
// as a regular file, a few bytes at most.
import fs from "node:fs";
import path from "node:path";
import { hostError, UserError } from "../errors.js";
import { ensureParents, removeEmptyDirs } from "../host/fs-ops.js";
import type { Host } from "../host/host.js";
import { createExclusive, describeEntry, namesIn, readNoFollow, tempName } from "../host/own-place.js";

export const LOCK_PATH = "/run/lock/kata-install.lock";

/** A lock is three short lines: anything longer is not one kata-install wrote. */
const MAX_LOCK_BYTES = 256;

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

function parseOwner(text: string): Owner | null {
  const [pid, ns, start] = text.split("\n");
  const n = Number(pid?.trim());
  if (!Number.isInteger(n) || n <= 0) return null;
  return { pid: n, ...(ns ? { ns } : {}), ...(start ? { start } : {}) };
}

/**
 * Whether process `pid` has the file `st` (the lock) open: one of its descriptors is that inode.
 * A process whose descriptors this one may not look at holds nothing it can see: a kata-install
 * that took the lock runs as the lock file's owner, as this one does (checked before), and its
 * open files are this user's to look at.
 */
function holds(pid: number, st: fs.Stats): boolean {
  try {
    for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
      const open = fs.statSync(`/proc/${pid}/fd/${fd}`, { throwIfNoEntry: false });
      if (open !== undefined && open.ino === st.ino && open.dev === st.dev) return true;
    }
  } catch {
    // gone meanwhile, or not ours to look at (EACCES): it does not hold our lock
  }
  return false;
}

function commandOf(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0] || "?";
  } catch {
    return "?";
  }
}

type Verdict = { kind: "live" } | { kind: "stale"; why: string } | { kind: "unknown"; why: string };

/** Is the lock at `st`, naming `owner`, held by a kata-install that still runs? */
function judge(owner: Owner, st: fs.Stats): Verdict {
  const here = pidNamespace();
  if (owner.ns !== undefined && here !== undefined && owner.ns !== here)
    return {
      kind: "unknown",
      why: `it was taken in another pid namespace (${owner.ns}; this one is ${here})`,
    };
  const start = startTime(owner.pid);
  if (start === undefined) return { kind: "stale", why: `pid ${owner.pid} is gone` };
  if (owner.start !== undefined && owner.start !== start)
    return { kind: "stale", why: `pid ${owner.pid} is now another process (it started later than the lock)` };
  return holds(owner.pid, st)
    ? { kind: "live" }
    : {
        kind: "stale",
        why: `pid ${owner.pid} (${commandOf(owner.pid)}) runs but does not hold the lock open: it is not the kata-install that took it`,
      };
}

/** Where a directory found at the lock's name goes: beside it, under a name nothing else has. */
function asideOf(file: string): string {
  return path.join(path.dirname(file), tempName(`${path.basename(file)}.aside-`));
}

/** What stands at the lock's name, judged: a lock of ours, or something to take over (and why). */
function inspect(
  file: string,
): { owner: Owner | null; verdict: Verdict; ino: number; aside?: string } | null {
  const st = fs.lstatSync(file, { throwIfNoEntry: false });
  if (st === undefined) return null;
  if (st.isDirectory()) {
    const aside = asideOf(file);
    return {
      owner: null,
      verdict: {
        kind: "stale",
        why: `it was a directory, not a lock kata-install makes (moved aside whole to ${path.join(LOCK_PATH, "..", path.basename(aside))})`,
      },
      ino: st.ino,
      aside,
    };
  }
  if (!st.isFile())
    return {
      owner: null,
      verdict: { kind: "stale", why: `it was ${describeEntry(st, file)}, not a lock kata-install makes` },
      ino: st.ino,
    };
  const uid = process.geteuid?.() ?? 0;
  if (st.uid !== uid)
    return {
      owner: null,
      verdict: {
        kind: "stale",
        why: `it belonged to uid ${st.uid}, not to kata-install's user (uid ${uid})`,
      },
      ino: st.ino,
    };
  let owner: Owner | null = null;
  try {
    owner = parseOwner(readNoFollow(file, LOCK_PATH, MAX_LOCK_BYTES)?.toString("utf8") ?? "");
  } catch {
    owner = null; // larger than a lock, or replaced meanwhile: it names no process of ours
  }
  if (owner === null)
    return { owner, verdict: { kind: "stale", why: "the lock names no process" }, ino: st.ino };
  return { owner, verdict: judge(owner, st), ino: st.ino };
}

/**
 * Remove the name at `file` if it is still the entry judged (a link goes, never what it points at);
 * a directory is renamed to `aside`, never walked.
 */
function removeIfSame(file: string, ino: number, aside?: string): void {
  const st = fs.lstatSync(file, { throwIfNoEntry: false });
  if (st === undefined || st.ino !== ino) return;
  if (st.isDirectory()) {
    if (aside !== undefined) fs.renameSync(file, aside);
  } else fs.rmSync(file, { force: true });
}

export async function acquireLock(host: Host): Promise<Lock> {
  // /run/lock exists on every node; a bare test tree may lack it: what we create, we remove.
  const createdDirs = await ensureParents(host, LOCK_PATH);
  const file = await host.resolveLink(LOCK_PATH);
  const self = me();
  removeUnlinkedTemps(file);
  let tookOver: Lock["tookOver"];
  for (let attempt = 0; attempt < 3; attempt++) {
    // Born whole: the content is written beside it, then hard-linked to the lock's name (which
    // fails if the lock exists). A lock created empty and filled after could be read, in between,
    // as naming no process, and taken over by a second installer. The temp's descriptor stays
    // open for the whole run: it is the lock's inode, what makes this process its holder.
    const temp = path.join(path.dirname(file), tempName(`${path.basename(file)}.`));
    let fd = -1;
    try {
      // No fsync: /run is a tmpfs, and a lock is of no use after a reboot anyway.
      fd = createExclusive(temp, 0o644);
      fs.writeFileSync(fd, format(self));
    } catch (error) {
      // Only a temp this run made goes: a name planted there (O_EXCL failed on it) is left.
      if (fd >= 0) {
        fs.closeSync(fd);
        fs.rmSync(temp, { force: true });
      }
      throw hostError(`cannot take ${LOCK_PATH}`, error);
    }
    try {
      fs.linkSync(temp, file);
    } catch (error) {
      fs.closeSync(fd);
      fs.rmSync(temp, { force: true });
      if ((error as NodeJS.ErrnoException).code !== "EEXIST")
        throw hostError(`cannot take ${LOCK_PATH}`, error);
      const found = inspect(file);
      if (found === null) continue; // released meanwhile
      const { owner, verdict } = found;
      if (verdict.kind === "live")
        throw new UserError(
          `another kata-install (pid ${owner?.pid}) is installing on this node: it holds ${LOCK_PATH}; try again when it has finished`,
        );
      if (verdict.kind === "unknown")
        throw new UserError(
          `${LOCK_PATH} is held by pid ${owner?.pid}, but ${verdict.why}, where this kata-install cannot see whether it still runs. If no kata-install is running on this node, remove the lock: rm ${file}`,
        );
      tookOver = { pid: owner?.pid ?? 0, why: verdict.why };
      try {
        removeIfSame(file, found.ino, found.aside);
      } catch (error) {
        throw hostError(`cannot take ${LOCK_PATH}: ${verdict.why.replace(/ \(moved aside.*\)$/, "")}`, error);
      }
      continue;
    }
    fs.rmSync(temp, { force: true });
    const mine = fs.fstatSync(fd).ino;
    return {
      ...(tookOver ? { tookOver } : {}),
      release: async () => {
        // Only our own lock: a takeover by someone else must not be undone.
        removeIfSame(file, mine);
        fs.closeSync(fd);
        await removeEmptyDirs(host, createdDirs);
      },
    };
  }
  throw new UserError(`cannot take ${LOCK_PATH}: another kata-install took it at the same moment; try again`);
}

/** Lock contents a killed installer wrote but never linked to the lock's name (lock.<pid>-…). */
function removeUnlinkedTemps(file: string): void {
  const dir = path.dirname(file);
  const prefix = `${path.basename(file)}.`;
  for (const name of namesIn(dir)) {
    const pid = Number(/^(\d+)(-[0-9a-f]+)?$/.exec(name.slice(prefix.length))?.[1]);
    if (!name.startsWith(prefix) || !Number.isInteger(pid) || pid === process.pid) continue;
    // The name only (unlink never follows): whatever it is, it is not the lock.
    if (startTime(pid) === undefined)
      try {
        fs.unlinkSync(path.join(dir, name));
      } catch {
        // a directory of that name, or gone already: not ours to remove
      }
  }
}
