// Each write, rename, fsync and restart of a whole install made to fail in turn
// (KATA_INSTALL_FAULT=<kind>:<n>): every time, the run exits 1 with one line naming what failed,
// and the node is byte for byte as before — no temp file, no staging copy, no journal, no lock.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import type net from "node:net";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { answeringHost } from "../helpers/answering.js";
import { artifactDir } from "../helpers/artifacts.js";
import { runCli } from "../helpers/cli.js";
import { intelContainerd16 } from "../helpers/nodes.js";
import { removeTestHosts } from "../helpers/test-host.js";
import { snapshot } from "../helpers/tree.js";

afterAll(removeTestHosts);
const artifacts = artifactDir();
const servers: net.Server[] = [];
afterAll(() => {
  fs.rmSync(artifacts, { recursive: true, force: true });
  for (const s of servers) s.close();
});

async function node() {
  const spec = intelContainerd16();
  spec.files = { ...spec.files, "/run/lock/.keep": "" }; // as on every node: /run/lock is there
  return answeringHost(spec);
}

/** Which operations to fail: the first few, then spread out to past the last one. */
const NTH = [1, 2, 3, 4, 6, 9, 13, 19, 28, 41, 60, 90, 135];

describe.each(["write", "rename", "fsync", "restart"])("every %s of an install failing in turn", (kind) => {
  it("leaves the node as it was, and says what failed in one line", { timeout: 180_000 }, async () => {
    let failed = 0;
    for (const n of NTH) {
      const host = await node();
      const before = snapshot(host.root);
      const run = runCli(["install", "--host-root", host.root, "--artifacts", `dir:${artifacts}`], {
        env: { KATA_INSTALL_FAULT: `${kind}:${n}` },
      });
      if (run.status === 0) break; // past the last operation of that kind: nothing failed
      failed++;
      expect(run.status, `${kind}:${n}\n${run.stderr}`).toBe(1);
      const last = run.stderr.trimEnd().split("\n").pop() ?? "";
      expect(last, `${kind}:${n}`).toMatch(/^kata-install: .*(EIO|injected)/);
      expect(run.stderr, `${kind}:${n}`).not.toMatch(/\n\s+at /);
      expect(snapshot(host.root), `${kind}:${n}`).toEqual(before);
    }
    expect(failed).toBeGreaterThan(0);
  });
});

describe("the runtime configuration's file system full (ENOSPC)", () => {
  it("the write fails, the untouched config.toml is not rewritten, and the node is as it was", async () => {
    const host = await node();
    const dir = path.join(host.root, "etc/containerd");
    const config = fs.readFileSync(path.join(dir, "config.toml"));
    fs.rmSync(path.join(dir, "config.toml"));
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", dir]);
    try {
      fs.writeFileSync(path.join(dir, "config.toml"), config);
      // Not a byte more fits: a temp copy of config.toml cannot be written, before or after.
      try {
        fs.writeFileSync(path.join(dir, "filler"), Buffer.alloc(64 << 10));
      } catch {
        // full: as wanted
      }
      const before = snapshot(host.root);
      const run = runCli(["install", "--host-root", host.root, "--artifacts", `dir:${artifacts}`]);
      expect(run.status).toBe(1);
      expect(run.stderr).toMatch(
        /\nkata-install: cannot write \/etc\/containerd\/config\.toml: no space left on device \(ENOSPC\): free space on that file system, then run kata-install again\n$/,
      );
      expect(snapshot(host.root)).toEqual(before);
    } finally {
      execFileSync("umount", [dir]);
    }
  });
});

describe("a rollback that fails too", () => {
  // The restart fails (the runtime's files are rolled back), and so does every write of
  // config.toml after the install's own: the rollback cannot put it back.
  const faults = "restart:1,write:2+@/etc/containerd/config.toml";

  it.each(["install", "uninstall"] as const)(
    "is said, with what it left and the command that finishes it; the next %s repairs the node",
    async (next) => {
      const host = await node();
      const before = snapshot(host.root);
      const run = runCli(["install", "--host-root", host.root, "--artifacts", `dir:${artifacts}`], {
        env: { KATA_INSTALL_FAULT: faults },
      });
      expect(run.status).toBe(1);
      const last = run.stderr.trimEnd().split("\n").pop() ?? "";
      expect(last).toMatch(
        /^kata-install: .*restart.*; then the rollback did not finish: cannot write \/etc\/containerd\/config\.toml: .*EIO.*; left as the run made them: .*\/etc\/containerd\/config\.toml.*, the artifacts' switch \(\/opt\/kata\/current -> versions\/\w+\)\. The journal \(\/opt\/kata\/\.install\/journal\.json\) still records it: once that is fixed, `kata-install uninstall --host-root \S+` \(or `install`\) rolls the rest back first$/,
      );
      expect(run.stderr).not.toMatch(/\n\s+at /);
      // Left between two states, and the journal says so.
      expect(snapshot(host.root)).not.toEqual(before);
      const repair = runCli([
        next,
        "--host-root",
        host.root,
        ...(next === "install" ? ["--artifacts", `dir:${artifacts}`] : []),
      ]);
      expect(repair.status, repair.stderr).toBe(0);
      if (next === "install") {
        expect(repair.stdout).toContain("An earlier install had been cut short: it was rolled back first.");
        const again = runCli(["install", "--host-root", host.root, "--artifacts", `dir:${artifacts}`]);
        expect(again.stdout).toContain("Nothing to do: the node is as the plan wants it.");
        expect(runCli(["uninstall", "--host-root", host.root]).status).toBe(0);
      }
      expect(snapshot(host.root)).toEqual(before);
    },
  );
});
