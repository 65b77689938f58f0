import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { restartRuntime } from "../../src/install/runtime.js";
import { criStandIn, type StandIn } from "../helpers/cri-stand-in.js";
import { intelContainerd16 } from "../helpers/nodes.js";
import { buildHost, removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);

const SYSTEMCTL =
  'echo "$@" >> /var/log/systemctl.calls\ncase "$1 $2" in "is-active --quiet") [ "$3" = "k3s-agent" ] ;; *) exit 0 ;; esac';

function hostWithSystemctl(script = SYSTEMCTL) {
  const spec = intelContainerd16();
  spec.commands = {
    ...spec.commands,
    "/usr/bin/systemctl": script.replaceAll("/var/log", "$(dirname $0)/../../var/log"),
  };
  spec.files = { ...spec.files, "/var/log/.keep": "" };
  return buildHost(spec);
}
const calls = (root: string) => fs.readFileSync(path.join(root, "var/log/systemctl.calls"), "utf8");

/** A runtime that answers: something listening on the host's socket. */
async function listen(root: string, socket: string): Promise<StandIn> {
  const file = path.join(root, socket);
  fs.rmSync(file, { force: true });
  const server = await criStandIn(file);
  return server;
}

describe("restarting the runtime", () => {
  it("restarts through the host's systemctl and waits until the socket answers", async () => {
    const host = hostWithSystemctl();
    const server = await listen(host.root, "/run/containerd/containerd.sock");
    try {
      await restartRuntime(
        host.host,
        { kind: "restart-runtime", target: "containerd", reason: "r" },
        "/run/containerd/containerd.sock",
        2000,
      );
      expect(calls(host.root)).toBe("restart containerd\n");
    } finally {
      server.close();
    }
  });

  it("reloads CRI-O, and restarts k3s by the unit this node runs (an agent here)", async () => {
    const host = hostWithSystemctl();
    await restartRuntime(host.host, { kind: "reload-runtime", target: "crio", reason: "r" }, null);
    await restartRuntime(host.host, { kind: "restart-runtime", target: "k3s", reason: "r" }, null);
    expect(calls(host.root)).toBe(
      "reload crio\nis-active --quiet k3s\nis-active --quiet k3s-agent\nrestart k3s-agent\n",
    );
  });

  it("fails clearly when the runtime does not answer, or systemctl fails", async () => {
    const host = hostWithSystemctl();
    await expect(
      restartRuntime(
        host.host,
        { kind: "restart-runtime", target: "containerd", reason: "r" },
        "/run/containerd/containerd.sock",
        300,
      ),
    ).rejects.toThrow(
      /^containerd after systemctl restart: no answer on \/run\/containerd\/containerd\.sock within 300 ms \(ECONNREFUSED\)$/,
    );
    const broken = hostWithSystemctl(
      'echo "Failed to restart containerd.service: Unit not found." >&2; exit 5',
    );
    await expect(
      restartRuntime(broken.host, { kind: "restart-runtime", target: "containerd", reason: "r" }, null),
    ).rejects.toThrow(
      "systemctl restart containerd failed: exited 5: Failed to restart containerd.service: Unit not found.",
    );
  });
});
