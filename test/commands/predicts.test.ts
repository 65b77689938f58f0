// `plan` predicts `install`: for every refusal install has, the plan (same options) already fails,
// naming the same check, and the refused install leaves the node exactly as it was — it never
// stages artifacts and then refuses.
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BLOCK_END } from "../../src/render/toml-edit.js";
import { artifactDir } from "../helpers/artifacts.js";
import { runCli } from "../helpers/cli.js";
import { intelContainerd16, nestedVmWithoutVmx } from "../helpers/nodes.js";
import { buildHost, type NodeSpec, removeTestHosts } from "../helpers/test-host.js";
import { snapshot } from "../helpers/tree.js";

afterAll(removeTestHosts);
const artifacts = artifactDir();
const incomplete = artifactDir();
fs.rmSync(path.join(incomplete, "guest-image/opt/kata/share/kata-containers/kata-ubuntu-noble.image"));
afterAll(() => {
  for (const d of [artifacts, incomplete]) fs.rmSync(d, { recursive: true, force: true });
});

interface Refusal {
  name: string;
  spec: () => NodeSpec;
  /** Make the host refusable (after it is built). */
  edit?: (root: string) => void;
  args: string[];
  env?: Record<string, string>;
  /** The check both name; null: the same error, said by both. */
  check: string | null;
  message: RegExp;
  /** Not a check of the node, which `preflight` makes too (the artifacts', the render's). */
  notPreflight?: true;
}

const source = (dir: string) => ["--artifacts", `dir:${dir}`];
const REFUSALS: Refusal[] = [
  {
    name: "a preflight error (no container runtime)",
    spec: nestedVmWithoutVmx,
    args: source(artifacts),
    check: "container-runtime",
    message: /no containerd, CRI-O, k3s, rke2, k0s or microk8s found/,
  },
  {
    name: "artifacts to pull, no source",
    spec: intelContainerd16,
    args: [],
    check: "artifact-source",
    message: /no source to pull them from/,
    notPreflight: true,
  },
  {
    name: "someone else's content in the prefix (another installer's /opt/kata)",
    spec: intelContainerd16,
    edit: (root) => {
      fs.mkdirSync(path.join(root, "opt/kata/bin"), { recursive: true });
      fs.writeFileSync(path.join(root, "opt/kata/bin/containerd-shim-kata-v2"), "#!/bin/sh\n", {
        mode: 0o755,
      });
    },
    args: source(artifacts),
    check: "install-prefix",
    message: /\/opt\/kata\/bin is a directory that kata-install did not make/,
  },
  {
    name: "a file a configuration names missing from the artifacts",
    spec: intelContainerd16,
    args: source(incomplete),
    check: "artifact-paths",
    message: /kata-containers\.img: in none of the artifacts being installed/,
    notPreflight: true,
  },
  {
    name: "containerd's config.toml unreadable",
    spec: intelContainerd16,
    edit: (root) => {
      fs.rmSync(path.join(root, "etc/containerd/config.toml"));
      fs.mkdirSync(path.join(root, "etc/containerd/config.toml"));
    },
    args: source(artifacts),
    check: "containerd-config-readable",
    message: /config\.toml: is a directory/,
  },
  {
    name: "kata-install's block markers damaged",
    spec: intelContainerd16,
    edit: (root) => {
      const file = path.join(root, "etc/containerd/config.toml");
      fs.appendFileSync(file, `\n${BLOCK_END}\n`);
    },
    args: source(artifacts),
    check: null,
    message: /end marker \(line \d+\) has no begin marker/,
    notPreflight: true,
  },
  {
    name: "a handler mapped to a snapshotter the node lacks",
    spec: intelContainerd16,
    args: [...source(artifacts), "--shims", "qemu"],
    env: { SNAPSHOTTER_HANDLER_MAPPING: "qemu:nydus" },
    check: "handler-snapshotter",
    message: /SNAPSHOTTER_HANDLER_MAPPING/,
  },
  {
    name: "an install journal this kata-install cannot read",
    spec: intelContainerd16,
    edit: (root) => {
      fs.mkdirSync(path.join(root, "opt/kata/.install"), { recursive: true });
      fs.writeFileSync(path.join(root, "opt/kata/.install/journal.json"), '{"version": 1, "files": []}\n');
    },
    args: source(artifacts),
    check: null,
    message: /journal\.json: not a journal this kata-install reads: /,
  },
];

/** The refusal, as `plan --json` or `preflight --json` says it. */
function expectRefused(r: Refusal, result: ReturnType<typeof runCli>): void {
  expect(result.status).toBe(1);
  if (r.check === null) {
    expect(result.stderr).toMatch(r.message);
    return;
  }
  const checks = JSON.parse(result.stdout).checks as Array<{
    id: string;
    status: string;
    severity: string;
    message: string;
  }>;
  const failed = checks.find((c) => c.id === r.check);
  expect(failed, result.stdout.slice(0, 400)).toMatchObject({ status: "fail", severity: "error" });
  expect(failed?.message).toMatch(r.message);
}

describe("plan and preflight predict install", () => {
  it.each(REFUSALS)("$name: plan (and preflight) fail first, install refuses without a trace", (r) => {
    const host = buildHost(r.spec());
    r.edit?.(host.root);
    const before = snapshot(host.root);
    expectRefused(r, runCli(["plan", "--host-root", host.root, ...r.args, "--json"], { env: r.env }));
    if (!r.notPreflight)
      expectRefused(r, runCli(["preflight", "--host-root", host.root, ...r.args, "--json"], { env: r.env }));
    const install = runCli(["install", "--host-root", host.root, ...r.args], { env: r.env });
    expect(install.status).toBe(1);
    expect(install.stderr).toMatch(
      r.check === null ? r.message : new RegExp(`preflight errors: .*${r.check}`),
    );
    expect(snapshot(host.root)).toEqual(before);
  });
});
