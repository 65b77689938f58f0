import * as z from "zod/mini";
import { byText } from "../compare.js";

/** Something a fact source could not read or parse: the evidence that a fact is unknown, not absent. */
export const Problem = z.object({
  source: z.string(),
  path: z.optional(z.string()),
  command: z.optional(z.string()),
  reason: z.string(),
});
export type Problem = z.infer<typeof Problem>;

/** By source, then file or command: the same order whatever order they were met in. */
export function sortProblems(problems: Problem[]): Problem[] {
  return problems.sort((a, b) =>
    byText(`${a.source}\0${a.path ?? a.command ?? ""}`, `${b.source}\0${b.path ?? b.command ?? ""}`),
  );
}
