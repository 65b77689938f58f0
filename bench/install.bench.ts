// A second install of the same plan (nothing to do: lock, recovery check, plan, compare) against
// `node -e 0`. Run: npm run bench   (target: under 3×)
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { artifactDir } from "../test/helpers/artifacts.js";
import { intelContainerd16 } from "../test/helpers/nodes.js";
import { buildHost, removeTestHosts } from "../test/helpers/test-host.js";
import { compare } from "./timing.js";

const spec = intelContainerd16();
spec.commands = { ...spec.commands, "/usr/bin/systemctl": "exit 0" };
const host = buildHost(spec);
const artifacts = artifactDir();
const cli = path.resolve("dist/cli.js");
const args = [cli, "install", "--artifacts", `dir:${artifacts}`, "--host-root", host.root];

// The first install restarts containerd: something must answer on its socket meanwhile.
const socket = path.join(host.root, "run/containerd/containerd.sock");
fs.rmSync(socket);
const server = net.createServer((c) => c.end());
await new Promise<void>((resolve) => server.listen(socket, resolve));
const first = spawnSync(process.execPath, args, { encoding: "utf8" });
if (first.status !== 0) throw new Error(`first install failed: ${first.stderr}`);
server.close();

compare("kata-install install (no-op, second run)", args, Number(process.env.BENCH_ROUNDS ?? 25), 3);
removeTestHosts();
fs.rmSync(artifacts, { recursive: true, force: true });
