// The host a command works on: the node's root directory (`--host-root`), checked before any stage
// reads through it, and how commands run there.
import fsSync from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { UserError } from "../errors.js";
import type { StrategyName } from "./command.js";
import { Host } from "./host.js";

/** A node's root has at least one of these (a container's view of it, /host, too). */
const NODE_DIRS = ["etc", "proc", "sys"];

/**
 * The host paths a pod mounts under its host root, from HOST_MOUNTS (":"-separated, as the
 * DaemonSet sets it): this process's own surroundings, like HOST_ROOT. Unset: the whole host.
 */
export function mountsFromEnv(env: Readonly<Record<string, string | undefined>>): string[] | undefined {
  const text = env.HOST_MOUNTS?.trim();
  if (!text) return undefined;
  const mounts = text.split(":").map((m) => m.trim());
  const bad = mounts.find((m) => !m.startsWith("/") || m.split("/").includes(".."));
  if (bad !== undefined)
    throw new UserError(`HOST_MOUNTS: "${bad}" is not an absolute host path without ".." (expected /a:/b/c)`);
  return mounts;
}

export async function openHost(
  hostRoot: string,
  strategy?: StrategyName,
  mounts: readonly string[] | undefined = mountsFromEnv(process.env),
): Promise<Host> {
  const root = path.resolve(hostRoot);
  const stats = await fs.stat(root).catch(() => null);
  if (stats === null) throw new UserError(`--host-root ${hostRoot}: no such directory`);
  if (!stats.isDirectory()) throw new UserError(`--host-root ${hostRoot}: not a directory`);
  // A directory with none of a node's top-level ones (a mistyped or unmounted path) would be read
  // as a node with nothing on it: facts of absence, not of a node.
  const entries = new Set(await fs.readdir(root).catch(() => []));
  if (!NODE_DIRS.some((d) => entries.has(d)))
    throw new UserError(
      `--host-root ${hostRoot}: not a node's root directory (it has no ${NODE_DIRS.join(", ")}): give the directory the node's / is mounted at`,
    );
  // With the whole host at the root ("/"), nothing is outside it.
  return new Host({ root, strategy, ...(mounts !== undefined && root !== "/" ? { mounts } : {}) });
}

/**
 * The host a plan from saved facts (--facts) renders against: an empty root of its own, so that no
 * path a facts file names (a runtime configuration at /root/secret, say) is read on this machine
 * and shown as the diff's context. Every file is planned as new.
 */
export async function factsOnlyHost(): Promise<Host> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), "kata-install-facts-only-"));
  process.once("exit", () => {
    // Empty, as made (nothing writes to it): removed with this process.
    fsSync.rmSync(root, { recursive: true, force: true });
  });
  return new Host({ root, strategy: "root-exec" });
}
