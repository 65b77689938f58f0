import * as z from "zod";

/** Something a fact source could not read or parse: the evidence that a fact is unknown, not absent. */
export const Problem = z.object({
  source: z.string(),
  path: z.string().optional(),
  command: z.string().optional(),
  reason: z.string(),
});
export type Problem = z.infer<typeof Problem>;
