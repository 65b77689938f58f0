// How much `kata-install facts --json` costs over starting Node itself, on a test host rich enough to
// exercise every source (GPU, SR-IOV, distro qemu, k3s: five host commands).
// Run: npm run bench   (no target: start-up targets are withdrawn; the ratio is watched)
import path from "node:path";
import { gpuDistroQemuK3s } from "../test/helpers/nodes.js";
import { buildHost, removeTestHosts } from "../test/helpers/test-host.js";
import { compare } from "./timing.js";

const host = buildHost(gpuDistroQemuK3s());
compare(
  "kata-install facts --json (GPU/k3s test host)",
  [path.resolve("dist/cli.js"), "facts", "--json", "--host-root", host.root],
  Number(process.env.BENCH_ROUNDS ?? 25),
);
removeTestHosts();
