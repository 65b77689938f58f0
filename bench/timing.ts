// Timing a command against `node -e 0`, interleaved in one process so that a busy machine slows
// both alike; the figure is the ratio of their medians.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import type { ArtifactCatalogue } from "../src/artifacts/catalogue.js";
import { ociLayoutSource } from "../src/artifacts/oci-layout.js";
import { Host } from "../src/host/host.js";
import { journalFor } from "../src/install/journal.js";
import { installArtifacts } from "../src/install/switch.js";

/**
 * The environment every timed process runs in: this one's without NODE_EXTRA_CA_CERTS. Node 20
 * parses that bundle at every start, TLS or not (~90 ms on these machines, more than `node -e 0`
 * takes without it); a node does not set it, and a floor that holds it makes every ratio look
 * smaller than it is.
 */
export function benchEnv(): NodeJS.ProcessEnv {
  const { NODE_EXTRA_CA_CERTS: _ignored, ...env } = process.env;
  return env;
}

export function time(args: string[]): number {
  const started = process.hrtime.bigint();
  const run = spawnSync(process.execPath, args, { stdio: ["ignore", "ignore", "ignore"], env: benchEnv() });
  if (run.status !== 0 && run.status !== 2) throw new Error(`node ${args.join(" ")} exited ${run.status}`);
  return Number(process.hrtime.bigint() - started) / 1e6;
}

export function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

export function compare(label: string, args: string[], rounds: number): void {
  const baseline: number[] = [];
  const measured: number[] = [];
  time(["-e", "0"]); // warm the file cache for both
  time(args);
  for (let i = 0; i < rounds; i++) {
    baseline.push(time(["-e", "0"]));
    measured.push(time(args));
  }
  const ratio = median(measured) / median(baseline);
  // The fastest runs are the least disturbed by the rest of a shared machine: their ratio too.
  const fastest = Math.min(...measured) / Math.min(...baseline);
  console.log(`rounds: ${rounds}`);
  console.log(
    `node -e 0: median ${median(baseline).toFixed(1)} ms, fastest ${Math.min(...baseline).toFixed(1)} ms`,
  );
  console.log(
    `${label}: median ${median(measured).toFixed(1)} ms, fastest ${Math.min(...measured).toFixed(1)} ms`,
  );
  console.log(`ratio: ${ratio.toFixed(2)}x of medians, ${fastest.toFixed(2)}x of fastest runs`);
}

/**
 * Artifacts pulled into a fresh host root from an OCI layout, in this process (installArtifacts:
 * staged, switched in), then `sync`: the milliseconds it took.
 */
export async function pullInto(
  layout: string,
  root: string,
  artifacts: string[],
  catalogue: ArtifactCatalogue,
): Promise<number> {
  fs.mkdirSync(root);
  const started = process.hrtime.bigint();
  await installArtifacts(
    journalFor(new Host({ root }), "/opt/kata"),
    "/opt/kata",
    ociLayoutSource(layout, catalogue, "x86_64"),
    artifacts,
  );
  spawnSync("sync");
  return Number(process.hrtime.bigint() - started) / 1e6;
}
