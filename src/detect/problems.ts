import * as z from "zod/mini";

/** Something a fact source could not read or parse: the evidence that a fact is unknown, not absent. */
export const Problem = z.object({
  source: z.string(),
  path: z.optional(z.string()),
  command: z.optional(z.string()),
  reason: z.string(),
});
export type Problem = z.infer<typeof Problem>;
