import type * as z from "zod/mini";
import type { DetectContext } from "./context.js";

/**
 * One source of facts, the same shape for all (as Node Feature Discovery's feature sources): the
 * Facts key it fills, the schema of its value, and how to read it from a host.
 */
export interface FactSource<Schema extends z.ZodMiniType> {
  readonly key: string;
  readonly schema: Schema;
  detect(ctx: DetectContext): Promise<z.infer<Schema>>;
}

export function defineSource<Schema extends z.ZodMiniType>(source: FactSource<Schema>): FactSource<Schema> {
  return source;
}
