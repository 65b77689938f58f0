// A test host's running runtime, where no real one is started: a CRI server on the host's socket
// (messages from CRI's own api.proto), ready, serving what the real containerd of the node's minor
// loads from the host root's configuration (`containerd config dump`, imports resolved inside the
// root). A node whose configuration that containerd cannot load answers no Status, as a containerd
// that did not start would. Other runtimes (CRI-O, k3s, …) answer ready and name no handlers: install
// then judges them by readiness alone, as it judges a runtime that names none.
//
// It runs as a process of its own (cri-stand-in-server.mjs): tests run the CLI with spawnSync,
// which blocks this process. The tests that judge the runtime's behaviour itself start the real
// daemon (real-containerd.ts).
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { type ContainerdMinor, containerdOf, minorOf, realTool } from "./real-tools.js";

export interface StandIn {
  close(): void;
}

export interface StandInOptions {
  /** The host root whose containerd configuration is served; none: ready, naming no handlers. */
  root?: string;
  /** Which real containerd loads it (default: the one the host's `containerd --version` stub names). */
  minor?: ContainerdMinor;
  /** The configuration's path on the host. */
  config?: string;
}

/** The minor a test host's stub `containerd --version` names, if it has one. */
export function hostMinor(root: string): ContainerdMinor | null {
  for (const bin of ["usr/bin/containerd", "usr/local/bin/containerd"]) {
    const file = path.join(root, bin);
    if (!fs.existsSync(file)) continue;
    const version = /\b(\d+\.\d+\.\d+)/.exec(fs.readFileSync(file, "utf8"))?.[1];
    if (version) return minorOf(version);
  }
  return null;
}

/** The runtimes' sockets on a test host: the host root is what comes before one of them. */
const SOCKETS = [
  "/run/containerd/containerd.sock",
  "/var/run/crio/crio.sock",
  "/run/k3s/containerd/containerd.sock",
];

/**
 * Serve CRI on `socket` (a test host's runtime socket); the host root, when not given, is the
 * socket's path without its place on the host.
 */
export async function criStandIn(socket: string, given: StandInOptions = {}): Promise<StandIn> {
  const suffix = SOCKETS.find((s) => socket.endsWith(s));
  const options = { ...given, root: given.root ?? (suffix ? socket.slice(0, -suffix.length) : undefined) };
  const minor = options.minor ?? (options.root === undefined ? null : hostMinor(options.root));
  const args = [
    path.join(import.meta.dirname, "cri-stand-in-server.mjs"),
    socket,
    realTool("cri-api", "v1").path,
    ...(minor !== null && options.root !== undefined
      ? [containerdOf(minor).containerd, options.root, options.config ?? "/etc/containerd/config.toml"]
      : []),
  ];
  const child: ChildProcess = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.once("data", () => resolve());
    child.once("exit", (code) =>
      reject(new Error(`the CRI stand-in exited (${code}) before it served ${socket}`)),
    );
  });
  return { close: () => child.kill("SIGTERM") };
}
