import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { acquireLock, LOCK_PATH } from "../../src/install/lock.js";
import { nestedVmWithoutVmx } from "../helpers/nodes.js";
import { buildHost, removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);

describe("the node lock", () => {
  it("keeps a second installer out while the first one lives, with a clear message", async () => {
    const host = buildHost(nestedVmWithoutVmx());
    const holder = spawn("sleep", ["30"]);
    try {
      host.write(LOCK_PATH, `${holder.pid}\n`);
      await expect(acquireLock(host.host)).rejects.toThrow(
        `another kata-install (pid ${holder.pid}) is installing on this node: it holds ${LOCK_PATH}; try again when it has finished`,
      );
      expect(fs.readFileSync(path.join(host.root, LOCK_PATH), "utf8")).toBe(`${holder.pid}\n`);
    } finally {
      holder.kill("SIGKILL");
    }
  });

  it("takes over a lock whose owner died, and releases only its own", async () => {
    const host = buildHost(nestedVmWithoutVmx());
    const dead = spawnSync("sh", ["-c", "echo $$"], { encoding: "utf8" }).stdout.trim();
    host.write(LOCK_PATH, `${dead}\n`);
    const lock = await acquireLock(host.host);
    expect(lock.tookOverFrom).toBe(Number(dead));
    expect(fs.readFileSync(path.join(host.root, LOCK_PATH), "utf8")).toBe(`${process.pid}\n`);
    await lock.release();
    expect(fs.existsSync(path.join(host.root, LOCK_PATH))).toBe(false);
  });

  it("never releases a lock another installer holds by then", async () => {
    const host = buildHost(nestedVmWithoutVmx());
    const first = await acquireLock(host.host);
    // Someone else's lock replaced ours (pid 1, always alive): a second acquire fails, and our
    // release leaves their lock alone.
    fs.writeFileSync(path.join(host.root, LOCK_PATH), "1\n");
    await expect(acquireLock(host.host)).rejects.toThrow(/pid 1/);
    await first.release();
    expect(fs.readFileSync(path.join(host.root, LOCK_PATH), "utf8")).toBe("1\n");
  });
});
