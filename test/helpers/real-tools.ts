// The real runtimes scripts/test-tools.sh fetched from Debian's suites (its cache's tools.tsv): the
// containerd of each minor, nydus-snapshotter, erofs-utils and CRI's api.proto. A test that needs
// one and finds the cache without it fails, naming the script that fetches it: never a skip.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

export type ContainerdMinor = "1.6" | "1.7" | "2";
export const CONTAINERD_MINORS: readonly ContainerdMinor[] = ["1.6", "1.7", "2"];

export interface RealTool {
  name: string;
  /** containerd's "1.6", "1.7", "2"; erofs-utils' "1.8"; … */
  minor: string;
  suite: string;
  /** The Debian package's version. */
  package: string;
  path: string;
  /** What the tool says of its own version (`containerd --version`'s line). */
  versionLine: string;
}

let tools: RealTool[] | null = null;

function cacheDir(): string {
  return execFileSync(path.join(import.meta.dirname, "../../scripts/test-tools.sh"), ["--dir"], {
    encoding: "utf8",
  }).trim();
}

export function realTools(): RealTool[] {
  if (tools !== null) return tools;
  const index = path.join(cacheDir(), "current/tools.tsv");
  if (!fs.existsSync(index))
    throw new Error(
      `the real runtimes are not fetched (${index}): run scripts/test-tools.sh (npm test does)`,
    );
  tools = fs
    .readFileSync(index, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [name = "", minor = "", suite = "", pkg = "", file = "", versionLine = ""] = line.split("\t");
      return { name, minor, suite, package: pkg, path: file, versionLine: versionLine.trim() };
    });
  return tools;
}

export function realTool(name: string, minor: string): RealTool {
  const found = realTools().find((t) => t.name === name && t.minor === minor);
  if (!found) throw new Error(`no ${name} ${minor} in the real runtimes' cache: run scripts/test-tools.sh`);
  return found;
}

/** The containerd binary of a minor, and its ctr beside it. */
export function containerdOf(minor: ContainerdMinor): { containerd: string; ctr: string; tool: RealTool } {
  const tool = realTool("containerd", minor);
  return { containerd: tool.path, ctr: path.join(path.dirname(tool.path), "ctr"), tool };
}

/** The minor whose real binary judges a node that says it runs `version` (1.6.x, 1.7.x, 2.x). */
export function minorOf(version: string): ContainerdMinor {
  if (version.startsWith("1.6")) return "1.6";
  if (version.startsWith("1.7")) return "1.7";
  if (version.startsWith("2.")) return "2";
  throw new Error(`no real containerd for version ${version}`);
}

/**
 * A test host's stub `containerd --version`: the real binary's own line, so detection reads what a
 * node with that containerd prints.
 */
export function containerdVersionStub(minor: ContainerdMinor): string {
  return `echo ${JSON.stringify(containerdOf(minor).tool.versionLine)}`;
}
