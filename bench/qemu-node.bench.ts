// A qemu node's install through the CLI, as a node runs it, from an OCI layout of gzip layers (what
// a registry serves) and of tar layers, against its floor: sha256 of the files it installs, `cp -a`
// of them and `sync`, interleaved in the same run. The release is 4.1.0's (the lists in
// test/fixtures/release), every file the node pulls at its listed size (half random, half zeros,
// MiB by MiB), the rest stand-ins. Run: npm run bench   (targets: gzip ≤ 1.5×, tar ≤ 1.3×)
import { spawnSync } from "node:child_process";
import { createCipheriv, createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadArtifactCatalogue } from "../src/artifacts/catalogue.js";
import { ociLayoutSource } from "../src/artifacts/oci-layout.js";
import { splitRelease } from "../src/install/split.js";
import { criStandIn } from "../test/helpers/cri-stand-in.js";
import { intelContainerd16 } from "../test/helpers/nodes.js";
import { buildRelease, RELEASES, readList } from "../test/helpers/release.js";
import { buildHost, removeTestHosts } from "../test/helpers/test-host.js";
import { benchEnv, median, pullInto } from "./timing.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const cli = path.resolve("dist/cli.js");
const work = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-qemu-bench-"));
const catalogue = loadArtifactCatalogue();

function host() {
  const spec = intelContainerd16();
  spec.commands = { ...spec.commands, "/usr/bin/systemctl": "exit 0" };
  return buildHost(spec);
}

function install(layout: string, root: string): { ms: number; stdout: string } {
  const started = process.hrtime.bigint();
  const run = spawnSync(
    process.execPath,
    // BENCH_NODE_ARGS: for a look inside (--cpu-prof --cpu-prof-dir=DIR).
    [
      ...(process.env.BENCH_NODE_ARGS?.split(" ").filter(Boolean) ?? []),
      cli,
      "install",
      "--host-root",
      root,
      "--artifacts",
      `oci-layout:${layout}`,
      "--shims",
      "qemu",
      "--json",
    ],
    { encoding: "utf8", env: benchEnv() },
  );
  if (run.status !== 0) throw new Error(`install failed: ${run.stderr}`);
  spawnSync("sync");
  return { ms: Number(process.hrtime.bigint() - started) / 1e6, stdout: run.stdout };
}

// The containerd socket of every host answers as containerd would (the tests' CRI stand-in).
const alive = setInterval(() => {}, 1000);
const servers: Array<{ close(): void }> = [];
async function freshHost(): Promise<string> {
  const h = host();
  const socket = path.join(h.root, "run/containerd/containerd.sock");
  fs.rmSync(socket);
  servers.push(await criStandIn(socket));
  return h.root;
}

// 1. Which files a qemu node installs: a plan on a stand-in release, its pulls' file lists.
const standIn = buildRelease("x86_64");
const probeLayout = path.join(work, "probe");
await splitRelease(standIn.tarballs, probeLayout, catalogue, "x86_64", "tar");
const probe = spawnSync(
  process.execPath,
  [
    cli,
    "plan",
    "--host-root",
    await freshHost(),
    "--artifacts",
    `oci-layout:${probeLayout}`,
    "--shims",
    "qemu",
    "--json",
  ],
  { encoding: "utf8", env: benchEnv() },
);
const pulled = (JSON.parse(probe.stdout).actions as Array<{ kind: string; target: string }>)
  .filter((a) => a.kind === "pull-artifact")
  .map((a) => a.target);
if (pulled.length === 0) throw new Error(`no artifact pulled: ${probe.stdout.slice(0, 400)}`);
const source = ociLayoutSource(probeLayout, catalogue, "x86_64");
const files = new Set<string>();
for (const artifact of pulled)
  for (const e of await source.list(artifact)) if (e.type === "file") files.add(`opt/kata/${e.path}`);
fs.rmSync(standIn.dir, { recursive: true, force: true });

