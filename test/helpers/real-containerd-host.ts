// A test host whose containerd is the real one of a minor, running: its `containerd --version` is
// that binary's own line, and its systemctl restarts that daemon on the host root's configuration
// (in a private mount namespace: the root's /etc/containerd and /run bound over the real paths, so
// its socket is the host's, and containerd's root in scratch). What install asks after its restart,
// the daemon answers itself.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { onTestFinished } from "vitest";
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
  /** What a unit started through the host's systemctl logged. */
  unitLog(unit: string): string;
  /** How many times it was (re)started. */
  starts(): number;
  stop(): void;
}

const q = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

/** Every daemon this process started and has not stopped: killed when it exits. */
const running = new Set<() => void>();
process.on("exit", () => {
  for (const end of running) end();
});

export async function realContainerdHost(
  minor: ContainerdMinor,
  spec: NodeSpec,
  edit?: (root: string) => void,
): Promise<RealContainerdHost> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), `kata-install-real-${minor}-`));
  const launch = path.join(scratch, "launch.sh");
  const unitLaunch = path.join(scratch, "unit.sh");
  const host = buildHost({
    ...spec,
    commands: {
      ...spec.commands,
      "/usr/bin/containerd": containerdVersionStub(minor),
      // containerd restarted for real; another unit (nydus's) run from its unit file's ExecStart.
      "/usr/bin/systemctl": `case "$1" in
  restart|start)
    case "$2" in containerd|containerd.service) exec ${q(launch)} ;; esac
    exec ${q(unitLaunch)} start "$2" ;;
  stop)
    case "$2" in containerd|containerd.service) exit 0 ;; esac
    exec ${q(unitLaunch)} stop "$2" ;;
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
  fs.mkdirSync(path.join(scratch, "unit-lib"));
  // A unit of the host's (nydus-for-kata-tee), run as systemd would: its ExecStart, in a private
  // mount namespace with the host root's /opt and /run bound in, its state directory in scratch.
  fs.writeFileSync(
    unitLaunch,
    `#!/bin/sh
S=${q(scratch)}
unit=\${2%.service}
file=${q(root)}/etc/systemd/system/$unit.service
if [ -f "$S/$unit.pid" ]; then kill -9 "$(cat "$S/$unit.pid")" 2>/dev/null; rm -f "$S/$unit.pid"; fi
[ "$1" = stop ] && exit 0
[ -f "$file" ] || { echo "no unit file $file" >&2; exit 5; }
cmd=$(sed -n 's/^ExecStart=//p' "$file" | head -1)
setsid unshare -m sh -c "mount --make-rprivate / && mount --bind ${root}/opt /opt && mount --bind $S/unit-lib /var/lib && mount --bind ${root}/run /run && exec $cmd" >> "$S/$unit.log" 2>&1 < /dev/null &
echo $! > "$S/$unit.pid"
`,
    { mode: 0o755 },
  );
  fs.mkdirSync(path.join(root, "etc/containerd"), { recursive: true });
  execFileSync(launch);
  const stop = () => {
    for (const pid of fs.readdirSync(scratch).filter((f) => f.endsWith("pid")))
      try {
        process.kill(Number(fs.readFileSync(path.join(scratch, pid), "utf8")), "SIGKILL");
      } catch {
        // gone already
      }
  };
  // Gone with the test (passed or failed), and with this process whatever happens.
  const end = () => {
    stop();
    fs.rmSync(scratch, { recursive: true, force: true });
  };
  running.add(end);
  onTestFinished(() => {
    running.delete(end);
    end();
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
    unitLog: (unit) => {
      const file = path.join(scratch, `${unit.replace(/\.service$/, "")}.log`);
      return fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
    },
    starts: () => fs.readFileSync(path.join(scratch, "starts"), "utf8").split("\n").filter(Boolean).length,
    stop,
  };
}
