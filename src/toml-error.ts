// A TOML parse error as one line an admin can act on, for every floor that reads TOML.
import { TomlError } from "smol-toml";

/** "line 3, column 7: …" — the first line of smol-toml's message, which otherwise embeds a code block. */
export function tomlErrorText(error: unknown): string {
  if (error instanceof TomlError) {
    const message = error.message.replace(/^Invalid TOML document: /, "").split("\n")[0];
    return `invalid TOML at line ${error.line}, column ${error.column}: ${message}`;
  }
  return `invalid TOML: ${(error as Error).message}`;
}
