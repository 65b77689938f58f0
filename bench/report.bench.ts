// `kata-install report --facts-dir` over 5,000 nodes' saved facts (generated: four kinds of node,
// each copy with its own noise, pretty-printed as `facts --json` writes them), timed whole —
// process start, reading, deciding, comparing, printing — against its floor in the same run,
// interleaved: a node process that only reads every file and JSON.parses it (what no report can do
// without), and `node -e 0`.
// Run: npm run bench   (target: ≤ 2.0× of the floor)
//      npx tsx bench/report.bench.ts [<another checkout, built>]   (that tree's report too, interleaved)
import fs from "node:fs";
import path from "node:path";
import { containerd2, factsDir, withoutVirtiofs } from "../test/helpers/cluster.js";
import { amdSnpCrio, arm64Containerd20, gpuDistroQemuK3s, intelContainerd16 } from "../test/helpers/nodes.js";
import { removeTestHosts } from "../test/helpers/test-host.js";
import { median, time } from "./timing.js";

const NODES = Number(process.env.BENCH_NODES ?? 5000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
// One node in fifty without virtio-fs, one in a hundred on containerd 2: the report has work to do.
const variants: Record<number, Array<typeof withoutVirtiofs>> = {};
for (let i = 0; i < NODES; i++) {
  const v = [...(i % 50 === 7 ? [withoutVirtiofs] : []), ...(i % 100 === 3 ? [containerd2] : [])];
  if (v.length > 0) variants[i] = v;
}
// Four kinds of node: Intel with containerd 1.6, AMD SEV-SNP with CRI-O, a GPU node with k3s and a
// distro qemu, arm64 with containerd 2.
const dir = await factsDir(NODES, variants, [
  intelContainerd16,
  amdSnpCrio,
  gpuDistroQemuK3s,
  arm64Containerd20,
]);
const bytes = fs.readdirSync(dir).reduce((n, f) => n + fs.statSync(path.join(dir, f)).size, 0);
const args = [path.resolve("dist/cli.js"), "report", "--facts-dir", dir, "--json"];
const floorScript = `const fs=require("fs"),p=require("path");const d=${JSON.stringify(dir)};let n=0;for(const f of fs.readdirSync(d)){JSON.parse(fs.readFileSync(p.join(d,f),"utf8"));n++}`;
const floorArgs = ["-e", floorScript];
// An earlier round's tree, timed on the same files in the same rounds: what this round changed.
const other = process.argv[2];
const otherArgs = other === undefined ? [] : [path.resolve(other, "dist/cli.js"), ...args.slice(1)];
time(args); // warm the file cache
const baseline: number[] = [];
const floor: number[] = [];
const measured: number[] = [];
const before: number[] = [];
for (let i = 0; i < ROUNDS; i++) {
  baseline.push(time(["-e", "0"]));
  floor.push(time(floorArgs));
  measured.push(time(args));
  if (other !== undefined) before.push(time(otherArgs));
}
fs.rmSync(dir, { recursive: true, force: true });
removeTestHosts();
console.log(`nodes: ${NODES} (${(bytes / 1e6).toFixed(0)} MB of facts), rounds: ${ROUNDS}`);
console.log(`node -e 0: median ${median(baseline).toFixed(0)} ms`);
console.log(
  `kata-install report --facts-dir: median ${median(measured).toFixed(0)} ms, fastest ${Math.min(...measured).toFixed(0)} ms (target < 2000 ms)`,
);
console.log(`floor (read + JSON.parse every file): median ${median(floor).toFixed(0)} ms`);
console.log(
  `ratio: ${(median(measured) / median(floor)).toFixed(2)}x of the floor (target ≤ 2.0x), ${(median(measured) / median(baseline)).toFixed(1)}x of node -e 0`,
);
if (other !== undefined)
  console.log(
    `${other}: median ${median(before).toFixed(0)} ms, ${(median(before) / median(floor)).toFixed(2)}x of the floor`,
  );
