// One artifact source for a mixed fleet: Kata 4.1.0's amd64 and arm64 releases split into one OCI
// layout (each artifact an image index, one manifest per architecture), pushed whole by the real
// skopeo to the test registry, and installed on an amd64 and an arm64 node from the same reference.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { criStandIn } from "../helpers/cri-stand-in.js";
import { arm64Containerd20, CONTAINERD_V2_MAIN, intelContainerd16 } from "../helpers/nodes.js";
import { pushLayout, type Registry, startRegistry } from "../helpers/registry.js";
import { buildRelease } from "../helpers/release.js";
import type { NodeSpec } from "../helpers/test-host.js";
import { buildHost, removeTestHosts } from "../helpers/test-host.js";

const made: string[] = [];
let registry: Registry;
let layout = "";
let split: ReturnType<typeof runCli>;
const INDEX = "application/vnd.oci.image.index.v1+json";
/** The nodes installed from the first tag, by architecture. */
const hosts = new Map<string, string>();

beforeAll(async () => {
  const amd = buildRelease("x86_64");
  const arm = buildRelease("aarch64");
  made.push(amd.dir, arm.dir);
  layout = path.join(amd.dir, "layout");
  split = runCli(["artifacts", "split", ...amd.tarballs, ...arm.tarballs, "--out", `oci-layout:${layout}`], {
    timeoutMs: 300_000,
  });
  registry = await startRegistry();
  if (split.status === 0) pushLayout(layout, registry.host, "kata", "4.1.0");
}, 300_000);
afterAll(async () => {
  await registry?.stop();
  removeTestHosts();
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});

/** A containerd node of either architecture whose socket answers CRI. */
async function nodeOf(arch: "x86_64" | "aarch64") {
  const spec: NodeSpec =
    arch === "x86_64"
      ? intelContainerd16()
      : {
          ...arm64Containerd20(),
          commands: { "/usr/bin/containerd": 'echo "containerd github.com/containerd/containerd 1.6.20 "' },
          files: { "/etc/containerd/config.toml": CONTAINERD_V2_MAIN },
        };
  spec.commands = { ...spec.commands, "/usr/bin/systemctl": "true" };
  const host = buildHost(spec);
  const socket = path.join(host.root, "run/containerd/containerd.sock");
  fs.rmSync(socket);
  const server = await criStandIn(socket);
  afterAll(() => server.close());
  return host;
}

