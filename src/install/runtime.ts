// Restart or reload the container runtime after its configuration changed, through the host's own
// service manager (the Host's command strategy: directly, chroot or nsenter), then wait until it
// answers on its socket. A runtime that does not come back is an error naming the socket: the
// admin must know at once, not at the next pod.
import net from "node:net";
import { type RuntimeRestart, restartFor, unreachable } from "../detect/runtime/layouts.js";
import { UserError } from "../errors.js";
import { HOST_PATH, type Host } from "../host/host.js";
import type { PlanAction } from "../render/changeset.js";
import { fault } from "./fault.js";

export const ANSWER_TIMEOUT_MS = 30_000;

/**
 * The unit a runtime runs as: k3s, rke2 and k0s as a server (controller) or an agent (worker), so
 * systemd is asked which is active. None active: the first, a unit that exists where the runtime
 * is installed (there is no rke2.service or k0s.service to fall back on).
 */
async function unitFor(host: Host, units: [string, ...string[]]): Promise<string> {
  if (units.length === 1) return units[0];
  for (const unit of units) {
    if ((await host.run("systemctl", ["is-active", "--quiet", unit])).ok) return unit;
  }
  return units[0];
}

/** How the runtime a plan or journal names by `target` is restarted. */
function restartOfTarget(target: string): RuntimeRestart {
  // A plan's target no layout has (a plan of another kata-install): the systemd unit of that name.
  return restartFor(target) ?? { kind: "systemd", verb: "restart", target, units: [target], reason: "" };
}

/** The host command a restart runs (null: none is run). */
export function restartCommand(restart: RuntimeRestart): string | null {
  switch (restart.kind) {
    case "systemd":
      return "systemctl";
    case "command":
      return restart.argv[0];
    case "none":
      return null;
    default:
      return unreachable(restart);
  }
}

/**
 * Null when the host has the command that restarts the runtime named by `target`, else why not:
 * asked before anything is written, as a restart that cannot even start would leave the runtime
 * on its old configuration after every file was written.
 */
export async function missingRestartCommand(host: Host, target: string): Promise<string | null> {
  const command = restartCommand(restartOfTarget(target));
  if (command === null) return null;
  const found = command.startsWith("/")
    ? await host.which(command.slice(command.lastIndexOf("/") + 1), [
        command.slice(0, command.lastIndexOf("/")) || "/",
      ])
    : await host.which(command);
  if (found !== null) return null;
  const where = command.startsWith("/") ? "" : ` in its PATH (${HOST_PATH.join(":")})`;
  return `${target} is restarted through ${command} once its configuration changes, and the host has no ${command}${where}`;
}

export async function restartRuntime(
  host: Host,
  action: PlanAction,
  socket: string | null,
  timeoutMs = ANSWER_TIMEOUT_MS,
): Promise<void> {
  const restart = restartOfTarget(action.target);
  switch (restart.kind) {
    case "systemd": {
      const [first, ...rest] = restart.units;
      const unit = await unitFor(host, [first ?? action.target, ...rest]);
      const verb = action.kind === "reload-runtime" ? "reload" : "restart";
      const what = `systemctl ${verb} ${unit}`;
      await runRestart(host, unit, "systemctl", [verb, unit], what);
      if (socket !== null) await waitForAnswer(host, socket, timeoutMs, `${unit} after systemctl ${verb}`);
      return;
    }
    case "command": {
      const [command, ...args] = restart.argv;
      const what = restart.argv.join(" ");
      await runRestart(host, restart.target, command, args, what);
      if (socket !== null) await waitForAnswer(host, socket, timeoutMs, `${restart.target} after ${what}`);
      return;
    }
    case "none":
      return;
    default:
      unreachable(restart);
  }
}

async function runRestart(
  host: Host,
  name: string,
  command: string,
  args: string[],
  what: string,
): Promise<void> {
  try {
    fault("restart", name);
  } catch (error) {
    throw new UserError(`${what} failed: ${(error as Error).message}`);
  }
  const run = await host.run(command, args, { timeoutMs: 120_000 });
  if (!run.ok) throw new UserError(`${what} failed: ${run.reason}`);
}

/** Poll until a connection to the socket succeeds (the runtime answers), or fail after `timeoutMs`. */
export async function waitForAnswer(
  host: Host,
  socket: string,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const path = await host.resolve(socket);
  const deadline = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < deadline) {
    const error = await connectOnce(path);
    if (error === null) return;
    last = error;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const within = timeoutMs >= 1000 ? `${Math.round(timeoutMs / 1000)} s` : `${timeoutMs} ms`;
  throw new UserError(`${what}: no answer on ${socket} within ${within} (${last})`);
}

function connectOnce(path: string): Promise<string | null> {
  return new Promise((resolve) => {
    const client = net.createConnection(path);
    client.once("connect", () => {
      client.destroy();
      resolve(null);
    });
    client.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}
