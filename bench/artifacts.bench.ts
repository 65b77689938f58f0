// Installing a 300 MB artifact from an OCI layout (digest checks, gunzip, tar, staging, switch),
// from uncompressed and from gzipped layers, against its floor — sha256 of the files, `cp -a` of
// them and `sync` — interleaved in the same run. Run: npm run bench   (targets: ≤ 1.3× and ≤ 1.8×)
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadArtifactCatalogue } from "../src/artifacts/catalogue.js";
import { splitRelease } from "../src/install/split.js";
import { median, pullInto } from "./timing.js";

const MB = Number(process.env.BENCH_MB ?? 300);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const work = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-artifact-bench-"));
const tree = path.join(work, "tree/opt/kata/bin");
fs.mkdirSync(tree, { recursive: true });
// Half random (a binary's entropy), half zeros, so gzip has work to do either way.
const file = path.join(tree, "qemu-system-x86_64");
const fd = fs.openSync(file, "w", 0o755);
for (let i = 0; i < MB; i++) fs.writeSync(fd, i % 2 ? randomBytes(1 << 20) : Buffer.alloc(1 << 20));
fs.closeSync(fd);
const tarball = path.join(work, "kata-static-bench-amd64.tar.gz");
execFileSync("tar", ["-C", path.join(work, "tree"), "-czf", tarball, "opt"]);
// The layouts `artifacts split` writes: uncompressed layers (--layers tar, for a node's own disk)
// and gzipped ones (what a registry serves), both measured in the same run.
const catalogue = loadArtifactCatalogue();
const layouts = { tar: path.join(work, "layout-tar"), gzip: path.join(work, "layout-gzip") } as const;
for (const [kind, layout] of Object.entries(layouts))
  await splitRelease(tarball, layout, catalogue, "x86_64", kind as "tar" | "gzip");

/**
 * The floor: what any install of these files must do — read them through sha256 (the digest is
 * what makes them trusted), copy them (`cp -a`) and `sync`.
 */
function sha256Of(at: string): string {
  const hash = createHash("sha256");
  const buffer = Buffer.allocUnsafe(1 << 20);
  const fd = fs.openSync(at, "r");
  for (let n = fs.readSync(fd, buffer); n > 0; n = fs.readSync(fd, buffer))
    hash.update(buffer.subarray(0, n));
  fs.closeSync(fd);
  return hash.digest("hex");
}

const parts = { sha256: [] as number[], cp: [] as number[], sync: [] as number[] };
function floor(target: string): number {
  const started = process.hrtime.bigint();
  const lap = (into: number[], since: bigint) => into.push(Number(process.hrtime.bigint() - since) / 1e6);
  let t = process.hrtime.bigint();
  // sha256 as fast as this machine does it: OpenSSL's, through Node (coreutils' sha256sum is
  // several times slower here, which would flatter every ratio).
  sha256Of(file);
  lap(parts.sha256, t);
  t = process.hrtime.bigint();
  execFileSync("cp", ["-a", path.join(work, "tree"), target]);
  lap(parts.cp, t);
  t = process.hrtime.bigint();
  execFileSync("sync");
  lap(parts.sync, t);
  return Number(process.hrtime.bigint() - started) / 1e6;
}

const install = (layout: string, root: string) => pullInto(layout, root, ["qemu"], catalogue);

const floors: number[] = [];
const runs = { tar: [] as number[], gzip: [] as number[] };
for (let i = 0; i < ROUNDS; i++) {
  const target = path.join(work, `cp-${i}`);
  floors.push(floor(target));
  fs.rmSync(target, { recursive: true, force: true });
  for (const kind of ["tar", "gzip"] as const) {
    const root = path.join(work, `host-${kind}-${i}`);
    runs[kind].push(await install(layouts[kind], root));
    fs.rmSync(root, { recursive: true, force: true });
  }
}
fs.rmSync(work, { recursive: true, force: true });
const TARGETS = { tar: 1.3, gzip: 1.8 };
console.log(`artifact: ${MB} MB, rounds: ${ROUNDS}`);
console.log(
  `floor (sha256 + cp -a + sync): median ${median(floors).toFixed(0)} ms (sha256 ${median(parts.sha256).toFixed(0)}, cp -a ${median(parts.cp).toFixed(0)}, sync ${median(parts.sync).toFixed(0)})`,
);
for (const kind of ["tar", "gzip"] as const)
  console.log(
    `install from a ${kind} layout: median ${median(runs[kind]).toFixed(0)} ms, ${(median(runs[kind]) / median(floors)).toFixed(2)}x of the floor (target ≤ ${TARGETS[kind]}x)`,
  );
