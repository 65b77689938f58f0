import fs from "node:fs/promises";
import path from "node:path";
import { detectOptionsFromEnv } from "../detect/context.js";
import { detectFacts } from "../detect/facts.js";
import { loadFacts } from "../detect/load.js";
import { UserError } from "../errors.js";
import type { StrategyName } from "../host/command.js";
import { Host } from "../host/host.js";
import { renderFactsSummary } from "../output/facts-summary.js";

export interface FactsOptions {
  hostRoot: string;
  hostExec?: StrategyName;
  json?: boolean;
  facts?: string;
}

export async function openHost(hostRoot: string, strategy?: StrategyName): Promise<Host> {
  const root = path.resolve(hostRoot);
  const stats = await fs.stat(root).catch(() => null);
  if (stats === null) throw new UserError(`--host-root ${hostRoot}: no such directory`);
  if (!stats.isDirectory()) throw new UserError(`--host-root ${hostRoot}: not a directory`);
  return new Host({ root, strategy });
}

export async function runFacts(
  options: FactsOptions,
  out: (text: string) => void,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<number> {
  const facts =
    options.facts !== undefined
      ? await loadFacts(options.facts)
      : await detectFacts(await openHost(options.hostRoot, options.hostExec), detectOptionsFromEnv(env));
  if (options.json) out(`${JSON.stringify(facts, null, 2)}\n`);
  else out(renderFactsSummary(facts, options.facts ?? path.resolve(options.hostRoot)));
  return 0;
}
