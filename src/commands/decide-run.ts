// What preflight, explain and shims share: validate every input, then read the node (or a saved
// facts file), then decide.

import { parseArtifactSpecifier } from "../artifacts/open-source.js";
import { must } from "../at.js";
import { decideFor } from "../decide/decide-for.js";
import { detectOptionsFromEnv } from "../detect/context.js";
import { detectFacts, type Facts } from "../detect/facts.js";
import { loadFacts } from "../detect/load.js";
import { openHost } from "../host/open.js";
import { type DecideOptions, prepare } from "../inputs/prepare.js";
import type { DecideCommandOptions } from "../pipeline/pipeline.js";
import { readRelease } from "../release-read.js";

export async function runDecide(options: DecideCommandOptions, env?: DecideOptions["env"]) {
  const prepared = await prepare({ ...options, env });
  parseArtifactSpecifier(options.artifacts); // checked before the node is read
  const host = options.facts !== undefined ? null : await openHost(options.hostRoot, options.hostExec);
  const facts: Facts =
    host === null
      ? await loadFacts(must(options.facts, "--facts"))
      : await detectFacts(host, detectOptionsFromEnv(env ?? process.env));
  const { release } = await readRelease(options, facts, host, env ?? process.env);
  const { decision, catalog } = decideFor(prepared, facts, release);
  return { prepared, facts, decision, catalog, release, host };
}

export type { DecideCommandOptions };
