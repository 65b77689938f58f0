// The real containerd of a minor, run on a test host's configuration as the node would run it: in a
// private mount namespace where the host root's containerd directories are bound over the real
// paths (so imports and drop-ins resolve inside the host root), and /run and containerd's root over
// scratch directories (so nothing of this machine's is read or written, and several daemons run side
// by side). The configuration itself is read as it is, byte for byte.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  type CriStatus,
  containerdPluginFailures,
  criStatus,
  type PluginFailure,
} from "../../src/host/cri.js";
import { type ContainerdMinor, containerdOf } from "./real-tools.js";

/** The host directories a containerd configuration may import from or name. */
const CONFIG_DIRS = ["/etc/containerd", "/var/lib/rancher/k3s/agent/etc/containerd", "/etc/k0s", "/opt"];

export interface RealContainerd {
  minor: ContainerdMinor;
  /** Its socket, as seen from this machine. */
  socket: string;
  /** What it logged so far. */
  log(): string;
  /** Whether the daemon still runs (it exits at once on a configuration it cannot load). */
  running(): boolean;
  stop(): Promise<void>;
}

export interface StartOptions {
  minor: ContainerdMinor;
  /** The host root whose configuration it runs on. */
  root: string;
  /** The configuration's path on the host (default /etc/containerd/config.toml). */
  config?: string;
  /** Directories of this machine bound over the same path inside (a nydus snapshotter's socket). */
  shared?: string[];
}

/** A shell word. */
const q = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

export async function startContainerd(options: StartOptions): Promise<RealContainerd> {
  const { containerd } = containerdOf(options.minor);
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), `kata-install-containerd-${options.minor}-`));
  const run = path.join(scratch, "run");
  const lib = path.join(scratch, "lib");
  fs.mkdirSync(run);
  fs.mkdirSync(lib);
  const binds = CONFIG_DIRS.filter((dir) => fs.existsSync(path.join(options.root, dir))).map(
    (dir) => `mkdir -p ${q(dir)} && mount --bind ${q(path.join(options.root, dir))} ${q(dir)}`,
  );
  const shared = (options.shared ?? []).map(
    (dir) => `mkdir -p ${q(path.join(run, path.relative("/run", dir)))}`,
  );
  const script = [
    "set -e",
    "mount --make-rprivate /",
    ...binds,
    `mkdir -p /var/lib/containerd && mount --bind ${q(lib)} /var/lib/containerd`,
    ...shared,
    `mount --bind ${q(run)} /run`,
    ...(options.shared ?? []).map((dir) => `mount --bind ${q(dir)} ${q(dir)}`),
    `exec ${q(containerd)} --config ${q(options.config ?? "/etc/containerd/config.toml")}`,
  ].join("\n");
  const logFile = path.join(scratch, "containerd.log");
  const out = fs.openSync(logFile, "w");
  const daemon: ChildProcess = spawn("unshare", ["-m", "sh", "-c", script], { stdio: ["ignore", out, out] });
  fs.closeSync(out);
  const socket = path.join(run, "containerd/containerd.sock");
  const exited = new Promise<void>((resolve) => daemon.once("exit", () => resolve()));
  return {
    minor: options.minor,
    socket,
    log: () => fs.readFileSync(logFile, "utf8"),
    running: () => daemon.exitCode === null && daemon.signalCode === null,
    stop: async () => {
      if (daemon.exitCode === null) daemon.kill("SIGKILL");
      await exited;
      fs.rmSync(scratch, { recursive: true, force: true });
    },
  };
}

export interface Serving {
  /** containerd answered on its socket at all (the daemon started on the configuration). */
  answered: boolean;
  /** CRI's Status, when the CRI plugin answered. */
  status: CriStatus | null;
  /** The plugins that failed to start, with their errors. */
  failures: PluginFailure[];
  log: string;
}

/**
 * What the daemon serves once started: waits until CRI answers (or the daemon exits, or 20 s pass
 * — a deadline for a busy machine, not a measure), then asks what it serves.
 */
export async function servingOf(daemon: RealContainerd): Promise<Serving> {
  const deadline = Date.now() + 20_000;
  let failures: PluginFailure[] = [];
  let answered = false;
  while (Date.now() < deadline) {
    if (fs.existsSync(daemon.socket)) {
      try {
        failures = await containerdPluginFailures(daemon.socket, 2_000);
        answered = true;
        const status = await criStatus(daemon.socket, 2_000);
        if (status.runtimeReady) return { answered, status, failures, log: daemon.log() };
      } catch {
        // Not up yet, or CRI did not start: asked again until the deadline.
        if (answered && failures.some((f) => /cri/.test(f.plugin))) break;
      }
    }
    if (!daemon.running()) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  let status: CriStatus | null = null;
  try {
    status = await criStatus(daemon.socket, 2_000);
  } catch {
    status = null;
  }
  return { answered, status, failures, log: daemon.log() };
}

/** Start, ask, stop: what the real containerd of `minor` serves on the host root's configuration. */
export async function servedBy(options: StartOptions): Promise<Serving> {
  const daemon = await startContainerd(options);
  try {
    return await servingOf(daemon);
  } finally {
    await daemon.stop();
  }
}

/** `containerd config dump` by the real binary of `minor`, imports resolved inside the host root. */
export function configDump(
  minor: ContainerdMinor,
  root: string,
  config = "/etc/containerd/config.toml",
): string {
  const { containerd } = containerdOf(minor);
  const binds = CONFIG_DIRS.filter((dir) => fs.existsSync(path.join(root, dir))).map(
    (dir) => `mkdir -p ${q(dir)} && mount --bind ${q(path.join(root, dir))} ${q(dir)}`,
  );
  const script = [
    "set -e",
    "mount --make-rprivate /",
    ...binds,
    `exec ${q(containerd)} --config ${q(config)} config dump`,
  ];
  return execFileSync("unshare", ["-m", "sh", "-c", script.join("\n")], { encoding: "utf8" });
}
