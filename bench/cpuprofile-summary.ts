// Where a run's CPU time went, from `node --cpu-prof` profiles (the mean over the files given):
// compiling kata-install's modules, compiling Node's own built-ins as they are first required, the
// module loader, each bundle file's top-level code, starting host commands, GC, and the rest (the
// run's real work); then self time by original source file, through dist/'s source maps.
// Run: node --cpu-prof --cpu-prof-dir /tmp/prof dist/cli.js plan --json … (a few times), then
//      npx tsx bench/cpuprofile-summary.ts /tmp/prof/*.cpuprofile
import fs from "node:fs";
import { SourceMap } from "node:module";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const files = process.argv.slice(2);
if (files.length === 0) throw new Error("usage: npx tsx bench/cpuprofile-summary.ts <file.cpuprofile>…");
const maps = new Map<string, SourceMap | null>();
function sourceOf(frame: CallFrame): string {
  if (frame.url.startsWith("node:")) return "node:internal";
  if (!frame.url.startsWith("file:")) return frame.functionName || "(native)";
  if (!maps.has(frame.url)) {
    const map = `${new URL(frame.url).pathname}.map`;
    maps.set(frame.url, fs.existsSync(map) ? new SourceMap(JSON.parse(fs.readFileSync(map, "utf8"))) : null);
  }
  const entry = maps.get(frame.url)?.findEntry(frame.lineNumber, frame.columnNumber);
  const source = entry && "originalSource" in entry ? entry.originalSource : frame.url;
  return source.replace(/.*node_modules\//, "node_modules/").replace(/.*\/src\//, "src/");
}
const short = (url: string) => url.replace(/.*\/dist\//, "dist/");

/** The innermost frame that says what a sample was doing. */
function category(stack: CallFrame[]): string {
  const leaf = stack[0] as CallFrame;
  if (leaf.functionName === "(garbage collector)") return "GC";
  if (leaf.functionName === "(idle)") return "idle (waiting)";
  if (leaf.functionName === "(program)") return "(program): V8 and Node, unattributed";
  for (const frame of stack) {
    if (frame.functionName === "compileSourceTextModule") return "compile: kata-install's modules";
    if (frame.functionName === "compileForInternalLoader") return "compile: Node's built-ins, first required";
    if (frame.functionName === "spawn" && frame.url.includes("child_process"))
      return "starting host commands";
  }
  const ours = stack.filter((f) => f.url.includes("/dist/"));
  const outer = ours[ours.length - 1];
  if (outer === undefined) return "Node: module loader, bootstrap, streams";
  // A module's top level is the function at its line 0, column 0.
  if (outer.lineNumber === 0 && outer.columnNumber === 0) return `top level of ${short(outer.url)}`;
  return `the run: code in ${short(outer.url)}`;
}

const categories = new Map<string, number>();
const sources = new Map<string, number>();
const add = (m: Map<string, number>, k: string, us: number) => m.set(k, (m.get(k) ?? 0) + us / files.length);
let total = 0;
for (const file of files) {
  const profile = JSON.parse(fs.readFileSync(file, "utf8")) as Profile;
  total += (profile.endTime - profile.startTime) / files.length;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i + 1] ?? 0;
    const stack: CallFrame[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at))
      stack.push((byId.get(at) as ProfileNode).callFrame);
    add(categories, category(stack), us);
    add(sources, sourceOf(stack[0] as CallFrame), us);
  });
}
const show = (m: Map<string, number>, n: number) => {
  for (const [k, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, n))
    console.log(`  ${(us / 1000).toFixed(1).padStart(6)} ms  ${k}`);
};
console.log(
  `${files.length} profile(s), ${(total / 1000).toFixed(1)} ms each on average (after Node's start)`,
);
show(categories, 20);
console.log("self time by source file:");
show(sources, 25);
