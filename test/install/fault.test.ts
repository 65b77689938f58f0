// Each write, rename, fsync and restart of a whole install made to fail in turn
// (KATA_INSTALL_FAULT=<kind>:<n>): every time, the run exits 1 with one line naming what failed,
// and the node is byte for byte as before — no temp file, no staging copy, no journal, no lock.
import fs from "node:fs";
import type net from "node:net";
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
