import type { Catalog } from "../decide/catalog.js";
import { TEMPLATE_DEFAULT } from "../decide/provenance.js";
import { UserError } from "../errors.js";
import { explainDocument, renderExplain, selectExplained } from "../output/explain.js";
import { templateDefaults, valueAtKey } from "../render/kata-config.js";
import { loadTemplates } from "../render/templates.js";
import { type DecideCommandOptions, runDecide } from "./decide-run.js";

export async function runExplain(
  keys: string[],
  options: DecideCommandOptions,
  out: (text: string) => void,
): Promise<number> {
  const { prepared, decision } = await runDecide(options);
  const values = explainDocument(decision).values;
  const templates = await loadTemplates();
  const { catalog } = prepared;
  // Each shim's base configuration rendered once, however many keys ask.
  const rendered = new Map<string, Record<string, unknown>>();
  const defaultsOf = (shim: string) => {
    let table = rendered.get(shim);
    if (table === undefined) {
      table = templateDefaults(decision, shim, catalog, templates);
      rendered.set(shim, table);
    }
    return table;
  };
  // A known key that nothing decided has its template's value: show it for each installed shim
  // that has the key; when none is installed, for every shim that has it, saying why it is not
  // (so that any example works on any node).
  for (const key of keys) {
    const [shimPart, keyPart] = key.includes(":")
      ? (key.split(":", 2) as [string, string])
      : [undefined, key];
    const named = catalog.shimNames().filter((shim) => shimPart === undefined || shim === shimPart);
    const installed = named.filter((shim) => decision.shims.some((s) => s.name === shim));
    const withKey = (list: string[]) => list.filter((shim) => fullKeys(catalog, shim, keyPart).length > 0);
    const shims = withKey(installed).length > 0 ? withKey(installed) : withKey(named);
    for (const shim of shims) {
      const dropped = decision.dropped.find((s) => s.name === shim);
      const optIn = catalog.shims.get(shim)?.opt_in
        ? ": an opt-in shim, installed only when named (SHIMS, --shims or the overrides file)"
        : "";
      const notInstalled = installed.includes(shim)
        ? null
        : `${shim} is not installed on this node${dropped ? `: ${dropped.reason}` : optIn}`;
      for (const full of fullKeys(catalog, shim, keyPart)) {
        if (values.some((v) => v.shim === shim && v.key === full)) continue;
        const value = valueAtKey(defaultsOf(shim), full);
        const why = [
          value === undefined ? "not in the template: Kata's built-in default applies" : null,
          notInstalled,
        ];
        const reason = why.filter((w) => w !== null).join("; ");
        values.push({
          kind: "config",
          key: full,
          shim,
          value: value ?? null,
          ...(reason ? { reason } : {}),
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

/** The full keys `key` names for `shim`: itself, or a short name ("shared_fs") in the shim's sections. */
function fullKeys(catalog: Catalog, shim: string, key: string): string[] {
  if (catalog.keyType(shim, key) !== undefined) return [key];
  if (key.includes(".")) return [];
  const hv = catalog.shims.get(shim)?.hypervisor;
  return [`hypervisor.${hv}`, "runtime", "agent.kata", "factory"]
    .map((section) => `${section}.${key}`)
    .filter((full) => catalog.keyType(shim, full) !== undefined);
}
