// kill -9 at random moments of a whole `install` (artifacts, journal, files, runtime restart), as
// a node's power cut or an OOM kill would: the next `install` finishes the job and the next
// `uninstall` gives the node back, byte for byte — never something between. The moments are drawn
// from a seed printed with any failure, so a failing run can be replayed (CRASH_SEED=…).
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { artifactDir } from "../helpers/artifacts.js";
import { CLI, runCli } from "../helpers/cli.js";
import { criStandIn, type StandIn } from "../helpers/cri-stand-in.js";
import { intelContainerd16 } from "../helpers/nodes.js";
import { buildHost, removeTestHosts, type TestHost } from "../helpers/test-host.js";
import { installedTree, snapshot, type TreeSnapshot } from "../helpers/tree.js";

afterAll(removeTestHosts);
const artifacts = artifactDir();
const servers: StandIn[] = [];
afterAll(() => {
  fs.rmSync(artifacts, { recursive: true, force: true });
  for (const server of servers) server.close();
});

const SEED = Number(process.env.CRASH_SEED ?? Date.now() % 1_000_000);
const KILLS = 10;

/** A small seeded generator (mulberry32): the same seed, the same moments. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A node whose systemctl does nothing and whose containerd socket answers. */
async function node(): Promise<TestHost> {
  const spec = intelContainerd16();
  spec.commands = { ...spec.commands, "/usr/bin/systemctl": "exit 0" };
  spec.files = { ...spec.files, "/run/lock/.keep": "" }; // as on every node: /run/lock is there
  const host = buildHost(spec);
  const socket = path.join(host.root, "run/containerd/containerd.sock");
  fs.rmSync(socket);
  const server = await criStandIn(socket);
  servers.push(server);
  return host;
}

/** The tree without kata-install's bookkeeping (journal, backups, probe answers), which differs by run. */
const visible = (tree: TreeSnapshot) =>
  Object.fromEntries(Object.entries(tree).filter(([p]) => !p.startsWith("opt/kata/.install")));

/** `install` started, and killed after `ms` (or left to finish); how long it ran, and how it ended. */
function installKilledAfter(
  host: TestHost,
  ms: number | null,
): Promise<{ elapsed: number; signal: string | null; stderr: string }> {
  return new Promise((resolve) => {
    const started = process.hrtime.bigint();
    const child = spawn(
      process.execPath,
      [CLI, "install", "--artifacts", `dir:${artifacts}`, "--host-root", host.root],
      {
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    const timer = ms === null ? null : setTimeout(() => child.kill("SIGKILL"), ms);
    child.on("exit", (_code, signal) => {
      if (timer) clearTimeout(timer);
      resolve({ elapsed: Number(process.hrtime.bigint() - started) / 1e6, signal, stderr });
    });
  });
}

describe(`an install killed at random moments (CRASH_SEED=${SEED})`, async () => {
  const reference = await node();
  const original = snapshot(reference.root);
  const whole = await installKilledAfter(reference, null);
  expect(whole.signal, whole.stderr).toBeNull();
  const installed = visible(installedTree(reference.root));
  const next = random(SEED);
  // Moments across the whole run; an install takes longer on a loaded machine, so a little past it too.
  const moments = Array.from({ length: KILLS }, () => Math.round(next() * whole.elapsed * 1.1));

  it.each(moments.map((ms, i) => [ms, i % 2 === 0 ? "install" : "uninstall"] as const))(
    "killed after %i ms, then %s: the node is whole",
    async (ms, then) => {
      const host = await node();
      expect(snapshot(host.root)).toEqual(original);
      await installKilledAfter(host, ms);
      const run = runCli([
        then,
        ...(then === "install" ? ["--artifacts", `dir:${artifacts}`] : []),
        "--host-root",
        host.root,
      ]);
      expect(run.status, run.stderr).toBe(0);
      if (then === "install") expect(visible(installedTree(host.root))).toEqual(installed);
      else expect(snapshot(host.root)).toEqual(original);
    },
  );
});
