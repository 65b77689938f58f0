// Restart or reload the container runtime after its configuration changed, through the host's own
// service manager (the Host's command strategy: directly, chroot or nsenter), then wait until it
// answers on its socket. A runtime that does not come back is an error naming the socket: the
// admin must know at once, not at the next pod.
import net from "node:net";
import { restartFor } from "../detect/runtime/layouts.js";
import { UserError } from "../errors.js";
import type { Host } from "../host/host.js";
import type { PlanAction } from "../render/changeset.js";
import { fault } from "./fault.js";

export const ANSWER_TIMEOUT_MS = 30_000;

/**
 * The unit a runtime runs as: k3s, rke2 and k0s as a server (controller) or an agent (worker), so
 * systemd is asked which is active. None active: the first, a unit that exists where the runtime
 * is installed (there is no rke2.service or k0s.service to fall back on).
 */
async function unitFor(host: Host, target: string): Promise<string> {
  const units = restartFor(target)?.units ?? [target];
  if (units.length === 1) return units[0] as string;
  for (const unit of units) {
    if ((await host.run("systemctl", ["is-active", "--quiet", unit])).ok) return unit;
  }
  return units[0] as string;
}

export async function restartRuntime(
  host: Host,
  action: PlanAction,
  socket: string | null,
  timeoutMs = ANSWER_TIMEOUT_MS,
): Promise<void> {
  const unit = await unitFor(host, action.target);
  const verb = action.kind === "reload-runtime" ? "reload" : "restart";
  try {
    fault("restart", unit);
  } catch (error) {
    throw new UserError(`systemctl ${verb} ${unit} failed: ${(error as Error).message}`);
  }
  const run = await host.run("systemctl", [verb, unit], { timeoutMs: 120_000 });
  if (!run.ok) throw new UserError(`systemctl ${verb} ${unit} failed: ${run.reason}`);
  if (socket !== null) await waitForAnswer(host, socket, timeoutMs, `${unit} after systemctl ${verb}`);
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
