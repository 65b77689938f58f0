// The probe cache: a binary's answer is reused only while the binary is the same file; Kata's own
// binaries are cached whatever is asked, other binaries only for their version (or usage).
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DetectContext } from "../../src/detect/context.js";
import { ProbeCache } from "../../src/detect/probe-cache.js";
import { intelContainerd16 } from "../helpers/nodes.js";
import { buildHost, removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);

describe("the probe cache", () => {
  const built = buildHost(intelContainerd16());
  const log = path.join(built.root, "runs.log");
  /** A binary that answers with `answer` and logs each run. */
  const binary = (hostPath: string, answer: string) => {
    const full = path.join(built.root, hostPath);
    fs.mkdirSync(path.dirname(full), { recursive: true });
    fs.writeFileSync(full, `#!/bin/sh\necho "$0 $*" >> ${log}\necho "${answer}"\n`, { mode: 0o755 });
  };
  const runs = () => (fs.existsSync(log) ? fs.readFileSync(log, "utf8").trim().split("\n").length : 0);
  /** One detection's worth of questions, through a context sharing `probes`. */
  const ask = (probes: ProbeCache, command: string, args: string[]) =>
    new DetectContext(built.host, { probes }).run("test", command, args);

  it("asks a binary once, and again only when it is a different file", async () => {
    binary("/opt/kata/bin/kata-runtime", "kata-runtime 3.9.0");
    const probes = new ProbeCache(built.host, "/opt/kata");
    expect((await ask(probes, "/opt/kata/bin/kata-runtime", ["--version"])).stdout).toBe(
      "kata-runtime 3.9.0\n",
    );
    expect(probes.dirty).toBe(true);
    const saved = probes.serialize();
    fs.writeFileSync(path.join(built.root, "opt/kata/.probes.json"), saved);
    // A later run, from the saved file: no process.
    const later = new ProbeCache(built.host, "/opt/kata", JSON.parse(saved));
    expect((await ask(later, "/opt/kata/bin/kata-runtime", ["--version"])).stdout).toBe(
      "kata-runtime 3.9.0\n",
    );
    expect(later.dirty).toBe(false);
    expect(runs()).toBe(1);
    // An upgrade writes a new file: asked again, with the new answer.
    fs.rmSync(path.join(built.root, "opt/kata/bin/kata-runtime"));
    binary("/opt/kata/bin/kata-runtime", "kata-runtime 3.10.0");
    expect((await ask(later, "/opt/kata/bin/kata-runtime", ["--version"])).stdout).toBe(
      "kata-runtime 3.10.0\n",
    );
    expect(runs()).toBe(2);
  });

  it("caches other binaries' versions only, and never a failure that may pass", async () => {
    binary("/usr/bin/qemu-system-x86_64", "QEMU emulator version 8.2.2");
    const probes = new ProbeCache(built.host, "/opt/kata");
    const before = runs();
    for (let i = 0; i < 2; i++) {
      await ask(probes, "/usr/bin/qemu-system-x86_64", ["--version"]);
      await ask(probes, "/usr/bin/qemu-system-x86_64", ["-machine", "help"]);
    }
    expect(runs() - before).toBe(3); // the version once, the device list each time
    // A usage text is the binary's own too (mkfs.erofs's options): asked once.
    binary("/usr/bin/mkfs.erofs", " --mkfs-time");
    const mkfsBefore = runs();
    for (let i = 0; i < 2; i++) await ask(probes, "/usr/bin/mkfs.erofs", ["--help"]);
    expect(runs() - mkfsBefore).toBe(1);
    const slow = path.join(built.root, "opt/kata/bin/slow");
    fs.writeFileSync(slow, "#!/bin/sh\nsleep 5\n", { mode: 0o755 });
    const ctx = new DetectContext(built.host, { probes, commandTimeoutMs: 200 });
    expect((await ctx.run("test", "/opt/kata/bin/slow", ["--version"])).timedOut).toBe(true);
    expect(JSON.parse(probes.serialize())["run:/opt/kata/bin/slow\0--version"]).toBeUndefined();
  });

  it("an unreadable cache file is an empty cache, not an error", async () => {
    fs.mkdirSync(path.join(built.root, "opt/kata/.install"), { recursive: true });
    fs.writeFileSync(path.join(built.root, "opt/kata/.install/probes.json"), "{ not json");
    const probes = await ProbeCache.load(built.host, "/opt/kata");
    expect(probes.serialize()).toBe("{}\n");
  });

  it("an entry that does not fit the format is asked again, never fed to detection", async () => {
    binary("/opt/kata/bin/odd", "odd 1.2.3");
    const identity = await new ProbeCache(built.host, "/opt/kata").identity("/opt/kata/bin/odd");
    const key = "run:/opt/kata/bin/odd\0--version";
    fs.writeFileSync(
      path.join(built.root, "opt/kata/.install/probes.json"),
      JSON.stringify({ [key]: { identity, result: { ok: true, stdout: 42 } } }),
    );
    const probes = await ProbeCache.load(built.host, "/opt/kata");
    expect(probes.serialize()).toBe("{}\n");
    const before = runs();
    expect((await ask(probes, "/opt/kata/bin/odd", ["--version"])).stdout).toBe("odd 1.2.3\n");
    expect(runs() - before).toBe(1);
  });
});
