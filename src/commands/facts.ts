import path from "node:path";
import { detectOptionsFromEnv } from "../detect/context.js";
import { detectFacts } from "../detect/facts.js";
import { loadFacts } from "../detect/load.js";
import type { StrategyName } from "../host/command.js";
import { openHost } from "../host/open.js";
import { renderFactsSummary } from "../output/facts-summary.js";

export interface FactsOptions {
  hostRoot: string;
  hostExec?: StrategyName;
  json?: boolean;
  facts?: string;
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
