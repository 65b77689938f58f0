// A second install of the same plan (nothing to do: lock, recovery check, plan, compare) against
// `node -e 0`. Run: npm run bench   (no target: start-up targets are withdrawn; the ratio is watched)
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { artifactDir } from "../test/helpers/artifacts.js";
import { criStandIn } from "../test/helpers/cri-stand-in.js";
import { intelContainerd16 } from "../test/helpers/nodes.js";
import { buildHost, removeTestHosts } from "../test/helpers/test-host.js";
import { compare } from "./timing.js";

const spec = intelContainerd16();
spec.commands = { ...spec.commands, "/usr/bin/systemctl": "exit 0" };
const host = buildHost(spec);
const artifacts = artifactDir();
const cli = path.resolve("dist/cli.js");
const args = [cli, "install", "--artifacts", `dir:${artifacts}`, "--host-root", host.root];

// The first install restarts containerd and asks it over CRI what it serves: the tests' stand-in
// answers as containerd would on the files written.
const socket = path.join(host.root, "run/containerd/containerd.sock");
fs.rmSync(socket);
// (Its server process is not waited for by itself: a timer keeps this one alive meanwhile.)
const alive = setInterval(() => {}, 1000);
const server = await criStandIn(socket);
const first = spawnSync(process.execPath, args, { encoding: "utf8" });
if (first.status !== 0) throw new Error(`first install failed: ${first.stderr}`);
server.close();
clearInterval(alive);

compare("kata-install install (no-op, second run)", args, Number(process.env.BENCH_ROUNDS ?? 25));
removeTestHosts();
fs.rmSync(artifacts, { recursive: true, force: true });
