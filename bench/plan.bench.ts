// How much `kata-install plan` costs over starting Node itself: detect, decide (rules loaded and
// checked), render every chosen shim's configuration and the containerd edit, diff them.
// Run: npm run bench   (target: under 3×)
import path from "node:path";
import { intelContainerd16 } from "../test/helpers/nodes.js";
import { buildHost, removeTestHosts } from "../test/helpers/test-host.js";
import { compare } from "./timing.js";

const host = buildHost(intelContainerd16());
compare(
  "kata-install plan --json (Intel/containerd 1.6 test host)",
  [path.resolve("dist/cli.js"), "plan", "--json", "--host-root", host.root],
  Number(process.env.BENCH_ROUNDS ?? 25),
  3,
);
removeTestHosts();
