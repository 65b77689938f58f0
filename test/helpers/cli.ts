import { spawn, spawnSync } from "node:child_process";
import path from "node:path";

export const CLI = path.resolve("dist/cli.js");

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Run the built CLI as a user would; its stdin is closed and its environment is ours. */
export function runCli(
  args: string[],
  options: { env?: Record<string, string>; nodeArgs?: string[]; timeoutMs?: number } = {},
): CliResult {
  const result = spawnSync(process.execPath, [...(options.nodeArgs ?? []), CLI, ...args], {
    encoding: "utf8",
    env: { ...process.env, ...options.env },
    input: "",
    timeout: options.timeoutMs ?? 60_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The same, without blocking this process: for tests whose servers (an API server) run in it. */
export function runCliAsync(
  args: string[],
  options: { env?: Record<string, string> } = {},
): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, ...options.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}
