// How a command "on the host" is run. Detection and install never spawn processes themselves: they
// ask the Host, which runs the command by the strategy that fits where kata-install is running.
import { spawn } from "node:child_process";
import path from "node:path";

import type { StrategyName } from "./strategy-names.js";

export type { StrategyName };

export interface CommandResult {
  /** The process ran and exited 0. */
  ok: boolean;
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** Why it failed, in words an admin can act on; empty when ok. */
  reason: string;
}

export interface RunOptions {
  timeoutMs?: number;
  input?: string;
  env?: Record<string, string>;
}

export const DEFAULT_TIMEOUT_MS = 5_000;
const MAX_OUTPUT = 4 * 1024 * 1024;

/**
 * What to spawn for `command args` under a strategy. `command` is a path on the host (absolute)
 * or a bare name that the host's PATH resolves.
 */
export function spawnSpec(
  strategy: StrategyName,
  root: string,
  command: string,
  args: readonly string[],
): { file: string; args: string[] } {
  switch (strategy) {
    case "direct":
      return { file: command, args: [...args] };
    case "root-exec":
      // Test hosts and unpacked trees: the file under the root is executed as it is. Its own
      // interpreter line (#!/bin/sh) comes from the machine running kata-install.
      if (!command.startsWith("/"))
        throw new Error(`root-exec needs an absolute host path, got "${command}"`);
      return { file: path.join(root, command), args: [...args] };
    case "chroot":
      // The container case with the host mounted at `root`: the host's own binaries and libraries.
      // systemctl in a chroot ignores most verbs ("Running in chroot") unless told it may act:
      // SYSTEMD_IGNORE_CHROOT (runCommand sets it for this strategy).
      return { file: "chroot", args: [root, command, ...args] };
    case "nsenter":
      // The container case with hostPID: enter PID 1's namespaces, so systemctl reaches the host's systemd.
      return {
        file: "nsenter",
        args: ["--target", "1", "--mount", "--uts", "--ipc", "--net", "--pid", "--", command, ...args],
      };
  }
}

/** How long output may still arrive after the command itself has exited. */
const PIPE_GRACE_MS = 250;

/**
 * Run one command with a deadline. node:child_process rather than execa: execa 10 needs Node 22, and
 * execa 9 adds ~15 ms to a start even bundled (README, "Why these dependencies"), for the few lines
 * below.
 */
export function runCommand(
  strategy: StrategyName,
  root: string,
  command: string,
  args: readonly string[],
  options: RunOptions = {},
): Promise<CommandResult> {
  const spec = spawnSpec(strategy, root, command, args);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return new Promise((resolve) => {
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let size = 0;
    let timedOut = false;
    let overflow = false;
    const child = spawn(spec.file, spec.args, {
      // Its own process group, so a timeout also ends what it started: a hung hook's children would
      // otherwise hold its output pipe open, and us with it.
      detached: true,
      env: {
        ...process.env,
        LC_ALL: "C",
        ...(strategy === "chroot" ? { SYSTEMD_IGNORE_CHROOT: "1" } : {}),
        ...options.env,
      },
      stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    const kill = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, timeoutMs);
    const collect = (into: Buffer[]) => (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_OUTPUT) {
        overflow = true;
        kill();
        return;
      }
      into.push(chunk);
    };
    child.stdout?.on("data", collect(stdout));
    child.stderr?.on("data", collect(stderr));
    if (options.input !== undefined && child.stdin) {
      child.stdin.on("error", () => {}); // a command that exits without reading its input
      child.stdin.end(options.input);
    }
    let finished = false;
    const finish = (
      exitCode: number | null,
      signal: NodeJS.Signals | null,
      spawnError?: NodeJS.ErrnoException,
    ) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      clearTimeout(grace);
      const out = Buffer.concat(stdout).toString("utf8");
      const err = Buffer.concat(stderr).toString("utf8");
      const ok = spawnError === undefined && !timedOut && !overflow && exitCode === 0;
      let reason = "";
      if (timedOut) reason = `timed out after ${timeoutMs} ms`;
      else if (overflow) reason = `printed more than ${MAX_OUTPUT} bytes`;
      else if (spawnError?.code === "ENOENT") reason = `not found: ${spec.file}`;
      else if (spawnError?.code === "EACCES") reason = `not executable: ${spec.file}`;
      else if (spawnError) reason = spawnError.message;
      else if (!ok) {
        const firstLine = err.trim().split("\n")[0] ?? "";
        reason = `exited ${exitCode ?? signal ?? "abnormally"}${firstLine ? `: ${firstLine}` : ""}`;
      }
      resolve({ ok, exitCode, stdout: out, stderr: err, timedOut, reason });
    };
    child.on("error", (error) => finish(null, null, error));
    // "close" when all output has been read. But a child that left the process group (setsid
    // sleep &) can hold the pipes open long after the command exited: once it has exited, its
    // output gets a moment more, then the pipes are let go and the answer is what was read.
    let grace: NodeJS.Timeout | undefined;
    child.on("exit", (code, signal) => {
      grace = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
        finish(code, signal);
      }, PIPE_GRACE_MS);
    });
    child.on("close", (code, signal) => finish(code, signal));
  });
}
