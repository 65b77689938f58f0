// The host a command works on: the node's root directory (`--host-root`), checked before any stage
// reads through it, and how commands run there.
import fs from "node:fs/promises";
import path from "node:path";
import { UserError } from "../errors.js";
import type { StrategyName } from "./command.js";
import { Host } from "./host.js";

export async function openHost(hostRoot: string, strategy?: StrategyName): Promise<Host> {
  const root = path.resolve(hostRoot);
  const stats = await fs.stat(root).catch(() => null);
  if (stats === null) throw new UserError(`--host-root ${hostRoot}: no such directory`);
  if (!stats.isDirectory()) throw new UserError(`--host-root ${hostRoot}: not a directory`);
  return new Host({ root, strategy });
}
