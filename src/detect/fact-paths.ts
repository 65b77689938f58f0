// Fact paths ("kernel.modules.vhost_vsock.state") checked against the Facts schema: when rules
// load, so that a typo is a load-time error naming the rule, not a rule that silently never
// matches; and when a saved document loads, so that a mistyped key is named. The same paths are
// read from a Facts document at evaluation.
import type * as z from "zod/mini";
import { itemAt } from "../at.js";
import { Facts } from "./facts.js";

export { valueAt } from "./value-at.js";

export type ValueKind = "string" | "number" | "boolean" | "array" | "object" | "any";

export interface PathInfo {
  kind: ValueKind;
  /** For enums: the values a fact can take, so that `In ["lodaed"]` is caught. */
  values?: readonly unknown[];
  /** For arrays: the schema of one element (for `some`). */
  element?: z.ZodMiniType;
}

type Def = { type: string; [key: string]: unknown };
const defOf = (schema: z.ZodMiniType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** Describe `path` within `schema`; throws an Error whose message says which segment is unknown. */
export function describePath(
  path: string,
  schema: z.ZodMiniType = Facts as unknown as z.ZodMiniType,
): PathInfo {
  const segments = path.split(".");
  let current = schema;
  for (let i = 0; i < segments.length; i++) {
    const segment = itemAt(segments, i, "the segment");
    current = unwrap(current);
    const def = defOf(current);
    if (def.type === "object") {
      const shape = def.shape as Record<string, z.ZodMiniType>;
      const next = shape[segment];
      if (next === undefined) {
        const at = segments.slice(0, i).join(".") || "(facts)";
        throw new Error(
          `unknown fact "${path}": ${at} has no "${segment}" (it has: ${Object.keys(shape).join(", ")})`,
        );
      }
      current = next;
    } else if (def.type === "record") {
      current = def.valueType as z.ZodMiniType;
    } else if (isAny(def)) {
      return { kind: "any" };
    } else {
      throw new Error(
        `unknown fact "${path}": ${segments.slice(0, i).join(".")} is a ${kindOf(def)}, not an object`,
      );
    }
  }
  return info(unwrap(current));
}

function info(schema: z.ZodMiniType): PathInfo {
  const def = defOf(schema);
  switch (def.type) {
    case "enum":
      return { kind: "string", values: Object.values(def.entries as Record<string, unknown>) };
    case "literal":
      return {
        kind: typeof (def.values as unknown[])[0] === "number" ? "number" : "string",
        values: def.values as unknown[],
      };
    case "array":
      return { kind: "array", element: def.element as z.ZodMiniType };
    default:
      return { kind: kindOf(def) };
  }
}

function unwrap(schema: z.ZodMiniType): z.ZodMiniType {
  let current = schema;
  for (;;) {
    const def = defOf(current);
    if (def.type === "nullable" || def.type === "optional") current = def.innerType as z.ZodMiniType;
    else return current;
  }
}

function isAny(def: Def): boolean {
  return def.type === "lazy" || def.type === "any" || def.type === "unknown" || def.type === "union";
}

function kindOf(def: Def): ValueKind {
  switch (def.type) {
    case "string":
    case "enum":
      return "string";
    case "number":
    case "int":
      return "number";
    case "boolean":
      return "boolean";
    case "array":
      return "array";
    case "object":
    case "record":
      return "object";
    default:
      return "any";
  }
}

/**
 * Keys of `document` that `schema` does not have, as dotted paths ("kvm.devcie"): a saved facts
 * document with a typo must say so, not pass with the fact silently absent. Records and values of
 * any shape are not looked into.
 */
export function unknownKeys(
  document: unknown,
  schema: z.ZodMiniType = Facts as unknown as z.ZodMiniType,
  at: string[] = [],
): string[] {
  const def = defOf(unwrap(schema));
  if (document === null || typeof document !== "object") return [];
  if (def.type === "array" && Array.isArray(document))
    return document.flatMap((item, i) => unknownKeys(item, def.element as z.ZodMiniType, [...at, `[${i}]`]));
  if (def.type === "record" && !Array.isArray(document))
    return Object.entries(document).flatMap(([k, v]) =>
      unknownKeys(v, def.valueType as z.ZodMiniType, [...at, k]),
    );
  if (def.type !== "object" || Array.isArray(document)) return [];
  const shape = def.shape as Record<string, z.ZodMiniType>;
  return Object.entries(document as Record<string, unknown>).flatMap(([k, v]) =>
    shape[k] === undefined
      ? [[...at, k].join(".").replace(/\.\[/g, "[")]
      : unknownKeys(v, shape[k], [...at, k]),
  );
}
