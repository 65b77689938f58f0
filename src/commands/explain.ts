import { UserError } from "../errors.js";
import { explainDocument, renderExplain, selectExplained } from "../output/explain.js";
import { type DecideCommandOptions, runDecide } from "./decide-run.js";

export async function runExplain(
  keys: string[],
  options: DecideCommandOptions,
  out: (text: string) => void,
): Promise<number> {
  const { decision } = await runDecide(options);
  const { selected, unmatched } = selectExplained(explainDocument(decision).values, keys);
  if (unmatched.length > 0) {
    throw new UserError(
      `nothing decided matches ${unmatched.map((k) => `"${k}"`).join(", ")} (try a key such as hypervisor.qemu.shared_fs, a shim name, or shim:key)`,
    );
  }
  if (options.json) out(`${JSON.stringify({ values: selected }, null, 2)}\n`);
  else out(renderExplain(selected));
  return 0;
}
