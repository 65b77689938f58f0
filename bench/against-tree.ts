// This tree's `plan --json` and no-op `install` against another checkout's (an earlier round's),
// interleaved in one script so that a busy machine slows both alike: medians, and each as a ratio
// to `node -e 0`. Each tree runs on a test host and artifacts made by its own test helpers (the
// artifact format may differ between them). Both trees must be built (npm run build).
// Run: git worktree add /tmp/before <commit> && (cd /tmp/before && npm ci && npm run build)
//      npx tsx bench/against-tree.ts /tmp/before
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { benchEnv, median } from "./timing.js";

const other = process.argv[2];
if (other === undefined) throw new Error("usage: npx tsx bench/against-tree.ts <other checkout>");
const rounds = Number(process.env.BENCH_ROUNDS ?? 15);

// A plan host, and an install host with a first install done, made by the tree's own helpers.
const SETUP = `
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { artifactDir } from "./test/helpers/artifacts.js";
import { intelContainerd16 } from "./test/helpers/nodes.js";
import { buildHost } from "./test/helpers/test-host.js";
const plan = buildHost(intelContainerd16());
const spec = intelContainerd16();
spec.commands = { ...spec.commands, "/usr/bin/systemctl": "exit 0" };
const install = buildHost(spec);
const artifacts = artifactDir();
const socket = path.join(install.root, "run/containerd/containerd.sock");
fs.rmSync(socket);
const server = net.createServer((c) => c.end());
await new Promise((resolve) => server.listen(socket, resolve));
const first = spawnSync(process.execPath, [path.resolve("dist/cli.js"), "install", "--artifacts", "dir:" + artifacts, "--host-root", install.root], { encoding: "utf8" });
server.close();
if (first.status !== 0) throw new Error("first install failed: " + first.stderr);
console.log(JSON.stringify({ plan: plan.root, install: install.root, artifacts }));
`;

interface Tree {
  name: string;
  plan: string[];
  install: string[];
  cleanup: string[];
}

function setUp(dir: string, name: string): Tree {
  const script = path.join(dir, `.against-tree-${process.pid}.mts`);
  fs.writeFileSync(script, SETUP);
  try {
    const run = spawnSync("npx", ["tsx", script], { cwd: dir, encoding: "utf8" });
    if (run.status !== 0) throw new Error(`${dir}: setting up failed: ${run.stderr}`);
    const made = JSON.parse(run.stdout.trim().split("\n").pop() as string);
    const cli = path.join(dir, "dist/cli.js");
    return {
      name,
      plan: [cli, "plan", "--json", "--host-root", made.plan, "--artifacts", `dir:${made.artifacts}`],
      install: [cli, "install", "--artifacts", `dir:${made.artifacts}`, "--host-root", made.install],
      cleanup: [made.plan, made.install, made.artifacts],
    };
  } finally {
    fs.rmSync(script, { force: true });
  }
}

function time(args: string[]): number {
  const started = process.hrtime.bigint();
  spawnSync(process.execPath, args, { stdio: "ignore", env: benchEnv() });
  return Number(process.hrtime.bigint() - started) / 1e6;
}

const trees = [setUp(path.resolve(other), `other (${other})`), setUp(process.cwd(), "this tree")];
const node: number[] = [];
const samples = new Map<string, number[]>();
for (let i = 0; i < rounds; i++) {
  node.push(time(["-e", "0"]));
  for (const tree of trees)
    for (const [what, args] of [
      ["plan", tree.plan],
      ["no-op install", tree.install],
    ] as const) {
      const key = `${what}, ${tree.name}`;
      samples.set(key, [...(samples.get(key) ?? []), time(args)]);
    }
}
const base = median(node);
console.log(`node -e 0: median ${base.toFixed(1)} ms (${rounds} rounds, interleaved)`);
for (const [key, xs] of samples)
  console.log(`${key}: median ${median(xs).toFixed(1)} ms, ${(median(xs) / base).toFixed(2)}x`);
for (const tree of trees) for (const dir of tree.cleanup) fs.rmSync(dir, { recursive: true, force: true });
