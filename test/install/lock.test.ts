import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { acquireLock, LOCK_PATH } from "../../src/install/lock.js";
import { nestedVmWithoutVmx } from "../helpers/nodes.js";
import { buildHost, removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);

/** A lock as a running kata-install writes it: pid, pid namespace, start time. */
function lockOf(pid: number): string {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  const start = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  return `${pid}\n${fs.readlinkSync("/proc/self/ns/pid")}\n${start}\n`;
}

describe("the node lock", () => {
  it("keeps a second installer out while the first one lives, with a clear message", async () => {
    const host = buildHost(nestedVmWithoutVmx());
    const holder = spawn("sleep", ["30"]);
    try {
      host.write(LOCK_PATH, lockOf(holder.pid as number));
      await expect(acquireLock(host.host)).rejects.toThrow(
        `another kata-install (pid ${holder.pid}) is installing on this node: it holds ${LOCK_PATH}; try again when it has finished`,
      );
      expect(fs.readFileSync(path.join(host.root, LOCK_PATH), "utf8")).toBe(lockOf(holder.pid as number));
    } finally {
      holder.kill("SIGKILL");
    }
  });

  it("takes over a lock whose owner died, says why, and releases only its own", async () => {
    const host = buildHost(nestedVmWithoutVmx());
    const dead = Number(spawnSync("sh", ["-c", "echo $$"], { encoding: "utf8" }).stdout.trim());
    host.write(LOCK_PATH, `${dead}\npid:[1]\n123\n`.replace("pid:[1]", fs.readlinkSync("/proc/self/ns/pid")));
    const lock = await acquireLock(host.host);
    expect(lock.tookOver).toEqual({ pid: dead, why: `pid ${dead} is gone` });
    expect(fs.readFileSync(path.join(host.root, LOCK_PATH), "utf8")).toBe(lockOf(process.pid));
    await lock.release();
    expect(fs.existsSync(path.join(host.root, LOCK_PATH))).toBe(false);
  });

  it("a lock naming a live process that is not a kata-install (pid 1) is stale: taken over, said so", async () => {
    const host = buildHost(nestedVmWithoutVmx());
    host.write(LOCK_PATH, "1\n");
    const lock = await acquireLock(host.host);
    expect(lock.tookOver?.pid).toBe(1);
    expect(lock.tookOver?.why).toMatch(/^pid 1 is not a kata-install/);
    await lock.release();
    // A pid reused by another process since: its start time gives it away.
    host.write(LOCK_PATH, `1\n${fs.readlinkSync("/proc/self/ns/pid")}\n1\n`);
    const again = await acquireLock(host.host);
    expect(again.tookOver?.why).toBe("pid 1 is now another process (it started later than the lock)");
    await again.release();
  });

  it("a lock from another pid namespace is refused with the command that clears it", async () => {
    const host = buildHost(nestedVmWithoutVmx());
    host.write(LOCK_PATH, "4242\npid:[1]\n99\n");
    await expect(acquireLock(host.host)).rejects.toThrow(
      `${LOCK_PATH} is held by pid 4242, but it was taken in another pid namespace (pid:[1]; this one is ${fs.readlinkSync("/proc/self/ns/pid")}), where this kata-install cannot see whether it still runs. If no kata-install is running on this node, remove the lock: rm ${path.join(host.root, LOCK_PATH)}`,
    );
  });

  it("never releases a lock another installer holds by then", async () => {
    const host = buildHost(nestedVmWithoutVmx());
    const first = await acquireLock(host.host);
    const other = spawn("sleep", ["30"]);
    try {
      // Someone else's lock replaced ours: a second acquire fails, and our release leaves it alone.
      fs.writeFileSync(path.join(host.root, LOCK_PATH), lockOf(other.pid as number));
      await expect(acquireLock(host.host)).rejects.toThrow(new RegExp(`pid ${other.pid}`));
      await first.release();
      expect(fs.readFileSync(path.join(host.root, LOCK_PATH), "utf8")).toBe(lockOf(other.pid as number));
    } finally {
      other.kill("SIGKILL");
    }
  });
});
