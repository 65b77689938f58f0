// The figures behind two dependency choices (README, "Why these dependencies").
//  - smol-toml rather than @iarna/toml, the long-time default: parse and stringify the two
//    documents kata-install reads and writes most (containerd's configuration with the Kata
//    handlers, Kata's configuration-qemu.toml, both as `plan` renders them on a test host),
//    interleaved in one process with @iarna/toml as the baseline; what each does with the TOML
//    that containerd's and Kata's files use; the size each adds to the bundle and to node_modules.
//  - node:child_process rather than execa: what one spawn costs with execFile (`true`); with
//    EXECA_DIR=DIR holding node_modules/execa (README), what loading execa would add. execa is not
//    a dependency, not even a dev one.
// Run: npx tsx bench/deps.bench.ts   (BENCH_ROUNDS=31 for steadier figures)
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import iarna from "@iarna/toml";
import { build } from "esbuild";
import * as smol from "smol-toml";
import { intelContainerd16 } from "../test/helpers/nodes.js";
import { planOn } from "../test/helpers/plan.js";
import { buildHost, removeTestHosts } from "../test/helpers/test-host.js";
import { median, time } from "./timing.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);

interface Toml {
  parse(text: string): unknown;
  stringify(value: never): string;
}
const libraries: Record<string, Toml> = {
  "@iarna/toml": iarna as unknown as Toml,
  "smol-toml": smol as unknown as Toml,
};

// --- The documents, as kata-install writes them.
const { changeset } = await planOn(buildHost(intelContainerd16()).host);
removeTestHosts();
const document = (suffix: string): string => {
  const found = changeset.changes.find((c) => c.path.endsWith(suffix))?.after;
  if (!found) throw new Error(`no ${suffix} in the plan`);
  return found;
};
const documents = {
  "containerd config.toml": document("/etc/containerd/config.toml"),
  "configuration-qemu.toml": document("/configuration-qemu.toml"),
};

// --- Speed: each library in turn within a round, so that a busy machine slows both alike.
function perCall(fn: () => void, calls: number): number {
  const started = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) fn();
  return Number(process.hrtime.bigint() - started) / 1e3 / calls; // µs
}
console.log(`rounds: ${ROUNDS} (median µs per call; ratio: @iarna/toml's time over smol-toml's)`);
for (const [name, text] of Object.entries(documents)) {
  const lines = text.split("\n").length;
  const parsed = Object.fromEntries(Object.entries(libraries).map(([lib, l]) => [lib, l.parse(text)]));
  // Both read the same values (dates aside, which these files do not hold).
  if (JSON.stringify(parsed["smol-toml"]) !== JSON.stringify(parsed["@iarna/toml"]))
    throw new Error(`${name}: the two libraries read different values`);
  for (const op of ["parse", "stringify"] as const) {
    const times: Record<string, number[]> = { "@iarna/toml": [], "smol-toml": [] };
    for (let round = 0; round <= ROUNDS; round++) {
      for (const [lib, l] of Object.entries(libraries)) {
        const value = parsed[lib] as never;
        const us = perCall(op === "parse" ? () => l.parse(text) : () => l.stringify(value), 50);
        if (round > 0) times[lib]?.push(us); // round 0 warms the JIT
      }
    }
    const iarnaUs = median(times["@iarna/toml"] ?? []);
    const smolUs = median(times["smol-toml"] ?? []);
    console.log(
      `${op} ${name} (${text.length} bytes, ${lines} lines): @iarna/toml ${iarnaUs.toFixed(0)} µs, ` +
        `smol-toml ${smolUs.toFixed(0)} µs: ratio ${(iarnaUs / smolUs).toFixed(2)}x`,
    );
  }
}

