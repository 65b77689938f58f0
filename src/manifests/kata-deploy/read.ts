// A values file for kata-deploy's chart, read as YAML with the line of every key, and held to the
// chart's shape (chart.ts): an unknown key, a value of the wrong kind or one the chart does not
// take is an issue naming the file, line and key. What it yields is plain data, and the list of
// every key it set, so that mapping can account for each.
import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument, type Scalar } from "yaml";
import type { InputIssue } from "../../input-error.js";
import type { ChartValues, Kind, Spec, ValueOf } from "./chart.js";

export type Path = readonly string[];

export interface ChartFile<Values = ChartValues> {
  file: string;
  /** What fits the spec, typed by it: a value of the wrong kind is left out (and is an issue). */
  values: Values;
  /** Every key set, down to the chart's leaves (a free-form value counts as one). */
  leaves: Path[];
  lineOf(path: Path): number | undefined;
  /** The first line of a block scalar's text (a dropIn's TOML starts on the line after `|`). */
  textLine(path: Path): number | undefined;
}

const key = (path: Path) => path.join(".");

function kindOf(node: Node | null): string {
  if (node === null || (isScalar(node) && node.value === null)) return "null";
  if (isMap(node)) return "a map";
  if (isSeq(node)) return "a list";
  return `a ${typeof (node as Scalar).value}`;
}

export function readChartValues<S extends Spec>(
  file: string,
  text: string,
  spec: S,
  issues: InputIssue[],
): ChartFile<ValueOf<S>> {
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, uniqueKeys: true });
  const lines = new Map<string, number>();
  const textLines = new Map<string, number>();
  const leaves: Path[] = [];
  const lineAt = (offset: number | undefined) =>
    offset === undefined ? undefined : counter.linePos(offset).line;
  for (const error of doc.errors)
    issues.push({
      file,
      line: lineAt(error.pos[0]),
      message: `not valid YAML: ${error.message.split("\n")[0]}`,
    });
  if (doc.errors.length > 0) return chartFile(file, {} as ValueOf<S>, leaves, lines, textLines);

  const bad = (path: Path, message: string) =>
    issues.push({ file, line: lines.get(key(path)), key: key(path), message });

  /** The value of `node` held to `spec`; undefined when it is not of that shape (an issue is added). */
  const walk = (node: Node | null, s: Spec, path: Path): unknown => {
    if (s.children !== undefined || s.each !== undefined) {
      if (node === null || (isScalar(node) && node.value === null)) return undefined; // "key:" alone: nothing set
      if (!isMap(node)) return void bad(path, `expected a map, got ${kindOf(node)}`);
      const out: Record<string, unknown> = {};
      for (const pair of node.items) {
        const name = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        const sub = [...path, name];
        lines.set(key(sub), lineAt((pair.key as Node | null)?.range?.[0]) ?? 0);
        const removed = s.removed?.[name];
        const child = s.children?.[name] ?? s.each ?? (s.open ? { kind: "any" as Kind } : undefined);
        if (removed !== undefined) bad(sub, removed);
        else if (child === undefined) {
          const known = Object.keys(s.children ?? {})
            .sort()
            .join(", ");
          bad(sub, `not a key of kata-deploy's chart (known here: ${known})`);
        } else {
          const value = walk(pair.value as Node | null, child, sub);
          if (value !== undefined) out[name] = value;
        }
      }
      return out;
    }
    const value = leafValue(node, s, path, bad);
    if (value !== undefined) {
      leaves.push(path);
      if (isScalar(node) && (node.type === "BLOCK_LITERAL" || node.type === "BLOCK_FOLDED"))
        textLines.set(key(path), (lineAt(node.range?.[0]) ?? 0) + 1);
    }
    return value;
  };
  // walk kept only what fits the spec: the shape ValueOf<S> says.
  const values = (walk(doc.contents as Node | null, spec, []) ?? {}) as ValueOf<S>;
  return chartFile(file, values, leaves, lines, textLines);
}

function leafValue(
  node: Node | null,
  s: Spec,
  path: Path,
  bad: (path: Path, message: string) => void,
): unknown {
  const isNull = node === null || (isScalar(node) && node.value === null);
  const scalar = isScalar(node) ? node : null;
  const expected = (what: string) => void bad(path, `expected ${what}, got ${kindOf(node)}`);
  switch (s.kind) {
    case "any":
      return isNull ? null : (node as Node).toJSON();
    case "bool?":
      if (isNull) return null;
      return typeof scalar?.value === "boolean" ? scalar.value : expected("true, false or ~");
    case "bool":
      return typeof scalar?.value === "boolean" ? scalar.value : expected("true or false");
    case "int":
      return Number.isInteger(scalar?.value) ? scalar?.value : expected("a whole number");
    case "string": {
      if (isNull) return ""; // Helm reads a null string as empty
      // Unquoted numbers stay as written: a tag 4.10 is "4.10", not 4.1.
      if (scalar === null || typeof scalar.value === "object") return expected("a string");
      const text = typeof scalar.value === "string" ? scalar.value : String(scalar.source ?? scalar.value);
      if (s.oneOf && !s.oneOf.includes(text))
        return void bad(path, `"${text}": expected one of ${s.oneOf.map((o) => `"${o}"`).join(", ")}`);
      return text;
    }
    case "strings": {
      if (isNull) return [];
      if (!isSeq(node) || !node.items.every((i) => isScalar(i) && typeof i.value === "string"))
        return expected("a list of strings");
      const list = node.items.map((i) => String((i as Scalar).value));
      const stray = s.oneOf ? list.filter((i) => !s.oneOf?.includes(i)) : [];
      if (stray.length > 0)
        return void bad(
          path,
          `${stray.map((i) => `"${i}"`).join(", ")}: expected some of ${s.oneOf?.join(", ")}`,
        );
      return list;
    }
    case "labels": {
      if (isNull) return {};
      if (!isMap(node)) return expected("a map of strings");
      const out: Record<string, string> = {};
      for (const pair of node.items) {
        const v = isScalar(pair.value) ? pair.value.value : undefined;
        if (typeof v === "object" || v === undefined)
          return expected("a map of strings (quote numbers and booleans)");
        out[String((pair.key as Scalar).value)] = String(v);
      }
      return out;
    }
    case "list":
      if (isNull) return [];
      return isSeq(node) ? node.toJSON() : expected("a list");
    case "object":
      if (isNull) return {};
      return isMap(node) ? node.toJSON() : expected("a map");
    default:
      return undefined;
  }
}

function chartFile<Values>(
  file: string,
  values: Values,
  leaves: Path[],
  lines: Map<string, number>,
  textLines: Map<string, number>,
): ChartFile<Values> {
  return {
    file,
    values,
    leaves,
    lineOf: (path) => {
      // The nearest key that has a line: a chart default inside a key the file sets names its line.
      for (let n = path.length; n > 0; n--) {
        const line = lines.get(key(path.slice(0, n)));
        if (line !== undefined) return line;
      }
      return undefined;
    },
    textLine: (path) => textLines.get(key(path)),
  };
}
