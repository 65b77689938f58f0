import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Host, normaliseHostPath } from "../../src/host/host.js";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-hostfs-"));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
const put = (hostPath: string, content: string, mode = 0o644) => {
  fs.mkdirSync(path.dirname(path.join(root, hostPath)), { recursive: true });
  fs.writeFileSync(path.join(root, hostPath), content, { mode });
};
const link = (hostPath: string, target: string) => {
  fs.mkdirSync(path.dirname(path.join(root, hostPath)), { recursive: true });
  fs.symlinkSync(target, path.join(root, hostPath));
};

put("/usr/lib/os-release", "ID=inside\n");
link("/etc/os-release", "/usr/lib/os-release");
link("/etc/escape", "../../../../../etc/hostname");
link("/lib", "usr/lib");
put("/usr/bin/tool", '#!/bin/sh\necho tool "$@"\n', 0o755);
put("/usr/local/bin/data", "not executable\n", 0o644);
link("/run", "/var/run");
put("/var/run/marker", "run\n");

describe("Host path resolution", () => {
  const host = new Host({ root });

  it("resolves an absolute symlink against the host root, not the machine's", async () => {
    expect(await host.readText("/etc/os-release")).toEqual({ ok: true, text: "ID=inside\n" });
    expect(await host.resolve("/etc/os-release")).toBe(path.join(root, "/usr/lib/os-release"));
  });

  it("follows directory links inside the host", async () => {
    expect(await host.readText("/lib/os-release")).toEqual({ ok: true, text: "ID=inside\n" });
    expect(await host.readText("/run/marker")).toEqual({ ok: true, text: "run\n" });
  });

  it("never climbs out of the root, by .. in a path or in a link", async () => {
    expect(normaliseHostPath("../../etc/passwd")).toBe("/etc/passwd");
    expect(await host.readText("/../../../etc/hostname")).toMatchObject({ ok: false, missing: true });
    expect(await host.readText("/etc/escape")).toMatchObject({ ok: false, missing: true });
  });

  it("reports a missing file as missing and a directory as unreadable", async () => {
    expect(await host.readText("/nope")).toEqual({ ok: false, missing: true, reason: "does not exist" });
    expect(await host.readText("/usr")).toEqual({ ok: false, missing: false, reason: "is a directory" });
  });

  it("finds a missing path missing however it is reached: below a file, a missing directory, a host link", async () => {
    for (const missing of [
      "/usr/bin/tool/x",
      "/no/such/dir/file",
      "/run/absent",
      "/lib/absent",
      "/etc/escape/x",
    ]) {
      expect(await host.readText(missing), missing).toEqual({
        ok: false,
        missing: true,
        reason: "does not exist",
      });
      expect(await host.lookStat(missing), missing).toEqual({
        ok: false,
        missing: true,
        reason: "does not exist",
      });
    }
    // Where a file would be made: under the host's own /var/run, not the machine's /run.
    expect(await host.resolve("/run/absent")).toBe(path.join(root, "/var/run/absent"));
    expect(await host.resolve("/lib/absent")).toBe(path.join(root, "/usr/lib/absent"));
    expect(await host.lookStat("/run/marker")).toMatchObject({ ok: true });
  });

  it("finds executables only", async () => {
    expect(await host.which("tool")).toBe("/usr/bin/tool");
    expect(await host.which("data")).toBeNull();
  });
});

describe("Host commands", () => {
  it("runs the file under the root for a test host", async () => {
    const host = new Host({ root });
    expect(host.strategy).toBe("root-exec");
    const result = await host.run("tool", ["a", "b"]);
    expect(result).toMatchObject({ ok: true, exitCode: 0, stdout: "tool a b\n" });
  });

  it("says when the command is not on the host", async () => {
    const result = await new Host({ root }).run("qemu-system-x86_64", ["--version"]);
    expect(result.ok).toBe(false);
    expect(result.reason).toBe(`qemu-system-x86_64: not found in the PATH of the host at ${root}`);
  });

  it("runs directly on the real root", async () => {
    const host = new Host({ root: "/" });
    expect(host.strategy).toBe("direct");
    expect((await host.run("sh", ["-c", "echo $((6 * 7))"])).stdout).toBe("42\n");
  });

  it("runs inside the host with chroot, using the host's own binaries", async () => {
    // A minimal host tree: a shell and the libraries it loads, copied in (not linked: links would
    // point outside the chroot).
    const chrootRoot = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-chroot-"));
    try {
      for (const file of ["/usr/bin/dash", ...sharedLibraries("/usr/bin/dash")]) {
        const target = path.join(chrootRoot, file === "/usr/bin/dash" ? "/bin/sh" : file);
        fs.mkdirSync(path.dirname(target), { recursive: true });
        fs.cpSync(file, target, { dereference: true });
      }
      fs.writeFileSync(path.join(chrootRoot, "/marker"), "inside the chroot\n");
      const host = new Host({ root: chrootRoot, strategy: "chroot" });
      const result = await host.run("/bin/sh", ["-c", 'read line < /marker; echo "$line"']);
      expect(result).toMatchObject({ ok: true, stdout: "inside the chroot\n" });
    } finally {
      fs.rmSync(chrootRoot, { recursive: true, force: true });
    }
  });
});

function sharedLibraries(binary: string): string[] {
  const out = execFileSync("ldd", [binary], { encoding: "utf8" });
  return [...out.matchAll(/(\/[^\s]+\.so[^\s]*)/g)].map((m) => m[1] as string);
}
