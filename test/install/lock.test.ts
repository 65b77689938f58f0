import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { acquireLock, LOCK_PATH } from "../../src/install/lock.js";
import { runCli } from "../helpers/cli.js";
import { nestedVmWithoutVmx } from "../helpers/nodes.js";
import { buildHost, removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);

/** A lock as a running kata-install writes it: pid, pid namespace, start time. */
function lockOf(pid: number): string {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  const start = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  return `${pid}\n${fs.readlinkSync("/proc/self/ns/pid")}\n${start}\n`;
}

/** A real kata-install holding the lock of the host at `root` (its own process), until stopped. */
async function holder(root: string): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", path.resolve("test/helpers/lock-child.ts"), root],
    {
      stdio: ["pipe", "pipe", "inherit"],
    },
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on("data", (c: Buffer) => c.toString().includes("locked") && resolve());
    child.on("exit", (code) => reject(new Error(`the lock holder exited (${code})`)));
  });
  return child;
}

/** Stop a holder as a finished install does: it releases the lock. */
function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.on("exit", () => resolve());
    child.stdin?.end();
  });
}

describe("the node lock", () => {
  it("keeps a second installer out while the first one holds it, with a clear message", async () => {
    const host = buildHost(nestedVmWithoutVmx());
    const first = await holder(host.root);
    try {
      const held = fs.readFileSync(path.join(host.root, LOCK_PATH), "utf8");
      expect(held).toBe(lockOf(first.pid as number));
      await expect(acquireLock(host.host)).rejects.toThrow(
        `another kata-install (pid ${first.pid}) is installing on this node: it holds ${LOCK_PATH}; try again when it has finished`,
      );
      expect(fs.readFileSync(path.join(host.root, LOCK_PATH), "utf8")).toBe(held);
    } finally {
      await stop(first);
    }
    // Released by its holder: free again.
    expect(fs.existsSync(path.join(host.root, LOCK_PATH))).toBe(false);
    await (await acquireLock(host.host)).release();
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

  it("a lock forged to name a live pid with its real start time (pid 1, a sleep) is taken over, said so", async () => {
    const host = buildHost(nestedVmWithoutVmx());
    const sleeper = spawn("sleep", ["30"]);
    try {
      for (const pid of [1, sleeper.pid as number]) {
        host.write(LOCK_PATH, lockOf(pid));
        const lock = await acquireLock(host.host);
        expect(lock.tookOver?.pid).toBe(pid);
        expect(lock.tookOver?.why).toMatch(
          new RegExp(
            `^pid ${pid} \\(.*\\) runs but does not hold the lock open: it is not the kata-install that took it$`,
          ),
        );
        await lock.release();
      }
    } finally {
      sleeper.kill("SIGKILL");
    }
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
    // Ours was removed and another installer took the lock since: our release leaves it alone.
    fs.rmSync(path.join(host.root, LOCK_PATH));
    const other = await holder(host.root);
    try {
      await expect(acquireLock(host.host)).rejects.toThrow(new RegExp(`pid ${other.pid}`));
      await first.release();
      expect(fs.readFileSync(path.join(host.root, LOCK_PATH), "utf8")).toBe(lockOf(other.pid as number));
    } finally {
      await stop(other);
    }
  });
});

describe("what is planted in the lock's world-writable directory", () => {
  it("a link at the lock's temp name (lock.<pid>) is not written through", async () => {
    const host = buildHost(nestedVmWithoutVmx());
    const outside = `${host.root}.shadow`;
    fs.writeFileSync(outside, "root:*:19000:0:99999:7:::\n");
    const dir = path.join(host.root, path.dirname(LOCK_PATH));
    fs.mkdirSync(dir, { recursive: true });
    fs.symlinkSync(outside, path.join(dir, `kata-install.lock.${process.pid}`));
    const lock = await acquireLock(host.host);
    await lock.release();
    expect(fs.readFileSync(outside, "utf8")).toBe("root:*:19000:0:99999:7:::\n");
    fs.rmSync(outside);
  });

  it("a FIFO as the lock: taken over at once, not waited on", async () => {
    const host = buildHost(nestedVmWithoutVmx());
    fs.mkdirSync(path.join(host.root, path.dirname(LOCK_PATH)), { recursive: true });
    execFileSync("mkfifo", [path.join(host.root, LOCK_PATH)]);
    const started = Date.now();
    const lock = await acquireLock(host.host);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(lock.tookOver?.why).toBe("it was a FIFO, not a lock kata-install makes");
    await lock.release();
  });

  it("the lock a link to /dev/zero: uninstall takes it over at once, reads nothing through it", () => {
    const host = buildHost(nestedVmWithoutVmx());
    fs.mkdirSync(path.join(host.root, path.dirname(LOCK_PATH)), { recursive: true });
    fs.symlinkSync("/dev/zero", path.join(host.root, LOCK_PATH));
    const started = Date.now();
    const run = runCli(["uninstall", "--host-root", host.root]);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toContain(
      `kata-install: took over ${LOCK_PATH}: it was a symbolic link (to /dev/zero), not a lock kata-install makes`,
    );
    expect(run.stdout).toContain("Nothing to uninstall");
    expect(fs.lstatSync("/dev/zero").isCharacterDevice()).toBe(true);
    expect(fs.existsSync(path.join(host.root, LOCK_PATH))).toBe(false);
  });

  it("a directory at the lock's name, another user's file inside: moved aside whole, nothing in it touched", async () => {
    const host = buildHost(nestedVmWithoutVmx());
    const lockDir = path.join(host.root, LOCK_PATH);
    fs.mkdirSync(lockDir, { recursive: true });
    fs.writeFileSync(path.join(lockDir, "theirs"), "not kata-install's\n");
    fs.chownSync(path.join(lockDir, "theirs"), 65534, 65534);
    fs.chownSync(lockDir, 65534, 65534);
    const lock = await acquireLock(host.host);
    const why = lock.tookOver?.why ?? "";
    expect(why).toMatch(
      /^it was a directory, not a lock kata-install makes \(moved aside whole to \/run\/lock\/kata-install\.lock\.aside-[0-9a-f-]+\)$/,
    );
    const aside = path.join(host.root, /to (\S+)\)$/.exec(why)?.[1] ?? "");
    expect(fs.readFileSync(path.join(aside, "theirs"), "utf8")).toBe("not kata-install's\n");
    expect(fs.statSync(aside).uid).toBe(65534);
    expect(fs.lstatSync(lockDir).isFile()).toBe(true);
    await lock.release();
    expect(fs.existsSync(lockDir)).toBe(false);
  });

  it("a lock file of another user's is not kata-install's: taken over", async () => {
    const host = buildHost(nestedVmWithoutVmx());
    host.write(LOCK_PATH, lockOf(1));
    fs.chownSync(path.join(host.root, LOCK_PATH), 65534, 65534);
    const lock = await acquireLock(host.host);
    expect(lock.tookOver?.why).toBe("it belonged to uid 65534, not to kata-install's user (uid 0)");
    await lock.release();
  });
});