// --- TOML as containerd's and Kata's files use it. valid: what TOML 1.0.0 says; null where both
// outcomes are right (an integer JavaScript cannot hold: exactly, or an error; TOML 1.1's syntax).
const cases: { name: string; text: string; valid: boolean | null }[] = [
  {
    name: "dotted keys with quoted parts (containerd 1.x)",
    text: 'version = 2\n[plugins]\n"io.containerd.grpc.v1.cri".containerd.default_runtime_name = "runc"\n',
    valid: true,
  },
  {
    name: "single-quoted keys in a table header (containerd 2.x)",
    text: "[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.kata-qemu]\nruntime_type = 'io.containerd.kata-qemu.v2'\n",
    valid: true,
  },
  {
    name: "a sub-table of a table made by dotted keys",
    text: '[plugins]\ncri.containerd.snapshotter = "overlayfs"\n[plugins.cri.registry]\nconfig_path = "/etc/containerd/certs.d"\n',
    valid: true,
  },
  { name: "mixed-type array", text: 'kernel_params = ["quiet", 1, { a = true }]\n', valid: true },
  {
    name: "a [table] header for a table made by dotted keys",
    text: '[plugins]\ncri.containerd.snapshotter = "overlayfs"\n[plugins.cri.containerd]\nx = 1\n',
    valid: false,
  },
  { name: "a key defined twice, as a careless merge makes", text: "a = 1\na = 2\n", valid: false },
  { name: "a table defined twice", text: "[a]\nb = 1\n[a]\nc = 2\n", valid: false },
  {
    name: "a dotted key extending an inline table",
    text: "a = { b = 1 }\na.c = 2\n",
    valid: false,
  },
  { name: "an integer beyond 2^53", text: "memory_limit = 9223372036854775807\n", valid: null },
  { name: "TOML 1.1: an inline table over two lines", text: "a = { b = 1,\n  c = 2 }\n", valid: null },
];
console.log("\nTOML cases (what TOML 1.0.0 asks, then what each library does):");
for (const c of cases) {
  const outcomes = Object.entries(libraries).map(([lib, l]) => {
    let outcome: string;
    try {
      const value = l.parse(c.text) as { memory_limit?: unknown };
      outcome = typeof value.memory_limit === "bigint" ? "parsed, as a BigInt" : "parsed";
    } catch {
      outcome = "refused";
    }
    const wrong = c.valid !== null && c.valid !== outcome.startsWith("parsed");
    return `${lib} ${outcome}${wrong ? " (WRONG)" : ""}`;
  });
  const asked = c.valid === null ? "either" : c.valid ? "valid" : "invalid";
  console.log(`  ${c.name} [${asked}]: ${outcomes.join(", ")}`);
}

// --- Size: what each adds to dist/ (bundled and minified as scripts/build.mjs does), and on disk.
async function bundled(specifier: string, names: string, resolveDir = process.cwd()): Promise<Uint8Array> {
  const result = await build({
    stdin: { contents: `export { ${names} } from "${specifier}";`, resolveDir },
    bundle: true,
    write: false,
    minify: true,
    format: "esm",
    platform: "node",
    target: "node20",
    logLevel: "silent",
    // As scripts/build.mjs: CommonJS dependencies bundled into ESM require() Node's built-ins.
    banner: {
      js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
    },
  });
  const output = result.outputFiles[0];
  if (!output) throw new Error(`esbuild bundled nothing for ${specifier}`);
  return output.contents;
}
function treeBytes(dir: string): number {
  let total = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    total += entry.isDirectory() ? treeBytes(file) : fs.lstatSync(file).size;
  }
  return total;
}
const kB = (bytes: number) => `${(bytes / 1024).toFixed(1)} kB`;
console.log("\nsize (bundled: parse and stringify, minified; installed: the package's files):");
for (const lib of Object.keys(libraries)) {
  const version = JSON.parse(fs.readFileSync(`node_modules/${lib}/package.json`, "utf8")).version;
  const installed = treeBytes(path.join("node_modules", lib));
  console.log(
    `  ${lib} ${version}: bundled ${kB((await bundled(lib, "parse, stringify")).length)}, installed ${kB(installed)}`,
  );
}

// --- Spawning: execFile of `true`, sequentially, against the whole of `node -e 0` for scale.
const execFileAsync = promisify(execFile);
const spawns: number[] = [];
for (let i = 0; i <= ROUNDS * 4; i++) {
  const started = process.hrtime.bigint();
  await execFileAsync("true");
  if (i > 0) spawns.push(Number(process.hrtime.bigint() - started) / 1e6);
}
const nodeStart = Array.from({ length: ROUNDS }, () => time(["-e", "0"]));
console.log(
  `\nchild_process.execFile("true"): median ${median(spawns).toFixed(2)} ms a spawn` +
    ` (node -e 0: median ${median(nodeStart).toFixed(1)} ms)`,
);

const execaDir = process.env.EXECA_DIR;
if (execaDir) {
  const modules = path.join(execaDir, "node_modules");
  const version = JSON.parse(fs.readFileSync(path.join(modules, "execa", "package.json"), "utf8")).version;
  // As dist/ would hold it: bundled and minified, then loaded; also as installed, unbundled.
  const bundleFile = path.join(execaDir, "execa-bundle.mjs");
  fs.writeFileSync(bundleFile, await bundled("execa", "execa", execaDir));
  const importing = (file: string) => ["--input-type=module", "-e", `await import(${JSON.stringify(file)})`];
  const baseline: number[] = [];
  const unbundled: number[] = [];
  const fromBundle: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    baseline.push(time(["-e", "0"]));
    unbundled.push(time(importing(path.join(modules, "execa", "index.js"))));
    fromBundle.push(time(importing(bundleFile)));
  }
  const over = (xs: number[]) => `${(median(xs) - median(baseline)).toFixed(1)} ms`;
  // Packages, nested ones too: as npm recorded them.
  const packages = Object.keys(
    JSON.parse(fs.readFileSync(path.join(modules, ".package-lock.json"), "utf8")).packages,
  );
  console.log(
    `execa ${version}: load over node -e 0 ${over(fromBundle)} bundled (${kB(fs.statSync(bundleFile).size)}), ` +
      `${over(unbundled)} as installed; ${packages.length} packages, ${kB(treeBytes(modules))} installed`,
  );
}
