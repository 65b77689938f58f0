import { TEMPLATE_DEFAULT } from "../decide/decide.js";
import { UserError } from "../errors.js";
import { explainDocument, renderExplain, selectExplained } from "../output/explain.js";
import { type DecideCommandOptions, runDecide } from "./decide-run.js";

export async function runExplain(
  keys: string[],
  options: DecideCommandOptions,
  out: (text: string) => void,
): Promise<number> {
  const { prepared, decision } = await runDecide(options);
  const values = explainDocument(decision).values;
  // A known key that nothing decided keeps its template default: say so rather than "no match".
  for (const key of keys) {
    const [shimPart, keyPart] = key.includes(":") ? key.split(":", 2) : [undefined, key];
    for (const shim of decision.shims) {
      if (shimPart !== undefined && shim.name !== shimPart) continue;
      const type = prepared.catalog.keyType(shim.name, keyPart as string);
      if (type !== undefined && !values.some((v) => v.shim === shim.name && v.key === keyPart)) {
        values.push({
          kind: "config",
          key: keyPart as string,
          shim: shim.name,
          value: null,
          source: TEMPLATE_DEFAULT,
          beaten: [],
        });
      }
    }
  }
  const { selected, unmatched } = selectExplained(values, keys);
  if (unmatched.length > 0) {
    throw new UserError(
      `nothing decided matches ${unmatched.map((k) => `"${k}"`).join(", ")} (try a key such as hypervisor.qemu.shared_fs, a shim name, or shim:key)`,
    );
  }
  if (options.json) out(`${JSON.stringify({ values: selected }, null, 2)}\n`);
  else out(renderExplain(selected));
  return 0;
}
