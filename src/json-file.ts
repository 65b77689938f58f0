// A JSON document the user gives (a facts file, a saved plan): read and parsed, or one error naming
// what went wrong, made by the caller, whose error says which document it expected.
import fs from "node:fs/promises";

type Invalid = (details: string[]) => Error;

export async function readDocument(file: string, invalid: Invalid): Promise<string> {
  try {
    return await fs.readFile(file, "utf8");
  } catch (error) {
    throw invalid([`cannot read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`]);
  }
}

export function parseJson(text: string, invalid: Invalid): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw invalid([`invalid JSON: ${(error as Error).message}`]);
  }
}
