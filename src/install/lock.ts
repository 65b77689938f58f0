// One installer at a time per node: a lock file under the host root holding the owner's pid. A lock
// left by a process that died (kill -9) is taken over; a live owner makes the second installer
// stop with a clear message instead of interleaving writes.
import fs from "node:fs";
import { UserError } from "../errors.js";
import type { Host } from "../host/host.js";
import { ensureParents, removeEmptyDirs } from "./fs-ops.js";

export const LOCK_PATH = "/run/lock/kata-install.lock";

export interface Lock {
  release(): Promise<void>;
  /** The pid of a dead owner whose lock this one replaced, if any. */
  tookOverFrom?: number;
}

export async function acquireLock(host: Host): Promise<Lock> {
  // /run/lock exists on every node; a bare test tree may lack it: what we create, we remove.
  const createdDirs = await ensureParents(host, LOCK_PATH);
  const file = await host.resolve(LOCK_PATH);
  let tookOverFrom: number | undefined;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = fs.openSync(file, "wx", 0o644);
      fs.writeSync(fd, `${process.pid}\n`);
      fs.fsyncSync(fd);
      fs.closeSync(fd);
      return {
        tookOverFrom,
        release: async () => {
          // Only our own lock: a takeover by someone else must not be undone.
          if (readOwner(file) === process.pid) fs.rmSync(file, { force: true });
          await removeEmptyDirs(host, createdDirs);
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const owner = readOwner(file);
      if (owner !== null && owner !== process.pid && alive(owner)) {
        throw new UserError(
          `another kata-install (pid ${owner}) is installing on this node: it holds ${LOCK_PATH}; try again when it has finished`,
        );
      }
      tookOverFrom = owner ?? undefined;
      fs.rmSync(file, { force: true });
    }
  }
  throw new UserError(`cannot take ${LOCK_PATH}: another kata-install took it at the same moment; try again`);
}

function readOwner(file: string): number | null {
  try {
    const pid = Number(fs.readFileSync(file, "utf8").trim());
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
