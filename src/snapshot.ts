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

usePrecompiled(templates);
function start(): void {
  // As a plain start has it: the script given, made absolute.
  process.argv[1] = path.resolve(process.argv[1] ?? "dist/cli.js");
  startedFrom(process.argv[1]);
  void main();
}
if (startupSnapshot.isBuildingSnapshot()) startupSnapshot.setDeserializeMainFunction(start);
else start();
