// Installing a 300 MB artifact from an OCI layout (digest checks, gunzip, tar, staging, switch)
// against `cp -a` of the same files, in the same run. Run: npm run bench   (target: under 1.5×)
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadArtifactCatalogue } from "../src/artifacts/catalogue.js";
import { Host } from "../src/host/host.js";
import { journalFor } from "../src/install/journal.js";
import { ociLayoutSource } from "../src/install/oci-layout.js";
import { splitRelease } from "../src/install/split.js";
import { installArtifacts } from "../src/install/switch.js";
import { median } from "./timing.js";

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
// The layout as `artifacts split` writes it: gzip layers by default, or uncompressed (--layers tar).
const LAYERS = process.env.BENCH_LAYERS === "gzip" ? "gzip" : "tar";
const layout = path.join(work, "layout");
const catalogue = loadArtifactCatalogue();
await splitRelease(tarball, layout, catalogue, "x86_64", LAYERS);

const copies: number[] = [];
const installs: number[] = [];
for (let i = 0; i < ROUNDS; i++) {
  const cpTarget = path.join(work, `cp-${i}`);
  let started = process.hrtime.bigint();
  execFileSync("cp", ["-a", path.join(work, "tree"), cpTarget]);
  execFileSync("sync");
  copies.push(Number(process.hrtime.bigint() - started) / 1e6);
  fs.rmSync(cpTarget, { recursive: true, force: true });

  const root = path.join(work, `host-${i}`);
  fs.mkdirSync(root);
  started = process.hrtime.bigint();
  await installArtifacts(
    journalFor(new Host({ root }), "/opt/kata"),
    "/opt/kata",
    ociLayoutSource(layout, catalogue, "x86_64"),
    ["qemu"],
  );
  execFileSync("sync");
  installs.push(Number(process.hrtime.bigint() - started) / 1e6);
  fs.rmSync(root, { recursive: true, force: true });
}
fs.rmSync(work, { recursive: true, force: true });
console.log(`artifact: ${MB} MB, ${LAYERS} layers, rounds: ${ROUNDS}`);
console.log(`cp -a: median ${median(copies).toFixed(0)} ms`);
console.log(`install from an OCI layout: median ${median(installs).toFixed(0)} ms`);
console.log(`ratio: ${(median(installs) / median(copies)).toFixed(2)}x (target < 1.5x)`);
