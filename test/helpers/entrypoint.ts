// The container's entrypoint as the DaemonSet runs it: the built CLI with kata-deploy's environment,
// started and waited for until it says it is installed (or exits), then signalled.
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { CLI } from "./cli.js";

export interface Running {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** host:port of /healthz and /readyz. */
  health: string;
  exited: Promise<number | null>;
}

/**
 * `entrypoint install` with `env` over ours (`command`: what starts it, as a pod would: pod.ts);
 * resolves once it waits for SIGTERM.
 */
export async function startEntrypoint(
  env: Record<string, string>,
  command: { file: string; args: string[] } = {
    file: process.execPath,
    args: [CLI, "entrypoint", "install"],
  },
): Promise<Running> {
  const child = spawn(command.file, command.args, {
    env: { ...process.env, HEALTH_ADDRESS: "127.0.0.1", HEALTH_PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (c: Buffer) => {
    stdout += c.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "Waiting for SIGTERM" in 30 s:\n${stderr}`)), 30_000);
    child.stderr?.on("data", (c: Buffer) => {
      stderr += c.toString();
      if (stderr.includes("Waiting for SIGTERM")) {
        clearTimeout(timer);
        resolve();
      }
    });
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`exited ${code} before it was installed:\n${stderr}`));
    });
  });
  const health = /Health: \/healthz and \/readyz on (\S+)/.exec(stderr)?.[1] as string;
  return { child, stdout: () => stdout, stderr: () => stderr, health, exited };
}

/** A systemctl for a test host that succeeds and writes what it was asked to `log` (one call a line). */
export function loggingSystemctl(log: string): string {
  fs.mkdirSync(path.dirname(log), { recursive: true });
  return `echo "$*" >> '${log}'\nexit 0`;
}

/**
 * The environment the DaemonSet gives its pod on node `node` (`more`: the DaemonSet's own, its
 * DAEMONSET_NAME included), with the test's API server, host and a free health port in place of
 * the node's.
 */
export function podEnv(
  kubeconfig: string,
  hostRoot: string,
  more: Record<string, string> = {},
  node = "n1",
): Record<string, string> {
  // The kubelet makes a pod's hostPath directories (DirectoryOrCreate); a node has the others.
  for (const m of (more.HOST_MOUNTS ?? "").split(":").filter(Boolean))
    fs.mkdirSync(path.join(hostRoot, m), { recursive: true });
  return {
    POD_NAMESPACE: "kube-system",
    DAEMONSET_NAME: "kata-deploy",
    ...more,
    NODE_NAME: node,
    KUBECONFIG: kubeconfig,
    HOST_ROOT: hostRoot,
    HOST_EXEC: "root-exec",
    // A port of its own, whatever the DaemonSet's says (8090): another test, or another run of the
    // suite on this machine, may be listening there (EADDRINUSE failed one under a second run).
    HEALTH_ADDRESS: "127.0.0.1",
    HEALTH_PORT: "0",
  };
}
