// The only way a value reaches a TOML file: as a literal of its own type. A string cannot end
// early and open a table ("x\"\n[evil]" stays one string); anything that is not a string, number,
// boolean or list of them is refused rather than printed.

export class TomlValueError extends Error {}

export function tomlLiteral(value: unknown): string {
  if (typeof value === "string") return tomlString(value);
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "number") {
    if (!Number.isFinite(value)) return Number.isNaN(value) ? "nan" : value > 0 ? "inf" : "-inf";
    if (Number.isSafeInteger(value)) return String(value);
    // A float (or an integer too large to be exact) keeps a decimal point or an exponent, so
    // that TOML reads it back as the float it is.
    const text = String(value);
    return /[.eE]/.test(text) ? text : `${text}.0`;
  }
  if (Array.isArray(value)) return `[${value.map(tomlLiteral).join(", ")}]`;
  throw new TomlValueError(`not a TOML value: ${value === null ? "null" : typeof value}`);
}

/** A basic string: quotes, backslashes and every control character escaped. */
export function tomlString(text: string): string {
  let out = '"';
  for (const ch of text) {
    const code = ch.codePointAt(0) as number;
    if (ch === '"') out += '\\"';
    else if (ch === "\\") out += "\\\\";
    else if (ch === "\n") out += "\\n";
    else if (ch === "\t") out += "\\t";
    else if (ch === "\r") out += "\\r";
    else if (code < 0x20 || code === 0x7f) out += `\\u${code.toString(16).padStart(4, "0")}`;
    else out += ch;
  }
  return `${out}"`;
}

/** A table key: bare when it can be, quoted otherwise. */
export function tomlKey(key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : tomlString(key);
}

/** A comment's text on one line: a newline would end the comment and start TOML. */
export function tomlComment(text: string): string {
  return String(text).replace(/[\r\n]+/g, " ");
}
