// What preflight, explain and shims share: validate every input, then read the node (or a saved
// facts file), then decide.

import { type DecideOptions, decideFor, prepare } from "../decide/prepare.js";
import { detectOptionsFromEnv } from "../detect/context.js";
import { detectFacts, type Facts } from "../detect/facts.js";
import { loadFacts } from "../detect/load.js";
import type { StrategyName } from "../host/command.js";
import { openHost } from "../host/open.js";

export interface DecideCommandOptions {
  hostRoot: string;
  hostExec?: StrategyName;
  facts?: string;
  overrides?: string;
  shims?: string;
  defaultShim?: string;
  ignorePreflightErrors?: string;
  json?: boolean;
}

export async function runDecide(options: DecideCommandOptions, env?: DecideOptions["env"]) {
  const prepared = prepare({ ...options, env });
  const facts: Facts =
    options.facts !== undefined
      ? await loadFacts(options.facts)
      : await detectFacts(
          await openHost(options.hostRoot, options.hostExec),
          detectOptionsFromEnv(env ?? process.env),
        );
  const { decision } = decideFor(prepared, facts);
  return { prepared, facts, decision };
}
