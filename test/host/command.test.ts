import { describe, expect, it } from "vitest";
import { runCommand, spawnSpec } from "../../src/host/command.js";

describe("command strategies", () => {
  it("spawn the right program for each strategy", () => {
    expect(spawnSpec("direct", "/", "systemctl", ["restart", "containerd"])).toEqual({
      file: "systemctl",
      args: ["restart", "containerd"],
    });
    expect(spawnSpec("root-exec", "/tmp/h", "/usr/bin/qemu", ["--version"])).toEqual({
      file: "/tmp/h/usr/bin/qemu",
      args: ["--version"],
    });
    expect(spawnSpec("chroot", "/host", "systemctl", ["daemon-reload"])).toEqual({
      file: "chroot",
      args: ["/host", "systemctl", "daemon-reload"],
    });
    expect(spawnSpec("nsenter", "/host", "systemctl", ["is-active", "crio"])).toEqual({
      file: "nsenter",
      args: [
        "--target",
        "1",
        "--mount",
        "--uts",
        "--ipc",
        "--net",
        "--pid",
        "--",
        "systemctl",
        "is-active",
        "crio",
      ],
    });
  });

  it("root-exec refuses a bare name: it must have been looked up under the root", () => {
    expect(() => spawnSpec("root-exec", "/tmp/h", "qemu", [])).toThrow(/absolute host path/);
  });

  it("a timeout also ends the children the command started", async () => {
    const started = Date.now();
    const result = await runCommand("direct", "/", "sh", ["-c", "sleep 30 & sleep 30; echo never"], {
      timeoutMs: 200,
    });
    expect(result).toMatchObject({ ok: false, timedOut: true, reason: "timed out after 200 ms" });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("a failing command's reason carries its exit code and first line of stderr", async () => {
    const result = await runCommand("direct", "/", "sh", [
      "-c",
      "echo 'bad flag' >&2; echo more >&2; exit 3",
    ]);
    expect(result).toMatchObject({ ok: false, exitCode: 3, reason: "exited 3: bad flag" });
  });
});
