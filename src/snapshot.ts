// The entry of the V8 start-up snapshot (dist/kata-install.blob, scripts/build.mjs): node runs this
// at build time with every module of the node's commands loaded and initialised, and a start from
// the blob begins there, with no module to read, compile or run first. A start from the blob is
// `node --snapshot-blob dist/kata-install.blob dist/cli.js <arguments>` (dist/kata-install): the
// same argv as the plain start.

import templates from "kata-install:precompiled-templates";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startupSnapshot } from "node:v8";
import { main } from "./cli.js";
import "./commands/facts.js";
import "./commands/node-side.js";
import "./commands/report.js";
import { dataPath, startedFrom } from "./package-root.js";
import { planPipeline } from "./pipeline.js";
import { readConfigFile } from "./release/config-file.js";
import { usePrecompiled } from "./render/templates.js";

usePrecompiled(templates);

/**
 * Run a plan once while the snapshot is built, on an empty host root of its own: the functions a
 * plan calls are compiled then, and their code kept in the blob, so a start from it compiles far
 * less (plan ~10–20 ms sooner in interleaved runs; bench/startup-snapshot.ts). Nothing of the run is kept that a later
 * run could take for its own: caches are keyed by content (the artifact catalogue) or made per
 * run, no environment is read into one (the build runs with an empty environment), and a plan
 * writes nothing. Its progress lines are not the build's: they go nowhere.
 */
async function warmUp(): Promise<void> {
  startedFrom(path.resolve("dist/cli.js"));
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-snapshot-"));
  const write = process.stderr.write;
  process.stderr.write = () => true;
  try {
    // Every plan parses the release's configuration files, which an empty host has none of: their
    // reader run once on kata-install's own TOML (rules/), for its code only.
    for (const file of fs.readdirSync(dataPath("rules")).filter((f) => f.endsWith(".toml")))
      readConfigFile(fs.readFileSync(dataPath("rules", file), "utf8"), file);
    await planPipeline({ hostRoot: root, json: true }, {});
  } catch {
    // A node with nothing on it plans nothing worth keeping: only the code it ran is.
  } finally {
    process.stderr.write = write;
    fs.rmSync(root, { recursive: true, force: true });
  }
}

function start(): void {
  // As a plain start has it: the script given, made absolute.
  process.argv[1] = path.resolve(process.argv[1] ?? "dist/cli.js");
  startedFrom(process.argv[1]);
  void main();
}
if (startupSnapshot.isBuildingSnapshot()) {
  void warmUp();
  startupSnapshot.setDeserializeMainFunction(start);
} else start();
