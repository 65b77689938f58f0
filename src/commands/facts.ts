import path from "node:path";
import { detectOptionsFromEnv } from "../detect/context.js";
import { detectFacts, type Facts } from "../detect/facts.js";
import { loadFacts } from "../detect/load.js";
import { UserError } from "../errors.js";
import type { StrategyName } from "../host/command.js";
import { openHost } from "../host/open.js";
import { renderFactsSummary } from "../output/facts-summary.js";

export interface FactsOptions {
  hostRoot: string;
  hostExec?: StrategyName;
  json?: boolean;
  facts?: string;
  /** Print the node's Kata facts as a Node Feature Discovery feature file. */
  nfd?: boolean;
}

/**
 * The feature file of a node: its facts, and the shims kata-install's rules let it run (nothing
 * pinned: no environment, no overrides), so that NFD labels say what the node can do.
 */
export async function nfdFeatures(facts: Facts, hostRoot: string, from: string): Promise<string> {
  // Loaded only when asked: a plain `facts` decides nothing.
  const { decideFor } = await import("../decide/decide-for.js");
  const { prepare } = await import("../inputs/prepare.js");
  const { summarize } = await import("../kube/summary.js");
  const { nfdFeatureFile } = await import("../kube/nfd-features.js");
  const { decision } = decideFor(await prepare({ hostRoot, overrides: null, env: {} }), facts);
  return nfdFeatureFile(summarize(facts, decision), from);
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
  if (options.json && options.nfd) throw new UserError("--json and --nfd: choose one");
  if (options.nfd) out(await nfdFeatures(facts, options.hostRoot, "kata-install facts --nfd"));
  else if (options.json) out(`${JSON.stringify(facts, null, 2)}\n`);
  else
    out(
      renderFactsSummary(
        facts,
        options.facts !== undefined ? { file: options.facts } : { hostRoot: path.resolve(options.hostRoot) },
      ),
    );
  return 0;
}
