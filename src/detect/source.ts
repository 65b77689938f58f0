import type * as z from "zod/mini";
import type { DetectContext } from "./context.js";

/**
 * One source of facts, the same shape for all (as Node Feature Discovery's feature sources): the
 * Facts key it fills, the schema of its value, how to read it from a host, and what it is when
 * nothing could be read. Everything the Facts document needs of a source is here, so that adding
 * one is one entry in SOURCES (sources.ts).
 */
export interface FactSource<Key extends string = string, Schema extends z.ZodMiniType = z.ZodMiniType> {
  readonly key: Key;
  readonly schema: Schema;
  /** It asks host binaries: detection starts it first, so its processes run while the others read files. */
  readonly startsProcesses: boolean;
  /**
   * Its value when nothing could be read: its detector failed, or a saved document predates it.
   * Required, so a source without one does not compile. A field added to a source later is
   * z.optional instead, so that documents saved before it still load.
   */
  readonly unknown: z.output<Schema>;
  detect(ctx: DetectContext): Promise<z.output<Schema>>;
}

export function defineSource<const Key extends string, Schema extends z.ZodMiniType>(
  source: FactSource<Key, Schema>,
): FactSource<Key, Schema> {
  return source;
}

/** The Facts entries of a list of sources: key → schema, each as precisely typed as its source. */
export type SourcesShape<Sources extends readonly FactSource[]> = {
  [Source in Sources[number] as Source["key"]]: Source["schema"];
};

/** The shape for z.object, in the list's order (the order of the document). */
export function sourcesShape<const Sources extends readonly FactSource[]>(
  sources: Sources,
): SourcesShape<Sources> {
  return Object.fromEntries(sources.map((source) => [source.key, source.schema])) as SourcesShape<Sources>;
}
