// Restart or reload the container runtime after its configuration changed, through the host's own
// service manager (the Host's command strategy: directly, chroot or nsenter), then wait until it
// answers on its socket and serves: CRI ready, with the handlers it was given and its default
// runtime (containerd answers on its socket even when its CRI plugin failed on the configuration,
// and then no pod of the node runs). A runtime that does not come back is an error naming the
// socket and the runtime's own words: the admin must know at once, not at the next pod.
import net from "node:net";
import type { PlanAction } from "../changeset.js";
import { type RuntimeRestart, restartFor, unreachable } from "../detect/runtime/layouts.js";
import { UserError } from "../errors.js";
import { CriError, containerdPluginFailures, criStatus } from "../host/cri.js";
import { fault } from "../host/fault.js";
import { HOST_PATH, type Host } from "../host/host.js";

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

/**
 * What the runtime must serve once restarted, beside CRI itself and its default runtime; null: that
 * it answers on its socket is enough (a restart on the files a rollback put back, which need serve
 * no more than they did before).
 */
export type Serves = {
  /** Handlers it must serve (the Kata handlers just written); none after an uninstall. */
  handlers: string[];
} | null;

/** What was seen of the runtime after its restart, for the line that says so. */
export type Served = "handlers" | "ready" | "answers" | "not-asked";

/** "…, and it serves the Kata handlers." */
export function servedText(served: Served): string {
  switch (served) {
    case "handlers":
      return "and it serves the Kata handlers";
    case "ready":
      return "and it is ready (it does not say which handlers it serves)";
    case "answers":
    case "not-asked":
      return "and it answers";
    default:
      return unreachable(served);
  }
}

export async function restartRuntime(
  host: Host,
  action: PlanAction,
  socket: string | null,
  timeoutMs = ANSWER_TIMEOUT_MS,
  serves: Serves = { handlers: [] },
): Promise<Served> {
  const restart = restartOfTarget(action.target);
  switch (restart.kind) {
    case "systemd": {
      const [first, ...rest] = restart.units;
      const unit = await unitFor(host, [first ?? action.target, ...rest]);
      const verb = action.kind === "reload-runtime" ? "reload" : "restart";
      const what = `systemctl ${verb} ${unit}`;
      await runRestart(host, unit, "systemctl", [verb, unit], what);
      if (socket === null) return "not-asked";
      return await waitForServing(host, socket, timeoutMs, `${unit} after systemctl ${verb}`, serves);
    }
    case "command": {
      const [command, ...args] = restart.argv;
      const what = restart.argv.join(" ");
      await runRestart(host, restart.target, command, args, what);
      if (socket === null) return "not-asked";
      return await waitForServing(host, socket, timeoutMs, `${restart.target} after ${what}`, serves);
    }
    case "none":
      return "not-asked";
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

/**
 * Wait until the runtime answers on its socket, then until it serves (see servingVerdict); one
 * deadline for both. A verdict that cannot change by waiting (containerd's CRI plugin failed on its
 * configuration, a handler it does not serve) fails at once, with the runtime's own error.
 */
export async function waitForServing(
  host: Host,
  socket: string,
  timeoutMs: number,
  what: string,
  serves: Serves,
): Promise<Served> {
  const started = Date.now();
  await waitForAnswer(host, socket, timeoutMs, what);
  if (serves === null) return "answers";
  const path = await host.resolve(socket);
  const deadline = started + timeoutMs;
  for (;;) {
    const left = Math.max(deadline - Date.now(), 0);
    // Each question gets a deadline of its own, within the whole.
    const verdict = await servingVerdict(path, Math.min(Math.max(left, 1_000), 10_000), serves);
    if (verdict.ok) return verdict.named ? "handlers" : "ready";
    if (verdict.final || Date.now() >= deadline) {
      const within = timeoutMs >= 1000 ? `${Math.round(timeoutMs / 1000)} s` : `${timeoutMs} ms`;
      throw new UserError(
        `${what}: ${verdict.reason}${verdict.final ? "" : ` (still so after ${within})`}; its socket ${socket} answers, but ${verdict.final ? "it" : "the runtime"} cannot run ${serves.handlers.length > 0 ? "the pods it should" : "pods"}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

type Verdict = { ok: true; named: boolean } | { ok: false; final: boolean; reason: string };

/**
 * Whether the runtime behind `path` serves, asked as the kubelet asks it (CRI Status): ready, its
 * default runtime and the handlers `serves` names among those it reports. A runtime whose answer
 * names no handlers at all (an older CRI-O) is judged by its readiness alone.
 */
async function servingVerdict(
  path: string,
  timeoutMs: number,
  serves: NonNullable<Serves>,
): Promise<Verdict> {
  let status: Awaited<ReturnType<typeof criStatus>>;
  try {
    status = await criStatus(path, timeoutMs);
  } catch (error) {
    if (!(error instanceof CriError) || !error.unimplemented)
      return { ok: false, final: false, reason: `CRI does not answer (${(error as Error).message})` };
    // containerd without its CRI plugin: the plugin's own start error says why.
    const failed = await containerdPluginFailures(path, timeoutMs).catch(() => []);
    const cri = failed.filter((f) => /\bcri\b|cri\.v1/.test(f.plugin));
    return {
      ok: false,
      final: true,
      reason:
        cri.length > 0
          ? `containerd's CRI plugin did not start: ${cri.map((f) => `${f.plugin}: ${f.error}`).join("; ")}`
          : "it does not serve CRI (no RuntimeService on its socket)",
    };
  }
  if (!status.runtimeReady)
    return { ok: false, final: false, reason: `CRI is not ready: ${status.notReadyReason}` };
  if (status.handlers === null) return { ok: true, named: false };
  const served = new Set(status.handlers);
  const missing = serves.handlers.filter((h) => !served.has(h));
  if (status.defaultRuntime !== null && status.defaultRuntime !== "" && !served.has(status.defaultRuntime))
    missing.unshift(`${status.defaultRuntime} (its default runtime)`);
  if (missing.length === 0) return { ok: true, named: true };
  return {
    ok: false,
    final: true,
    reason: `CRI does not serve ${missing.join(", ")} (it serves ${[...served].join(", ") || "no handler"})`,
  };
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
