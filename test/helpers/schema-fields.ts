// The fields of a zod schema as the README's tables list them: one row per field, its path
// ("changes[].path"; "hint?" when it may be absent) and its type, so a test can hold the README's
// field tables to the schemas they document.
import type * as z from "zod/mini";
import { Sha256 } from "../../src/plan-schema.js";

interface Def {
  type: string;
  shape?: Record<string, z.ZodMiniType>;
  element?: z.ZodMiniType;
  innerType?: z.ZodMiniType;
  valueType?: z.ZodMiniType;
  values?: unknown[];
  entries?: Record<string, string>;
}

const defOf = (schema: z.ZodMiniType) => (schema as unknown as { _zod: { def: Def } })._zod.def;

function typeName(schema: z.ZodMiniType): string {
  if (schema === Sha256) return "sha256";
  const def = defOf(schema);
  switch (def.type) {
    case "nullable":
      return `${typeName(def.innerType as z.ZodMiniType)} or null`;
    case "optional":
      return typeName(def.innerType as z.ZodMiniType);
    case "array":
      return `${typeName(def.element as z.ZodMiniType)}[]`;
    case "record":
      return `map of ${typeName(def.valueType as z.ZodMiniType)}`;
    case "literal":
      return (def.values ?? []).map((v) => JSON.stringify(v)).join(" / ");
    case "enum":
      return Object.values(def.entries ?? {})
        .map((v) => `"${v}"`)
        .join(" / ");
    default:
      return def.type;
  }
}

/** Rows [field, type], depth first, in the schema's order; `opaque` fields are not descended into. */
export function schemaFields(schema: z.ZodMiniType, opaque: string[] = [], at = ""): Array<[string, string]> {
  const rows: Array<[string, string]> = [];
  for (const [key, field] of Object.entries(defOf(schema).shape ?? {})) {
    const optional = defOf(field).type === "optional";
    const name = `${at}${key}${optional ? "?" : ""}`;
    rows.push([name, typeName(field)]);
    if (opaque.includes(name)) continue;
    let inner = field;
    while (["optional", "nullable"].includes(defOf(inner).type))
      inner = defOf(inner).innerType as z.ZodMiniType;
    // An optional object's fields are named without the "?": transfer.bytes, not transfer?.bytes.
    if (defOf(inner).type === "object") rows.push(...schemaFields(inner, opaque, `${at}${key}.`));
    const element = defOf(inner).element;
    if (defOf(inner).type === "array" && element && defOf(element).type === "object")
      rows.push(...schemaFields(element, opaque, `${at}${key}[].`));
  }
  return rows;
}

/** The first two cells of each row of the README table that follows `heading`, backticks dropped. */
export function readmeFields(readme: string, heading: string): Array<[string, string]> {
  const start = readme.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`no heading ${heading}`);
  const lines = readme.slice(start).split("\n");
  const first = lines.findIndex((l) => l.startsWith("|"));
  const table = lines.slice(
    first,
    lines.findIndex((l, i) => i > first && !l.startsWith("|")),
  );
  return table.slice(2).map((row) => {
    const cells = row
      .split(/(?<!\\)\|/)
      .slice(1, 3)
      .map((c) => c.trim().replaceAll("`", "").replaceAll("\\|", "|"));
    return [cells[0] as string, cells[1] as string];
  });
}
