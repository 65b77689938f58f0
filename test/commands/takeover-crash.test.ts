// A takeover killed at every named moment of an install (kill -9, as a power cut would): the next
// `uninstall` gives back either kata-deploy's install whole (killed before the takeover committed)
// or a node without Kata (after), never something between; the next `install` ends as an
// uninterrupted takeover does. The moments are the install's own crash points
// (KATA_INSTALL_CRASH_AT), each write of the transaction among them.
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { answeringHost } from "../helpers/answering.js";
import { artifactDir } from "../helpers/artifacts.js";
import { runCli } from "../helpers/cli.js";
import { deployHandler, kataDeployTree } from "../helpers/kata-deploy-node.js";
import { deployEnv, layOutDeployNode } from "../helpers/kata-deploy-nodes.js";
import { CONTAINERD_V2_MAIN, intelContainerd16 } from "../helpers/nodes.js";
import { servedBy } from "../helpers/real-containerd.js";
import { containerdVersionStub } from "../helpers/real-tools.js";
import { removeTestHosts } from "../helpers/test-host.js";
import { installedTree, type TreeSnapshot } from "../helpers/tree.js";

afterAll(removeTestHosts);
const artifacts = artifactDir();
afterAll(() => fs.rmSync(artifacts, { recursive: true, force: true }));
/** The real 4.1.0 configurations (stand-in binaries): what kata-deploy 4.1.0's nodes were made from. */
const release = artifactDir("4.1.0");
afterAll(() => fs.rmSync(release, { recursive: true, force: true }));

/** The install's named moments, in the order it passes them on a takeover. */
const NAMED = [
  "stage:begin",
  "stage:end",
  "takeover:move",
  "switch:before",
  "switch:next-made",
  "switch:committed",
  "switch:after",
  "begin",
  "before-commit",
  "after-commit",
  "restart:before",
  "restart:after",
];

async function kataDeployNode() {
  const host = await answeringHost(intelContainerd16(), (root) => {
    kataDeployTree(artifacts, root, ["qemu"]);
    fs.writeFileSync(
      path.join(root, "etc/containerd/config.toml"),
      `${CONTAINERD_V2_MAIN}\n${deployHandler("io.containerd.grpc.v1.cri", "qemu")}`,
    );
  });
  const cli = (args: string[], env?: Record<string, string>) =>
    runCli([...args, "--host-root", host.root, "--artifacts", `dir:${artifacts}`, "--shims", "qemu"], {
      ...(env ? { env } : {}),
    });
  return { ...host, cli };
}

/** The node without what differs run by run: the journal and its backups, the lock's directory. */
const visible = (tree: TreeSnapshot) =>
  Object.fromEntries(
    Object.entries(tree).filter(([p]) => !p.startsWith("opt/kata/.install") && p !== "run/lock"),
  );

describe("a takeover killed at every moment of the install", () => {
  it("the next uninstall gives back kata-deploy's install or no Kata; the next install ends as an uninterrupted takeover", async () => {
    // The references: kata-deploy's node; it taken over; and then uninstalled.
    const reference = await kataDeployNode();
    const deployed = visible(installedTree(reference.root));
    const plan = JSON.parse(reference.cli(["plan", "--json"]).stdout) as { changes: unknown[] };
    expect(reference.cli(["install"]).status).toBe(0);
    const takenOver = visible(installedTree(reference.root));
    expect(runCli(["uninstall", "--host-root", reference.root]).status).toBe(0);
    const gone = visible(installedTree(reference.root));
    expect(gone).not.toEqual(deployed);

    const last = plan.changes.length - 1;
    const moments = [
      ...NAMED,
      "step:0:before-write",
      "step:0:after-write",
      `step:${last}:before-write`,
      `step:${last}:after-write`,
    ];
    for (const moment of moments) {
      for (const next of ["uninstall", "install"] as const) {
        const host = await kataDeployNode();
        const cut = host.cli(["install"], { KATA_INSTALL_CRASH_AT: moment });
        expect(cut.status, `${moment}: killed`).toBeNull();
        const run =
          next === "install" ? host.cli(["install"]) : runCli(["uninstall", "--host-root", host.root]);
        expect(run.status, `${moment}, then ${next}: ${run.stderr}`).toBe(0);
        const after = visible(installedTree(host.root));
        if (next === "install") expect(after, `${moment}, then install`).toEqual(takenOver);
        else expect([deployed, gone], `${moment}, then uninstall`).toContainEqual(after);
      }
    }
  }, 600_000);
});

describe("kata-deploy 4.1.0's containerd 2.1 node (its drop-in under /opt/kata-blue, imported by path), killed at every moment of the takeover", () => {
  it("the real containerd 2.1 loads the node's configuration after each kill; the next install finishes the takeover", async () => {
    const env = {
      ...deployEnv("containerd-2.1-suffix"),
      KATA_INSTALL_NYDUS_SNAPSHOTTER_DIR: path.join(import.meta.dirname, "../fixtures/nydus-snapshotter"),
    };
    const node = () =>
      answeringHost(
        {
          ...intelContainerd16(),
          commands: { ...intelContainerd16().commands, "/usr/bin/containerd": containerdVersionStub("2") },
          files: {},
        },
        (root) => {
          layOutDeployNode("containerd-2.1-suffix", root);
        },
      );
    const cli = (root: string, args: string[], more: Record<string, string> = {}) =>
      runCli([...args, "--host-root", root, "--artifacts", `dir:${release}`], { env: { ...env, ...more } });
    for (const moment of NAMED) {
      const host = await node();
      const cut = cli(host.root, ["install"], { KATA_INSTALL_CRASH_AT: moment });
      expect(cut.status, `${moment}: killed`).toBeNull();
      // The node's containerd, restarted now (a reboot), starts on what the kill left (the real
      // daemon: `config dump` passes over an import of a missing file, the daemon does not start).
      const rebooted = await servedBy({ minor: "2", root: host.root });
      expect(rebooted.answered, `${moment}: containerd starts on it\n${rebooted.log.slice(-600)}`).toBe(true);
      const next = cli(host.root, ["install"]);
      expect(next.status, `${moment}, then install: ${next.stderr}`).toBe(0);
      expect(
        JSON.parse(runCli(["facts", "--json", "--host-root", host.root], { env }).stdout).kata.managedBy,
      ).toBe("kata-install");
      const after = await servedBy({ minor: "2", root: host.root });
      expect(after.status?.runtimeReady, `${moment}: then installed, containerd serves`).toBe(true);
      host.close();
    }
  }, 600_000);
});
