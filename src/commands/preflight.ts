import { toJson } from "../json-text.js";
import {
  type PreflightDocument,
  preflightDocument,
  preflightExitCode,
  renderPreflight,
} from "../output/preflight.js";
import { type DecideCommandOptions, runDecide } from "./decide-run.js";

export async function runPreflight(
  options: DecideCommandOptions,
  out: (text: string) => void,
): Promise<number> {
  const { decision, facts, catalog, host } = await runDecide(options);
  // On a node (not a saved facts file), the checks install makes of it before writing anything.
  if (host !== null) {
    const { installChecks } = await import("../install/install-checks.js");
    const { journalFor } = await import("../install/journal.js");
    const { installDir } = await import("../decide/layout.js");
    decision.checks.push(
      ...(await installChecks(host, facts, decision, catalog, journalFor(host, installDir(decision)))),
    );
  }
  const doc: PreflightDocument = preflightDocument(decision);
  if (options.json) out(`${toJson(doc, 2)}\n`);
  else out(renderPreflight(doc, options.facts ?? options.hostRoot));
  return preflightExitCode(decision);
}
