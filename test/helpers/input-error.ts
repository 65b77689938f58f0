import { InputError } from "../../src/input-error.js";

/** The lines of the InputError that `action` throws (each "file:line: rule key: message"). */
export function inputErrorLines(action: () => unknown): string[] {
  try {
    action();
  } catch (error) {
    if (error instanceof InputError)
      return error.message
        .split("\n")
        .slice(1)
        .map((l) => l.trim());
    throw error;
  }
  throw new Error("no error was raised");
}
