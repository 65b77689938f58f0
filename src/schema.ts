// Schemas use zod/mini: the same validation as classic zod, but its module loads in about half the
// time (measured: ~14 ms against ~33 ms here), and every command that validates input pays that at
// start. Mini ships no messages; English ones are installed here, once, for every schema.
import * as z from "zod/mini";
import en from "zod/v4/locales/en.js";

z.config(en());

/** "kvm.device", "cpu.flags[2]": the key at fault, as a user would write it. */
export function keyPath(path: ReadonlyArray<PropertyKey>): string {
  if (path.length === 0) return "(document)";
  return path
    .map((part, i) => (typeof part === "number" ? `[${part}]` : `${i === 0 ? "" : "."}${String(part)}`))
    .join("");
}

interface SchemaDef {
  type: string;
  shape?: Record<string, { _zod: { def: SchemaDef } }>;
  innerType?: { _zod: { def: SchemaDef } };
  valueType?: { _zod: { def: SchemaDef } };
  element?: { _zod: { def: SchemaDef } };
}

/**
 * The keys an object of `schema` at `path` may have (for "did you mean"): the schema walked
 * through optional and nullable wrappers, records' values and arrays' elements. Empty where the
 * path leads to no object.
 */
export function keysAt(schema: z.ZodMiniType, path: ReadonlyArray<PropertyKey>): string[] {
  let def = (schema as unknown as { _zod: { def: SchemaDef } })._zod.def;
  const unwrap = () => {
    while ((def.type === "optional" || def.type === "nullable") && def.innerType)
      def = def.innerType._zod.def;
  };
  unwrap();
  for (const part of path) {
    const next =
      def.type === "object"
        ? def.shape?.[String(part)]
        : def.type === "record"
          ? def.valueType
          : def.type === "array"
            ? def.element
            : undefined;
    if (next === undefined) return [];
    def = next._zod.def;
    unwrap();
  }
  return def.type === "object" ? Object.keys(def.shape ?? {}) : [];
}
