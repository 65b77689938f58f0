// `--facts FILE`: a saved Facts document, brought to this kata-install's schema (upgrade.ts) and
// validated before any stage uses it.

import { UserError } from "../errors.js";
import { parseJson, readDocument } from "../json-file.js";
import { keyPath } from "../schema.js";
import { unknownKeys } from "./fact-paths.js";
import { Facts } from "./facts.js";
import { NewerSchemaError, upgradeFacts } from "./upgrade.js";

/** A node's facts are tens of kilobytes. */
export const MAX_FACTS_BYTES = 4 << 20;

export class FactsFileError extends UserError {
  constructor(
    readonly file: string,
    readonly details: string[],
  ) {
    super(`${file}: not a valid facts document:\n${details.map((d) => `  - ${d}`).join("\n")}`);
  }
}

export async function loadFacts(file: string): Promise<Facts> {
  return parseFacts(
    file,
    await readDocument(file, (details) => new FactsFileError(file, details), MAX_FACTS_BYTES),
  );
}

export function parseFacts(file: string, text: string): Facts {
  const json = parseJson(text, (details) => new FactsFileError(file, details));
  let document: unknown;
  try {
    document = upgradeFacts(json);
  } catch (error) {
    // Alone: its other keys would be listed as no such fact, when they are facts this one lacks.
    if (error instanceof NewerSchemaError) throw new FactsFileError(file, [error.message]);
    throw error;
  }
  const result = Facts.safeParse(document);
  // Every problem at once: wrong values, and keys no fact has (a typo would read as a fact absent).
  const unknown = unknownKeys(document).map((key) => `${key}: no such fact`);
  if (result.success && unknown.length === 0) return result.data;
  throw new FactsFileError(file, [
    ...(result.success ? [] : result.error.issues.map((issue) => `${keyPath(issue.path)}: ${issue.message}`)),
    ...unknown,
  ]);
}