// 2. The release again, those files at their listed size.
const sizes = new Map(
  RELEASES.x86_64
    .flatMap((name) => readList(name))
    .filter((e) => e.type === "f")
    .map((e) => [e.path, e.size]),
);
let bytes = 0;
const release = buildRelease("x86_64", (_name, tree) => {
  for (const file of files) {
    const at = path.join(tree, file);
    const size = sizes.get(file) ?? 0;
    // The binaries and images: the configurations and scripts stay the release's own.
    if (!fs.existsSync(at) || size < 256 * 1024 || file.endsWith(".toml")) continue;
    // The same bytes for the same file in every tarball that has it (the release's shared files
    // are one file): a keystream seeded by its path.
    const key = createHash("sha256").update(file).digest();
    const stream = createCipheriv("aes-256-ctr", key, Buffer.alloc(16));
    const fd = fs.openSync(at, "w");
    for (let done = 0, i = 0; done < size; i++) {
      const n = Math.min(1 << 20, size - done);
      fs.writeSync(fd, i % 2 ? stream.update(Buffer.alloc(n)) : Buffer.alloc(n));
      done += n;
    }
    fs.closeSync(fd);
    bytes += size;
  }
});
const layouts = { gzip: path.join(work, "layout-gzip"), tar: path.join(work, "layout-tar") } as const;
for (const [kind, layout] of Object.entries(layouts))
  await splitRelease(release.tarballs, layout, catalogue, "x86_64", kind as "gzip" | "tar");
fs.rmSync(release.dir, { recursive: true, force: true });

// 3. The floor: the files the install put on a node, read through sha256, copied, synced.
const installedOn = await freshHost();
install(layouts.tar, installedOn);
const tree = fs.realpathSync(path.join(installedOn, "opt/kata/current"));
function floor(target: string): number {
  const started = process.hrtime.bigint();
  const buffer = Buffer.allocUnsafe(1 << 20);
  for (const entry of fs.readdirSync(tree, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const hash = createHash("sha256");
    const fd = fs.openSync(path.join(entry.parentPath, entry.name), "r");
    for (let n = fs.readSync(fd, buffer); n > 0; n = fs.readSync(fd, buffer))
      hash.update(buffer.subarray(0, n));
    fs.closeSync(fd);
    hash.digest();
  }
  spawnSync("cp", ["-a", tree, target]);
  spawnSync("sync");
  return Number(process.hrtime.bigint() - started) / 1e6;
}

/** The pull alone, in this process: the node's artifacts staged and switched in, synced. */
const pull = (layout: string, root: string) => pullInto(layout, root, pulled, catalogue);

const floors: number[] = [];
const runs = { gzip: [] as number[], tar: [] as number[] };
const pulls = { gzip: [] as number[], tar: [] as number[] };
for (let i = 0; i < ROUNDS; i++) {
  const target = path.join(work, `cp-${i}`);
  floors.push(floor(target));
  fs.rmSync(target, { recursive: true, force: true });
  for (const kind of ["gzip", "tar"] as const) {
    const root = await freshHost();
    runs[kind].push(install(layouts[kind], root).ms);
    fs.rmSync(root, { recursive: true, force: true });
    const bare = path.join(work, `pull-${kind}-${i}`);
    pulls[kind].push(await pull(layouts[kind], bare));
    fs.rmSync(bare, { recursive: true, force: true });
  }
}
for (const s of servers) s.close();
clearInterval(alive);
removeTestHosts();
fs.rmSync(work, { recursive: true, force: true });

const TARGETS = { gzip: 1.5, tar: 1.3 };
console.log(
  `a qemu node: ${pulled.length} artifacts (${pulled.sort().join(", ")}), ${(bytes / 2 ** 20).toFixed(1)} MiB; rounds: ${ROUNDS}`,
);
console.log(`floor (sha256 + cp -a + sync of the installed files): median ${median(floors).toFixed(0)} ms`);
const ratio = (xs: number[]) => (median(xs) / median(floors)).toFixed(2);
for (const kind of ["gzip", "tar"] as const)
  console.log(
    `from a ${kind} layout: the pull ${median(pulls[kind]).toFixed(0)} ms, ${ratio(pulls[kind])}x of the floor (target ≤ ${TARGETS[kind]}x); the whole \`kata-install install\` (plan, restart, check) ${median(runs[kind]).toFixed(0)} ms, ${ratio(runs[kind])}x`,
  );
