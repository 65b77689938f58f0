// Run by the lock tests in a child process: a kata-install holding the node's lock, as a running
// install does, until its stdin closes. Argument: the host root. Prints "locked" once it holds it.
import { Host } from "../../src/host/host.js";
import { acquireLock } from "../../src/install/lock.js";

const lock = await acquireLock(new Host({ root: process.argv[2] as string }));
process.stdout.write("locked\n");
process.stdin.resume();
process.stdin.on("end", async () => {
  await lock.release();
  process.exit(0);
});
