// The entry of the V8 start-up snapshot (dist/kata-install.blob, scripts/build.mjs): node runs this
// at build time with every module of the node's commands loaded and initialised, and a start from
// the blob begins there, with no module to read, compile or run first. A start from the blob is
// `node --snapshot-blob dist/kata-install.blob dist/cli.js <arguments>` (dist/kata-install): the
// same argv as the plain start.

import templates from "kata-install:precompiled-templates";
import path from "node:path";
import { startupSnapshot } from "node:v8";
import { main } from "./cli.js";
import "./commands/facts.js";
import "./commands/node-side.js";
import "./commands/report.js";
import { startedFrom } from "./package-root.js";
import { usePrecompiled } from "./render/templates.js";
import { warmUpPlan } from "./snapshot-warm-up.js";

usePrecompiled(templates);

/**
 * Plan a made-up node once while the snapshot is built (src/snapshot-warm-up.ts): the functions a
 * plan calls are compiled then, and their code kept in the blob, so a start from it compiles far
 * less (plan and install ~10 ms sooner than after a plan of an empty node; bench/startup-snapshot.ts).
 * Nothing of the run is kept that a later run could take for its own: caches are keyed by content
 * (the artifact catalogue) or made per run, no environment is read into one (the build runs with
 * an empty environment), and the plan writes nothing on the node. Its progress lines are not the
 * build's: they go nowhere. A warm-up that fails fails the build: it would only be slower, but
 * silently.
 */
async function warmUp(): Promise<void> {
  startedFrom(path.resolve("dist/cli.js"));
  const write = process.stderr.write;
  process.stderr.write = () => true;
  try {
    await warmUpPlan();
  } finally {
    process.stderr.write = write;
  }
}

function start(): void {
  // As a plain start has it: the script given, made absolute.
  process.argv[1] = path.resolve(process.argv[1] ?? "dist/cli.js");
  startedFrom(process.argv[1]);
  void main();
}
if (startupSnapshot.isBuildingSnapshot()) {
  warmUp().catch((error: unknown) => {
    console.error("the start-up snapshot's warm-up plan failed:", error);
    process.exitCode = 1;
  });
  startupSnapshot.setDeserializeMainFunction(start);
} else start();
