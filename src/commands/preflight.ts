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
  const { decision } = await runDecide(options);
  const doc: PreflightDocument = preflightDocument(decision);
  if (options.json) out(`${JSON.stringify(doc, null, 2)}\n`);
  else out(renderPreflight(doc, options.facts ?? options.hostRoot));
  return preflightExitCode(decision);
}
