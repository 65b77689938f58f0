// `npm start`: the whole job, shown. On a Kubernetes node, this node's plan (nothing is written).
// Anywhere else, an example node's (examples/node.facts.json) against an example release (Kata
// 4.1.0's files as its own lists name them, stand-in bytes, its real configurations), saying which
// and how to point it at a real node and release. KATA_INSTALL_START=node|example chooses.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { artifactDir } from "../test/helpers/artifacts.js";

const ROOT = path.resolve(import.meta.dirname, "..");
const CLI = path.join(ROOT, "dist/cli.js");
/** What a node of each distribution kata-install knows has, and a workstation has not. */
const NODE_MARKS = [
  "/var/lib/kubelet/config.yaml",
  "/etc/kubernetes/kubelet.conf",
  "/var/lib/rancher/k3s/agent",
  "/var/lib/rancher/rke2/agent",
  "/var/lib/k0s",
  "/var/snap/microk8s/current",
];

const asked = process.env.KATA_INSTALL_START;
const onNode = asked === undefined ? NODE_MARKS.some((m) => fs.existsSync(m)) : asked === "node";
const run = (args: string[]) => spawnSync(process.execPath, [CLI, ...args], { stdio: "inherit" }).status ?? 1;

if (onNode) {
  console.error(
    "npm start: this machine is a Kubernetes node: its plan, nothing written (kata-install plan)\n",
  );
  process.exitCode = run(["plan"]);
} else {
  const release = artifactDir("4.1.0");
  try {
    console.error(
      [
        "npm start: this machine is not a Kubernetes node, so this is the plan of an example node",
        "(examples/node.facts.json: x86_64 with KVM, containerd 1.7) against an example release (Kata",
        "4.1.0's files as its lists name them, stand-in bytes, its real configurations).",
        "On a node: kata-install plan --artifacts registry:REGISTRY/REPOSITORY (images made with",
        'kata-install artifacts split); README.md, "Install on one node".',
        "",
      ].join("\n"),
    );
    process.exitCode = run([
      "plan",
      "--facts",
      path.join(ROOT, "examples/node.facts.json"),
      "--artifacts",
      `dir:${release}`,
    ]);
  } finally {
    fs.rmSync(release, { recursive: true, force: true });
  }
}