describe("amd64 and arm64 in one layout, under one tag per artifact", () => {
  it("the split makes an image index per artifact, one manifest per architecture that has it", () => {
    expect(split.status, split.stderr).toBe(0);
    expect(split.stdout).toMatch(
      /^Kata 4\.1\.0 for x86_64, aarch64: each artifact an image index under its name in \S+, one manifest per architecture that has it; digests in kata-release\.json:\n/,
    );
    expect(split.stdout).toMatch(/\n {2}qemu +sha256:[0-9a-f]{12}… {2}aarch64, x86_64\n/);
    const index = JSON.parse(fs.readFileSync(path.join(layout, "index.json"), "utf8"));
    const tags = index.manifests.map(
      (m: { annotations: Record<string, string> }) => m.annotations["org.opencontainers.image.ref.name"],
    );
    expect(new Set(tags).size).toBe(tags.length);
    for (const m of index.manifests) expect(m.mediaType).toBe(INDEX);
    const release = JSON.parse(fs.readFileSync(path.join(layout, "kata-release.json"), "utf8"));
    expect(release.arches).toEqual(["aarch64", "x86_64"]);
    expect(release.version).toBe("4.1.0");
    const qemu = index.manifests.find(
      (m: { annotations: Record<string, string> }) =>
        m.annotations["org.opencontainers.image.ref.name"] === "qemu",
    );
    expect(release.artifacts.qemu.digest).toBe(qemu.digest);
    const blob = JSON.parse(
      fs.readFileSync(path.join(layout, "blobs/sha256", qemu.digest.slice("sha256:".length)), "utf8"),
    );
    expect(blob.manifests.map((m: { platform: unknown }) => m.platform)).toEqual([
      { architecture: "arm64", os: "linux" },
      { architecture: "amd64", os: "linux" },
    ]);
    expect(blob.manifests.map((m: { digest: string }) => m.digest)).toEqual([
      release.artifacts.qemu.platforms.aarch64.digest,
      release.artifacts.qemu.platforms.x86_64.digest,
    ]);
  });

  it.each([
    ["x86_64", 'machine_type = "q35"'],
    ["aarch64", 'machine_type = "virt"'],
  ] as const)(
    "%s: installed from the registry by the same reference, its own platform's files",
    async (arch, machine) => {
      const host = await nodeOf(arch);
      hosts.set(arch, host.root);
      const run = runCli([
        "install",
        "--host-root",
        host.root,
        "--artifacts",
        `registry:${registry.host}/kata`,
        "--artifacts-tag",
        "4.1.0",
        "--shims",
        "qemu",
      ]);
      expect(run.status, run.stderr).toBe(0);
      const config = fs.readFileSync(
        path.join(host.root, "opt/kata/share/defaults/kata-containers/runtimes/qemu/configuration-qemu.toml"),
        "utf8",
      );
      expect(config).toContain(machine);
    },
  );

  it("a node of an architecture the index lacks is told which it has", async () => {
    const host = await nodeOf("x86_64");
    fs.mkdirSync(path.join(host.root, "proc/sys/kernel"), { recursive: true });
    fs.writeFileSync(path.join(host.root, "proc/sys/kernel/arch"), "s390x\n");
    const run = runCli([
      "plan",
      "--host-root",
      host.root,
      "--artifacts",
      `oci-layout:${layout}`,
      "--shims",
      "qemu",
    ]);
    expect(run.status).toBe(1);
    expect(run.stdout + run.stderr).toContain(
      `oci-layout:${layout}: image "meta" has no linux/s390x manifest (its index has linux/arm64, linux/amd64): this node is s390x; give a source that has its architecture`,
    );
  });

  it("a release whose arm64 qemu changed: the amd64 node pulls nothing, the arm64 node only the qemu image", () => {
    const amd = buildRelease("x86_64");
    const arm = buildRelease("aarch64", (_name, tree) => {
      // In every tarball that carries it (the Go and Rust runtimes' both do): one file of one release.
      const qemu = path.join(tree, "opt/kata/bin/qemu-system-aarch64");
      if (fs.existsSync(qemu)) fs.appendFileSync(qemu, "rebuilt\n");
    });
    made.push(amd.dir, arm.dir);
    const next = path.join(arm.dir, "layout");
    const again = runCli(
      ["artifacts", "split", ...amd.tarballs, ...arm.tarballs, "--out", `oci-layout:${next}`],
      {
        timeoutMs: 300_000,
      },
    );
    expect(again.status, again.stderr).toBe(0);
    pushLayout(next, registry.host, "kata", "4.1.0-b");
    const upgrade = (arch: string) =>
      runCli([
        "install",
        "--host-root",
        hosts.get(arch) as string,
        "--artifacts",
        `registry:${registry.host}/kata`,
        "--artifacts-tag",
        "4.1.0-b",
        "--shims",
        "qemu",
      ]);
    const amdRun = upgrade("x86_64");
    expect(amdRun.status, amdRun.stderr).toBe(0);
    const armRun = upgrade("aarch64");
    expect(armRun.status, armRun.stderr).toBe(0);
    // Each node compares its own platform's manifest digests: the index changed, amd64's did not.
    expect(amdRun.stdout).toContain("Nothing to do: the node is as the plan wants it.");
    expect(armRun.stdout).toMatch(
      /\nPulled 1 of the release's \d+ artifacts: \d+ of \d+ bytes \(\d+%\)\. \d+ more \(\d+ bytes\) unchanged since version [0-9a-f]{16}: taken from the node, not pulled\.\n/,
    );
    expect(
      fs.readFileSync(path.join(hosts.get("aarch64") as string, "opt/kata/bin/qemu-system-aarch64"), "utf8"),
    ).toMatch(/rebuilt\n$/);
  });
});
