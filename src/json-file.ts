// A JSON document the user gives (a facts file, a saved plan): read and parsed, or one error naming
// what went wrong, made by the caller, whose error says which document it expected.
import { readInputText } from "./input-file.js";
import { fromJson, jsonErrorText } from "./json-text.js";

type Invalid = (details: string[]) => Error;

/** A saved plan is the largest of these documents: Kata's configurations and their diffs, ~1 MB. */
export const MAX_DOCUMENT_BYTES = 16 << 20;

export async function readDocument(
  file: string,
  invalid: Invalid,
  maxBytes = MAX_DOCUMENT_BYTES,
): Promise<string> {
  const read = readInputText(file, maxBytes);
  if (!read.ok) throw invalid([`cannot read: it ${read.reason}`]);
  return read.text;
}

export function parseJson(text: string, invalid: Invalid): unknown {
  try {
    return fromJson(text);
  } catch (error) {
    throw invalid([`invalid JSON: ${jsonErrorText(error)}`]);
  }
}
