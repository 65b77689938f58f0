// A test host whose containerd is the real one of a minor, running: its `containerd --version` is
// that binary's own line, and its systemctl restarts that daemon on the host root's configuration
// (in a private mount namespace: the root's /etc/containerd and /run bound over the real paths, so
// its socket is the host's, and containerd's root in scratch). What install asks after its restart,
// the daemon answers itself.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll } from "vitest";
import { type CriStatus, containerdPluginFailures, criStatus } from "../../src/host/cri.js";
import { type ContainerdMinor, containerdOf, containerdVersionStub } from "./real-tools.js";
import { buildHost, type NodeSpec, type TestHost } from "./test-host.js";

export interface RealContainerdHost extends TestHost {
  minor: ContainerdMinor;
  /** The host's socket, as seen from this machine. */
  socket: string;
  /** What the daemon serves now (CRI Status), waiting for it to be up. */
  serving(): Promise<CriStatus>;
  /** Plugins that failed to start, with their errors. */
  failures(): Promise<{ plugin: string; error: string }[]>;
  /** What every daemon of this host logged. */
  log(): string;
  /** How many times it was (re)started. */
  starts(): number;
  stop(): void;
}

const q = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

export async function realContainerdHost(
  minor: ContainerdMinor,
  spec: NodeSpec,
  edit?: (root: string) => void,
): Promise<RealContainerdHost> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), `kata-install-real-${minor}-`));
  const launch = path.join(scratch, "launch.sh");
  const host = buildHost({
    ...spec,
    commands: {
      ...spec.commands,
      "/usr/bin/containerd": containerdVersionStub(minor),
      "/usr/bin/systemctl": `case "$1" in
  restart) exec ${q(launch)} ;;
  *) exit 0 ;;
esac`,
    },
    sockets: [],
  });
  edit?.(host.root);
  const { containerd } = containerdOf(minor);
  const root = host.root;
  fs.mkdirSync(path.join(root, "run/containerd"), { recursive: true });
  fs.mkdirSync(path.join(scratch, "lib"));
  const socket = path.join(root, "run/containerd/containerd.sock");
  const inside = [
    "set -e",
    "mount --make-rprivate /",
    `mkdir -p /etc/containerd && mount --bind ${q(path.join(root, "etc/containerd"))} /etc/containerd`,
    `mkdir -p /var/lib/containerd && mount --bind ${q(path.join(scratch, "lib"))} /var/lib/containerd`,
    // kata-deploy's drop-in lives under its install directory (/opt/kata[-suffix]/containerd).
    `if [ -d ${q(path.join(root, "opt"))} ]; then mount --bind ${q(path.join(root, "opt"))} /opt; fi`,
    `mount --bind ${q(path.join(root, "run"))} /run`,
    `exec ${q(containerd)} --config /etc/containerd/config.toml`,
  ].join("\n");
  fs.writeFileSync(
    launch,
    `#!/bin/sh
# Stop the daemon this host runs (if any), then start it again on the host root's configuration.
S=${q(scratch)}
if [ -f "$S/pid" ]; then
  pid=$(cat "$S/pid")
  kill -9 "$pid" 2>/dev/null || true
  i=0
  while [ $i -lt 100 ] && [ -d "/proc/$pid" ] && ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null; do
    sleep 0.05; i=$((i + 1))
  done
fi
rm -f ${q(socket)}
echo "== start $(date +%T.%N)" >> "$S/log"
setsid unshare -m sh -c ${q(inside)} >> "$S/log" 2>&1 < /dev/null &
echo $! > "$S/pid"
echo x >> "$S/starts"
`,
    { mode: 0o755 },
  );
  fs.mkdirSync(path.join(root, "etc/containerd"), { recursive: true });
  execFileSync(launch);
  const stop = () => {
    try {
      process.kill(Number(fs.readFileSync(path.join(scratch, "pid"), "utf8")), "SIGKILL");
    } catch {
      // gone already
    }
  };
  afterAll(() => {
    stop();
    fs.rmSync(scratch, { recursive: true, force: true });
  });
  const serving = async (): Promise<CriStatus> => {
    const deadline = Date.now() + 30_000;
    let last: unknown = null;
    while (Date.now() < deadline) {
      try {
        const status = await criStatus(socket, 2_000);
        if (status.runtimeReady) return status;
        last = status.notReadyReason;
      } catch (error) {
        last = error;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(
      `containerd ${minor} does not serve CRI: ${String(last)}\n${fs.readFileSync(path.join(scratch, "log"), "utf8").slice(-3000)}`,
    );
  };
  // Up: it answers on its socket (its CRI plugin may be off, or fail: the tests' business).
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await containerdPluginFailures(socket, 2_000);
      break;
    } catch (error) {
      if (Date.now() > deadline)
        throw new Error(
          `containerd ${minor} does not answer: ${String(error)}\n${fs.readFileSync(path.join(scratch, "log"), "utf8").slice(-2000)}`,
        );
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    ...host,
    minor,
    socket,
    serving,
    failures: () => containerdPluginFailures(socket, 5_000),
    log: () => fs.readFileSync(path.join(scratch, "log"), "utf8"),
    starts: () => fs.readFileSync(path.join(scratch, "starts"), "utf8").split("\n").filter(Boolean).length,
    stop,
  };
}
