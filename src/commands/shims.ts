import { renderShims, shimsDocument } from "../output/shims.js";
import { type DecideCommandOptions, runDecide } from "./decide-run.js";

export async function runShims(options: DecideCommandOptions, out: (text: string) => void): Promise<number> {
  const { catalog, decision } = await runDecide(options);
  const doc = shimsDocument(catalog, decision);
  out(options.json ? `${JSON.stringify(doc, null, 2)}\n` : renderShims(doc));
  return 0;
}
