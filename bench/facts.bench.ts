// How much `kata-install facts --json` costs over starting Node itself, on a test host rich enough to
// exercise every source (GPU, SR-IOV, distro qemu, k3s). Both commands run interleaved in this one
// script, so a busy machine slows both alike; the figure is the ratio of their medians.
// Run: npm run bench   (target: under 2.5×)
import { spawnSync } from "node:child_process";
import path from "node:path";
import { gpuDistroQemuK3s } from "../test/helpers/nodes.js";
import { buildHost, removeTestHosts } from "../test/helpers/test-host.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 25);
const cli = path.resolve("dist/cli.js");
const host = buildHost(gpuDistroQemuK3s());

function time(args: string[]): number {
  const started = process.hrtime.bigint();
  const run = spawnSync(process.execPath, args, { stdio: ["ignore", "ignore", "inherit"] });
  if (run.status !== 0) throw new Error(`node ${args.join(" ")} exited ${run.status}`);
  return Number(process.hrtime.bigint() - started) / 1e6;
}

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};

const baseline: number[] = [];
const facts: number[] = [];
time(["-e", "0"]); // warm the file cache for both
time([cli, "facts", "--json", "--host-root", host.root]);
for (let i = 0; i < ROUNDS; i++) {
  baseline.push(time(["-e", "0"]));
  facts.push(time([cli, "facts", "--json", "--host-root", host.root]));
}
removeTestHosts();

const ratio = median(facts) / median(baseline);
console.log(`rounds: ${ROUNDS}`);
console.log(`node -e 0:                        median ${median(baseline).toFixed(1)} ms`);
console.log(`kata-install facts --json (host): median ${median(facts).toFixed(1)} ms`);
console.log(`ratio: ${ratio.toFixed(2)}x (target < 2.5x)`);
