// Ways of starting kata-install against `node -e 0` (issue 25), interleaved in one script so that a
// busy machine slows all alike: the plain bundle (dist/cli.js), Node started from the build's
// start-up snapshot (dist/kata-install.blob), dist/kata-install (the bin: that, after its checks),
// and V8's code cache (vm.Script cachedData, the v8-compile-cache way: dist/snapshot.cjs compiled
// from a cache this script makes after one plan, so the cache holds what a plan compiles). Each is
// timed for --version, --help, facts --json, plan --json and a no-op install; besides the wall time (median,
// fastest), the CPU time the run and its children used (mean), steadier on a shared machine.
// Run: npm run build && npx tsx bench/startup-snapshot.ts   (BENCH_ROUNDS=31 for steadier figures)
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { artifactDir } from "../test/helpers/artifacts.js";
import { gpuDistroQemuK3s, intelContainerd16 } from "../test/helpers/nodes.js";
import { buildHost, removeTestHosts } from "../test/helpers/test-host.js";
import { benchEnv, median } from "./timing.js";

const rounds = Number(process.env.BENCH_ROUNDS ?? 21);
const cli = path.resolve("dist/cli.js");
const blob = path.resolve("dist/kata-install.blob");
const launcher = path.resolve("dist/kata-install");
for (const file of [cli, blob, launcher, path.resolve("dist/snapshot.cjs")])
  if (!fs.existsSync(file)) throw new Error(`${file} is missing: npm run build`);

// The hosts and artifacts of bench/facts.bench.ts, plan.bench.ts and install.bench.ts.
const factsHost = buildHost(gpuDistroQemuK3s());
const planHost = buildHost(intelContainerd16());
const spec = intelContainerd16();
spec.commands = { ...spec.commands, "/usr/bin/systemctl": "exit 0" };
const installHost = buildHost(spec);
const artifacts = artifactDir();
const commands: Record<string, string[]> = {
  // What any start costs before a command runs: Node, the code loaded, commander; the floor under
  // every other line (from the blob, 1.7-1.8x node -e 0 on its own).
  version: ["--version"],
  help: ["--help"],
  facts: ["facts", "--json", "--host-root", factsHost.root],
  plan: ["plan", "--json", "--host-root", planHost.root, "--artifacts", `dir:${artifacts}`],
  install: ["install", "--artifacts", `dir:${artifacts}`, "--host-root", installHost.root],
};
// The first install restarts containerd: something must answer on its socket meanwhile.
const socket = path.join(installHost.root, "run/containerd/containerd.sock");
fs.rmSync(socket);
const server = net.createServer((c) => c.end());
await new Promise<void>((resolve) => server.listen(socket, resolve));
const first = spawnSync(process.execPath, [cli, ...(commands.install as string[])], { encoding: "utf8" });
server.close();
if (first.status !== 0) throw new Error(`first install failed: ${first.stderr}`);

// The code-cache start: a loader that compiles the CommonJS bundle with V8's cached data.
const work = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-code-cache-"));
const loader = path.join(work, "load.cjs");
fs.writeFileSync(
  loader,
  `const fs = require("node:fs");
const vm = require("node:vm");
const file = ${JSON.stringify(path.resolve("dist/snapshot.cjs"))};
const cache = ${JSON.stringify(path.join(work, "snapshot.cjs.cache"))};
const cachedData = fs.existsSync(cache) ? fs.readFileSync(cache) : undefined;
const script = new vm.Script("(function (exports, require, module, __filename, __dirname) {" + fs.readFileSync(file, "utf8") + "\\n})", { filename: file, cachedData });
if (cachedData === undefined) process.once("exit", () => fs.writeFileSync(cache, script.createCachedData()));
else if (script.cachedDataRejected) throw new Error("code cache rejected");
process.argv[1] = ${JSON.stringify(cli)};
const module_ = { exports: {} };
script.runInThisContext()(module_.exports, require, module_, file, require("node:path").dirname(file));
`,
);
spawnSync(process.execPath, [loader, ...(commands.plan as string[])], { stdio: "ignore" });

