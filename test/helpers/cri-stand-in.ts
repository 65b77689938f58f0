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

/** The one server process of this test process, and the answers it gives, line by line. */
let hub: { child: ChildProcess; waiting: Map<string, (line: string) => void> } | null = null;

function theHub(): NonNullable<typeof hub> {
  if (hub !== null) return hub;
  const child = spawn(
    process.execPath,
    [path.join(import.meta.dirname, "cri-stand-in-server.mjs"), realTool("cri-api", "v1").path],
    {
      stdio: ["pipe", "pipe", "inherit"],
    },
  );
  const waiting = new Map<string, (line: string) => void>();
  let buffered = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    buffered += chunk.toString();
    const lines = buffered.split("\n");
    buffered = lines.pop() ?? "";
    for (const line of lines) {
      const id = line.split(" ")[0] ?? "";
      waiting.get(id)?.(line.slice(id.length + 1));
      waiting.delete(id);
    }
  });
  // The test process does not wait for it: it ends with its stdin.
  child.unref();
  (child.stdin as unknown as { unref?: () => void })?.unref?.();
  (child.stdout as unknown as { unref?: () => void })?.unref?.();
  hub = { child, waiting };
  return hub;
}

let asked = 0;
function ask(message: Record<string, string>): Promise<string> {
  const { child, waiting } = theHub();
  const id = String(++asked);
  return new Promise((resolve) => {
    waiting.set(id, resolve);
    child.stdin?.write(`${JSON.stringify({ id, ...message })}\n`);
  });
}

/**
 * Serve CRI on `socket` (a test host's runtime socket); the host root, when not given, is the
 * socket's path without its place on the host.
 */
export async function criStandIn(socket: string, given: StandInOptions = {}): Promise<StandIn> {
  const suffix = SOCKETS.find((s) => socket.endsWith(s));
  const root = given.root ?? (suffix ? socket.slice(0, -suffix.length) : undefined);
  const minor = given.minor ?? (root === undefined ? null : hostMinor(root));
  const answer = await ask({
    serve: socket,
    ...(minor !== null && root !== undefined
      ? {
          containerd: containerdOf(minor).containerd,
          root,
          config: given.config ?? "/etc/containerd/config.toml",
        }
      : {}),
  });
  if (answer !== "served") throw new Error(`the CRI stand-in could not serve ${socket}: ${answer}`);
  let closed = false;
  return {
    // The socket goes at once (a connection then finds nothing, as to a runtime that is down);
    // its server is stopped by the hub in the background.
    close: () => {
      if (closed) return;
      closed = true;
      fs.rmSync(socket, { force: true });
      void ask({ stop: socket });
    },
  };
}
