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
import { CONTAINERD_V2_MAIN, intelContainerd16 } from "../helpers/nodes.js";
import { removeTestHosts } from "../helpers/test-host.js";
import { snapshot, type TreeSnapshot } from "../helpers/tree.js";

afterAll(removeTestHosts);
const artifacts = artifactDir();
afterAll(() => fs.rmSync(artifacts, { recursive: true, force: true }));

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
    const deployed = visible(snapshot(reference.root));
    const plan = JSON.parse(reference.cli(["plan", "--json"]).stdout) as { changes: unknown[] };
    expect(reference.cli(["install"]).status).toBe(0);
    const takenOver = visible(snapshot(reference.root));
    expect(runCli(["uninstall", "--host-root", reference.root]).status).toBe(0);
    const gone = visible(snapshot(reference.root));
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
        const after = visible(snapshot(host.root));
        if (next === "install") expect(after, `${moment}, then install`).toEqual(takenOver);
        else expect([deployed, gone], `${moment}, then uninstall`).toContainEqual(after);
      }
    }
  }, 600_000);
});
