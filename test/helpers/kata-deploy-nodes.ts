// The nodes kata-deploy 4.1.0's own binary left (test/fixtures/kata-deploy/nodes-4.1.0, see its
// SOURCES.md): laid out as a test host root from the copied tree and the manifest — every directory
// and link with its mode and target, every file kata-deploy wrote byte for byte, and the release's
// stand-in binaries and images (not copied) made again, each of its mode holding its own path.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export const KATA_DEPLOY_NODES = [
  "containerd-1.6",
  "containerd-1.7",
  "containerd-2.1-suffix",
  "crio",
  "k3s",
  "takeover-18-containerd-1.6",
] as const;
export type KataDeployNode = (typeof KATA_DEPLOY_NODES)[number];

const FIXTURES = path.join(import.meta.dirname, "../fixtures/kata-deploy/nodes-4.1.0");

/** The node's environment, as the chart gave kata-deploy's pod. */
export function deployEnv(node: KataDeployNode): Record<string, string> {
  const text = fs.readFileSync(path.join(FIXTURES, `${node}.meta/env`), "utf8");
  return Object.fromEntries(
    text
      .split("\n")
      .filter((line) => line.includes("=") && !line.startsWith("KATA_STUB_"))
      .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
  );
}

/** A file of the node's as kata-deploy left it. */
export function deployFile(node: KataDeployNode, file: string): string {
  return fs.readFileSync(path.join(FIXTURES, node, file), "utf8");
}

/** Lay `node` out under `root` (a new directory when not given); returns the root. */
export function layOutDeployNode(
  node: KataDeployNode,
  root = fs.mkdtempSync(path.join(os.tmpdir(), `kata-deploy-${node}-`)),
): string {
  const tree = path.join(FIXTURES, node);
  const lines = fs
    .readFileSync(path.join(FIXTURES, `${node}.manifest.tsv`), "utf8")
    .split("\n")
    .filter(Boolean);
  const entries = lines.map((line) => {
    const [type = "", mode = "", , rel = "", target = ""] = line.split("\t");
    return { type, mode: Number.parseInt(mode, 8), rel, target };
  });
  for (const e of entries.filter((e) => e.type === "d"))
    fs.mkdirSync(path.join(root, e.rel), { recursive: true });
  for (const e of entries) {
    const at = path.join(root, e.rel);
    if (e.type === "l") {
      fs.mkdirSync(path.dirname(at), { recursive: true });
      fs.symlinkSync(e.target, at);
    } else if (e.type === "f") {
      const copied = path.join(tree, e.rel);
      fs.mkdirSync(path.dirname(at), { recursive: true });
      if (fs.existsSync(copied)) fs.copyFileSync(copied, at);
      else fs.writeFileSync(at, `stand-in for /${e.rel}\n`);
      fs.chmodSync(at, e.mode);
    }
  }
  // Modes of directories last: a read-only one would stop the writes under it.
  for (const e of entries.filter((e) => e.type === "d").reverse())
    fs.chmodSync(path.join(root, e.rel), e.mode);
  return root;
}
