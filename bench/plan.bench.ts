// How much `kata-install plan` costs over starting Node itself: detect, decide (rules loaded and
// checked), render every chosen shim's configuration and the containerd edit, diff them, and check
// every path the configurations name against the artifacts' file lists (a dir: source).
// Run: npm run bench   (no target: start-up targets are withdrawn; the ratio is watched)
import fs from "node:fs";
import path from "node:path";
import { artifactDir } from "../test/helpers/artifacts.js";
import { intelContainerd16 } from "../test/helpers/nodes.js";
import { buildHost, removeTestHosts } from "../test/helpers/test-host.js";
import { compare } from "./timing.js";

const host = buildHost(intelContainerd16());
const artifacts = artifactDir();
compare(
  "kata-install plan --json (Intel/containerd 1.6 test host, artifacts from a directory)",
  [
    path.resolve("dist/cli.js"),
    "plan",
    "--json",
    "--host-root",
    host.root,
    "--artifacts",
    `dir:${artifacts}`,
  ],
  Number(process.env.BENCH_ROUNDS ?? 25),
);
removeTestHosts();
fs.rmSync(artifacts, { recursive: true, force: true });
