// Where a key of a TOML document stands, so that an error can name its line. smol-toml gives lines
// for syntax errors only; for a value that parses but is wrong (an unknown key, a bad type) this
// scans the text once and records the line of each table header and key.
//
// Paths are the parsed document's: ["rule", 2, "check", "id"] for the id of the third [[rule]].
// Keys inside an inline table or array that spans lines map to the line of the key that opens it.
import { itemAt } from "./at.js";

export type TomlPath = ReadonlyArray<string | number>;

export class TomlLines {
  // Built when a line is first asked for: most documents read without an error never need it.
  private index: Map<string, number> | null = null;

  constructor(private readonly text: string) {}

  /** The line of the path, or of its nearest ancestor that has one. */
  lineOf(path: TomlPath): number | undefined {
    this.index ??= indexLines(this.text);
    for (let n = path.length; n > 0; n--) {
      const found = this.index.get(JSON.stringify(path.slice(0, n)));
      if (found !== undefined) return found;
    }
    return undefined;
  }
}

/** One scan of the text: the line of each table header and key, by its path. */
function indexLines(text: string): Map<string, number> {
  const lines = new Map<string, number>();
  const set = (path: TomlPath, line: number) => {
    const id = JSON.stringify(path);
    if (!lines.has(id)) lines.set(id, line);
  };
  const arrayCounts = new Map<string, number>();
  let table: Array<string | number> = [];
  let depth = 0; // open brackets and braces of a multi-line value
  text.split("\n").forEach((raw, index) => {
    const line = index + 1;
    const content = stripComment(raw).trim();
    if (depth > 0) {
      depth += bracketBalance(content);
      return;
    }
    if (content === "") return;
    const arrayHeader = /^\[\[\s*(.+?)\s*\]\]$/.exec(content);
    const header = arrayHeader ? null : /^\[\s*(.+?)\s*\]$/.exec(content);
    if (arrayHeader) {
      const keys = splitKey(itemAt(arrayHeader, 1, "the table name"));
      const id = JSON.stringify(keys);
      const n = arrayCounts.get(id) ?? 0;
      arrayCounts.set(id, n + 1);
      table = [...keys, n];
      set(table, line);
      return;
    }
    if (header) {
      table = resolveTable(splitKey(itemAt(header, 1, "the table name")), arrayCounts);
      // [a.b] makes table a too, where no line of its own does: its first mention is its line.
      for (let n = 1; n <= table.length; n++) set(table.slice(0, n), line);
      return;
    }
    const eq = findEquals(content);
    if (eq < 0) return;
    const keys = [...table, ...splitKey(content.slice(0, eq))];
    for (let n = table.length + 1; n <= keys.length; n++) set(keys.slice(0, n), line);
    depth = bracketBalance(content.slice(eq + 1));
  });
  return lines;
}

/** [a.b] inside [[a]]: the header's prefix that names an array of tables refers to its last element. */
function resolveTable(keys: string[], arrayCounts: Map<string, number>): Array<string | number> {
  const out: Array<string | number> = [];
  for (let i = 0; i < keys.length; i++) {
    out.push(itemAt(keys, i, "the key"));
    const n = arrayCounts.get(JSON.stringify(keys.slice(0, i + 1)));
    if (n !== undefined && i < keys.length - 1) out.push(n - 1);
  }
  return out;
}

/** The parts of a dotted key, quotes removed: `plugins."io.containerd.grpc.v1.cri".x` → 3 parts. */
export function splitKey(key: string): string[] {
  const parts: string[] = [];
  let i = 0;
  const s = key.trim();
  while (i < s.length) {
    while (s[i] === " " || s[i] === "\t") i++;
    if (s[i] === '"' || s[i] === "'") {
      const quote = s[i];
      let j = i + 1;
      let value = "";
      while (j < s.length && s[j] !== quote) {
        if (quote === '"' && s[j] === "\\") {
          value += s[j + 1] ?? "";
          j += 2;
          continue;
        }
        value += s[j];
        j++;
      }
      parts.push(value);
      i = j + 1;
    } else {
      let j = i;
      while (j < s.length && s[j] !== ".") j++;
      parts.push(s.slice(i, j).trim());
      i = j;
    }
    while (s[i] === " " || s[i] === "\t") i++;
    if (s[i] === ".") i++;
  }
  return parts.filter((p) => p !== "");
}

/**
 * Walk TOML text from `from`, calling `visit` for each character outside strings (basic strings
 * with their escapes, literal strings) and, with `skipComments`, outside comments; `visit` returns
 * true to stop there. Returns where it stopped, or the text's length. The one place that knows
 * where strings and comments end.
 */
export function scanOutsideStrings(
  text: string,
  from: number,
  visit: (c: string, i: number) => boolean,
  skipComments = false,
): number {
  let quote: string | null = null;
  for (let i = from; i < text.length; i++) {
    const c = text.charAt(i);
    if (quote) {
      if (c === "\\" && quote === '"') i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (skipComments && c === "#") {
      const end = text.indexOf("\n", i);
      i = end < 0 ? text.length : end;
    } else if (visit(c, i)) return i;
  }
  return text.length;
}

function findEquals(content: string): number {
  const at = scanOutsideStrings(content, 0, (c) => c === "=");
  return at === content.length ? -1 : at;
}

function stripComment(line: string): string {
  return line.slice(
    0,
    scanOutsideStrings(line, 0, (c) => c === "#"),
  );
}

function bracketBalance(text: string): number {
  let balance = 0;
  scanOutsideStrings(text, 0, (c) => {
    if (c === "[" || c === "{") balance++;
    else if (c === "]" || c === "}") balance--;
    return false;
  });
  return balance;
}