// The floors under each command that no change of kata-install's can go below. (1) The host
// commands it must start on that host: logged from one run (a preload that wraps spawn), then
// started by a bare script as src/host/command.ts starts them (all at once, in their own process
// group, output read from pipes) and waited for. (2) Node started from a user-land snapshot that
// holds nothing: what the blob's start costs before any of kata-install is in it.
const spawnLog = path.join(work, "spawns.jsonl");
const preload = path.join(work, "log-spawns.cjs");
fs.writeFileSync(
  preload,
  `const cp = require("node:child_process");
const fs = require("node:fs");
const spawn = cp.spawn;
cp.spawn = function (file, args) {
  fs.appendFileSync(${JSON.stringify(spawnLog)}, JSON.stringify([file, args]) + "\\n");
  return spawn.apply(this, arguments);
};
require("node:module").syncBuiltinESMExports();
`,
);
/** The commands `args` starts, as [file, args] (a run of the plain bundle with the preload). */
function commandsStarted(args: string[]): [string, string[]][] {
  fs.rmSync(spawnLog, { force: true });
  const run = spawnSync(process.execPath, ["--require", preload, cli, ...args], {
    stdio: "ignore",
    env: benchEnv(),
  });
  if (run.status !== 0)
    throw new Error(`${args.join(" ")} exited ${run.status} while its commands were logged`);
  if (!fs.existsSync(spawnLog)) return [];
  return fs
    .readFileSync(spawnLog, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
}
/** A bare script that starts `started` as kata-install does, and exits when every one has closed. */
const startsAlone = (started: [string, string[]][]) =>
  `const { spawn } = require("node:child_process");
const commands = ${JSON.stringify(started)};
let open = commands.length;
for (const [file, args] of commands) {
  const child = spawn(file, args, { detached: true, env: { ...process.env, LC_ALL: "C" }, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout.on("data", () => {});
  child.stderr.on("data", () => {});
  child.on("close", () => { if (--open === 0) process.exit(0); });
}
if (open === 0) process.exit(0);
`;
const emptyBlob = path.join(work, "empty.blob");
const emptyEntry = path.join(work, "empty-snapshot.cjs");
fs.writeFileSync(emptyEntry, 'require("node:v8").startupSnapshot.setDeserializeMainFunction(() => {});\n');
const built = spawnSync(process.execPath, ["--snapshot-blob", emptyBlob, "--build-snapshot", emptyEntry], {
  stdio: "ignore",
  env: {},
});
if (built.status !== 0) throw new Error("the empty snapshot was not built");
const targets: Record<string, number> = { facts: 1.8, plan: 2.5, install: 2.5 };

interface Variant {
  name: string;
  command: string;
  args: string[];
  /** Another environment than `env` (benchEnv(): without NODE_EXTRA_CA_CERTS). */
  env?: NodeJS.ProcessEnv;
}
const env = benchEnv();
const variants: Variant[] = [{ name: "node -e 0", command: process.execPath, args: ["-e", "0"] }];
// What that variable costs here, shown beside the floor and left out of every ratio's.
if (process.env.NODE_EXTRA_CA_CERTS)
  variants.push({
    name: "node -e 0, CA bundle",
    command: process.execPath,
    args: ["-e", "0"],
    env: process.env,
  });
variants.push({
  name: "empty snapshot",
  command: process.execPath,
  args: ["--snapshot-blob", emptyBlob, emptyEntry],
});
const alone = new Map<string, number>();
for (const [what, args] of Object.entries(commands)) {
  const started = what in targets ? commandsStarted(args) : [];
  if (started.length > 0) {
    alone.set(what, started.length);
    variants.push({
      name: `${what}: its commands alone`,
      command: process.execPath,
      args: ["-e", startsAlone(started)],
    });
  }
  variants.push({ name: `${what}: dist/cli.js`, command: process.execPath, args: [cli, ...args] });
  variants.push({
    name: `${what}: snapshot`,
    command: process.execPath,
    args: ["--snapshot-blob", blob, cli, ...args],
  });
  variants.push({ name: `${what}: dist/kata-install`, command: launcher, args });
  if (what !== "install")
    variants.push({ name: `${what}: code cache`, command: process.execPath, args: [loader, ...args] });
}

/** CPU time of this process's waited-for children so far, in ms (from /proc: clock ticks of 10 ms). */
function childrenCpu(): number {
  const fields = (fs.readFileSync("/proc/self/stat", "utf8").split(") ")[1] as string).split(" ");
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

const wall = new Map<string, number[]>(variants.map((v) => [v.name, []]));
const cpu = new Map<string, number>(variants.map((v) => [v.name, 0]));
function time(v: Variant): void {
  const cpuBefore = childrenCpu();
  const started = process.hrtime.bigint();
  const run = spawnSync(v.command, v.args, { stdio: ["ignore", "ignore", "ignore"], env: v.env ?? env });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (run.status !== 0) throw new Error(`${v.name} exited ${run.status}`);
  wall.get(v.name)?.push(ms);
  cpu.set(v.name, (cpu.get(v.name) ?? 0) + childrenCpu() - cpuBefore);
}
for (const v of variants) time(v); // warm the file cache for each
for (const v of variants) {
  wall.set(v.name, []);
  cpu.set(v.name, 0);
}
for (let i = 0; i < rounds; i++) for (const v of variants) time(v);

const base = wall.get("node -e 0") as number[];
const baseCpu = (cpu.get("node -e 0") as number) / rounds;
console.log(`rounds: ${rounds}; ratios are to node -e 0 (median, fastest run, mean CPU)`);
console.log('every run without NODE_EXTRA_CA_CERTS ("CA bundle": node -e 0 with this shell\'s environment)');
console.log(`${"".padEnd(28)}   median         fastest        CPU`);
for (const v of variants) {
  const xs = wall.get(v.name) as number[];
  const c = (cpu.get(v.name) as number) / rounds;
  const cell = (ms: number, of: number) => `${ms.toFixed(1).padStart(6)} ${(ms / of).toFixed(2)}x`;
  console.log(
    `${v.name.padEnd(28)} ${cell(median(xs), median(base))}  ${cell(Math.min(...xs), Math.min(...base))}  ${cell(c, baseCpu)}`,
  );
}
// What each target leaves for kata-install's own work once Node has started and the host commands
// that command must start have run (the median of the bare script that only starts them).
console.log("");
for (const [what, target] of Object.entries(targets)) {
  const count = alone.get(what);
  const floor =
    count === undefined ? 1 : median(wall.get(`${what}: its commands alone`) as number[]) / median(base);
  const left = (target - floor) * median(base);
  console.log(
    `${what}: target ${target}x; Node and its ${count ?? 0} host command(s) alone ${floor.toFixed(2)}x: ` +
      (left > 0
        ? `${left.toFixed(1)} ms left for loading and running kata-install`
        : "the target is under that floor"),
  );
}
removeTestHosts();
for (const dir of [artifacts, work]) fs.rmSync(dir, { recursive: true, force: true });
