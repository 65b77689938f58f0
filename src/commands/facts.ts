import path from "node:path";
import { detectOptionsFromEnv, kataDirFromEnv } from "../detect/context.js";
import { detectFacts, type Facts } from "../detect/facts.js";
import { loadFacts } from "../detect/load.js";
import { ProbeCache } from "../detect/probe-cache.js";
import { UserError } from "../errors.js";
import type { StrategyName } from "../host/command.js";
import { openHost } from "../host/open.js";
import { toJson } from "../json-text.js";
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
  const facts = options.facts !== undefined ? await loadFacts(options.facts) : await detectNode(options, env);
  if (options.json && options.nfd) throw new UserError("--json and --nfd: choose one");
  if (options.nfd) out(await nfdFeatures(facts, options.hostRoot, "kata-install facts --nfd"));
  else if (options.json) out(`${toJson(facts, 2)}\n`);
  else
    out(
      renderFactsSummary(
        facts,
        options.facts !== undefined ? { file: options.facts } : { hostRoot: path.resolve(options.hostRoot) },
      ),
    );
  return 0;
}

/**
 * The node's facts, as a plan reads them: what kata-install's own binaries answered its last
 * install is taken from its probe cache (read only: facts writes nothing), not asked again.
 */
async function detectNode(
  options: FactsOptions,
  env: Readonly<Record<string, string | undefined>>,
): Promise<Facts> {
  const host = await openHost(options.hostRoot, options.hostExec);
  const probes = await ProbeCache.load(host, kataDirFromEnv(env));
  return detectFacts(host, { probes, ...detectOptionsFromEnv(env) });
}
