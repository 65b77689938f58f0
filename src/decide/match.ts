// Match expressions over facts, with Node Feature Discovery's operators plus version comparison.
// Written in rule files as:
//   match = [ { fact = "arch", op = "In", value = ["x86_64"] },
//             { any = [ { fact = "cpu.flags", op = "In", value = ["vmx"] }, ... ] },
//             { some = "pci.devices", where = [ { fact = "vendor", op = "In", value = ["10de"] } ] } ]
// A list means all of its items; `any` means one of them; `some` means one element of a fact list
// satisfies every `where` item (paths inside `where` are relative to the element).

import { describePath, type PathInfo, valueAt } from "../detect/fact-paths.js";
import { compareVersions, versionParts } from "../version.js";

export const OPERATORS = [
  "In",
  "NotIn",
  "InRegexp",
  "Exists",
  "DoesNotExist",
  "Gt",
  "Lt",
  "GtLt",
  "IsTrue",
  "IsFalse",
  "VersionAtLeast",
  "VersionBelow",
] as const;
export type Operator = (typeof OPERATORS)[number];

export type Scalar = string | number | boolean;

export type MatchNode =
  | { kind: "expr"; fact: string; op: Operator; value?: Scalar | Scalar[]; regexps?: RegExp[] }
  | { kind: "all"; nodes: MatchNode[] }
  | { kind: "any"; nodes: MatchNode[] }
  | { kind: "some"; fact: string; where: MatchNode[] };

/** A problem in a match expression, with the key path inside the rule (e.g. "match[1].any[0].op"). */
export class MatchError extends Error {
  constructor(
    readonly key: string,
    message: string,
  ) {
    super(message);
  }
}

export interface CompileScope {
  /** Describe a fact path, or throw with what is wrong. */
  describe(path: string): PathInfo;
  /** Every variable some rule sets: `vars.<name>` may only name these. */
  vars: ReadonlySet<string>;
}

export function factScope(vars: ReadonlySet<string>): CompileScope {
  return {
    vars,
    describe(path) {
      if (path.startsWith("vars.")) {
        const name = path.slice(5);
        if (!vars.has(name)) throw new Error(`unknown variable "${name}": no rule sets it`);
        return { kind: "any" };
      }
      return describePath(path);
    },
  };
}

export function compileMatch(raw: unknown, key: string, scope: CompileScope): MatchNode {
  if (Array.isArray(raw)) {
    if (raw.length === 0) throw new MatchError(key, "an empty list matches every node; say what to match");
    return { kind: "all", nodes: raw.map((item, i) => compileMatch(item, `${key}[${i}]`, scope)) };
  }
  if (raw === null || typeof raw !== "object")
    throw new MatchError(key, "expected a table: { fact, op, value }, { all }, { any } or { some, where }");
  const table = raw as Record<string, unknown>;
  const keys = Object.keys(table);
  if ("all" in table || "any" in table) {
    const which = "all" in table ? "all" : "any";
    if (keys.length !== 1)
      throw new MatchError(key, `{ ${which} = [...] } takes nothing else (found ${keys.join(", ")})`);
    const list = table[which];
    if (!Array.isArray(list) || list.length === 0)
      throw new MatchError(`${key}.${which}`, "expected a non-empty list");
    return { kind: which, nodes: list.map((item, i) => compileMatch(item, `${key}.${which}[${i}]`, scope)) };
  }
  if ("some" in table) {
    const unknown = keys.filter((k) => k !== "some" && k !== "where");
    if (unknown.length > 0) throw new MatchError(`${key}.${unknown[0]}`, "unknown key in { some, where }");
    if (typeof table.some !== "string")
      throw new MatchError(`${key}.some`, "expected a fact path naming a list");
    let info: PathInfo;
    try {
      info = scope.describe(table.some);
    } catch (error) {
      throw new MatchError(`${key}.some`, (error as Error).message);
    }
    if (info.kind !== "array" || info.element === undefined)
      throw new MatchError(`${key}.some`, `"${table.some}" is not a list of facts`);
    const element = info.element;
    const inner: CompileScope = { vars: scope.vars, describe: (path) => describePath(path, element) };
    return { kind: "some", fact: table.some, where: [compileMatch(table.where, `${key}.where`, inner)] };
  }
  return compileExpr(table, key, scope);
}

function compileExpr(table: Record<string, unknown>, key: string, scope: CompileScope): MatchNode {
  const unknown = Object.keys(table).filter((k) => k !== "fact" && k !== "op" && k !== "value");
  if (unknown.length > 0)
    throw new MatchError(`${key}.${unknown[0]}`, "unknown key (an expression has fact, op and value)");
  const { fact, op, value } = table;
  if (typeof fact !== "string" || fact === "")
    throw new MatchError(`${key}.fact`, 'expected a fact path such as "cpu.flags"');
  if (typeof op !== "string" || !(OPERATORS as readonly string[]).includes(op)) {
    throw new MatchError(
      `${key}.op`,
      `unknown operator ${JSON.stringify(op)} (one of ${OPERATORS.join(", ")})`,
    );
  }
  let info: PathInfo;
  try {
    info = scope.describe(fact);
  } catch (error) {
    throw new MatchError(`${key}.fact`, (error as Error).message);
  }
  const operator = op as Operator;
  const bad = (message: string) => new MatchError(`${key}.value`, `${operator}: ${message}`);
  const wrongKind = (wanted: string) =>
    new MatchError(`${key}.op`, `${operator} needs a ${wanted} fact, and "${fact}" is a ${info.kind}`);
  switch (operator) {
    case "Exists":
    case "DoesNotExist":
      if (value !== undefined) throw bad("takes no value");
      return { kind: "expr", fact, op: operator };
    case "IsTrue":
    case "IsFalse":
      if (value !== undefined) throw bad("takes no value");
      if (info.kind !== "boolean" && info.kind !== "any") throw wrongKind("boolean");
      return { kind: "expr", fact, op: operator };
    case "In":
    case "NotIn":
    case "InRegexp": {
      if (!Array.isArray(value) || value.length === 0 || !value.every(isScalar))
        throw bad("expected a non-empty list of values");
      if (info.values !== undefined) {
        const unknownValue = value.find((v) => !info.values?.includes(v));
        if (unknownValue !== undefined && operator !== "InRegexp") {
          throw bad(
            `"${fact}" is never ${JSON.stringify(unknownValue)} (it is one of ${info.values.map((v) => JSON.stringify(v)).join(", ")})`,
          );
        }
      }
      if (operator === "InRegexp") {
        const regexps = value.map((pattern) => {
          try {
            return new RegExp(String(pattern));
          } catch (error) {
            throw bad(`invalid regular expression ${JSON.stringify(pattern)}: ${(error as Error).message}`);
          }
        });
        return { kind: "expr", fact, op: operator, value: value as Scalar[], regexps };
      }
      return { kind: "expr", fact, op: operator, value: value as Scalar[] };
    }
    case "Gt":
    case "Lt": {
      const n = Array.isArray(value) && value.length === 1 ? value[0] : value;
      if (typeof n !== "number") throw bad("expected a number");
      if (info.kind !== "number" && info.kind !== "any") throw wrongKind("number");
      return { kind: "expr", fact, op: operator, value: n };
    }
    case "GtLt": {
      if (
        !Array.isArray(value) ||
        value.length !== 2 ||
        typeof value[0] !== "number" ||
        typeof value[1] !== "number" ||
        value[0] >= value[1]
      ) {
        throw bad("expected [low, high] with low < high");
      }
      if (info.kind !== "number" && info.kind !== "any") throw wrongKind("number");
      return { kind: "expr", fact, op: operator, value: value as number[] };
    }
    case "VersionAtLeast":
    case "VersionBelow":
      if (typeof value !== "string" || versionParts(value) === null)
        throw bad('expected a version such as "2.0"');
      if (info.kind !== "string" && info.kind !== "any") throw wrongKind("string");
      return { kind: "expr", fact, op: operator, value };
  }
}

function isScalar(value: unknown): value is Scalar {
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean";
}

export function evaluate(node: MatchNode, document: unknown): boolean {
  switch (node.kind) {
    case "all":
      return node.nodes.every((n) => evaluate(n, document));
    case "any":
      return node.nodes.some((n) => evaluate(n, document));
    case "some": {
      const list = valueAt(document, node.fact);
      return Array.isArray(list) && list.some((element) => node.where.every((n) => evaluate(n, element)));
    }
    case "expr":
      return test(node, valueAt(document, node.fact));
  }
}

function test(node: Extract<MatchNode, { kind: "expr" }>, fact: unknown): boolean {
  const present = fact !== undefined && fact !== null && !(Array.isArray(fact) && fact.length === 0);
  const items = Array.isArray(fact) ? fact : present ? [fact] : [];
  const inList = () => items.some((item) => (node.value as Scalar[]).some((v) => String(v) === String(item)));
  switch (node.op) {
    case "Exists":
      return present;
    case "DoesNotExist":
      return !present;
    case "IsTrue":
      return fact === true;
    case "IsFalse":
      return fact === false;
    case "In":
      return inList();
    case "NotIn":
      return !inList();
    case "InRegexp":
      return items.some((item) => typeof item === "string" && (node.regexps ?? []).some((r) => r.test(item)));
    case "Gt":
      return typeof fact === "number" && fact > (node.value as number);
    case "Lt":
      return typeof fact === "number" && fact < (node.value as number);
    case "GtLt": {
      const [low, high] = node.value as number[];
      return typeof fact === "number" && fact > (low as number) && fact < (high as number);
    }
    case "VersionAtLeast":
    case "VersionBelow": {
      const have = typeof fact === "string" ? versionParts(fact) : null;
      if (have === null) return false;
      const order = compareVersions(have, versionParts(node.value as string) as number[]);
      return node.op === "VersionAtLeast" ? order >= 0 : order < 0;
    }
  }
}

/** Expressions that every match of the node requires (the top-level `all`), for disjointness proofs. */
export function requiredExprs(node: MatchNode): Array<Extract<MatchNode, { kind: "expr" }>> {
  if (node.kind === "expr") return [node];
  if (node.kind === "all") return node.nodes.flatMap(requiredExprs);
  return [];
}

/** True when no document can satisfy both nodes (a sufficient check, not a complete one). */
export function provablyDisjoint(a: MatchNode, b: MatchNode): boolean {
  const left = requiredExprs(a);
  const right = requiredExprs(b);
  return left.some((x) => right.some((y) => x.fact === y.fact && contradicts(x, y)));
}

function contradicts(
  x: Extract<MatchNode, { kind: "expr" }>,
  y: Extract<MatchNode, { kind: "expr" }>,
): boolean {
  const pair = new Set([x.op, y.op]);
  if (pair.has("IsTrue") && pair.has("IsFalse")) return true;
  if (pair.has("Exists") && pair.has("DoesNotExist")) return true;
  const values = (n: typeof x) => (n.value as Scalar[]).map(String);
  if (x.op === "In" && y.op === "In") return !values(x).some((v) => values(y).includes(v)) && isScalarFact(x);
  if (x.op === "In" && y.op === "NotIn") return values(x).every((v) => values(y).includes(v));
  if (x.op === "NotIn" && y.op === "In") return values(y).every((v) => values(x).includes(v));
  if ((x.op === "In" && y.op === "DoesNotExist") || (x.op === "DoesNotExist" && y.op === "In")) return true;
  return false;
}

/** In on a list fact means "contains one of": two disjoint In lists can both hold there. */
function isScalarFact(x: Extract<MatchNode, { kind: "expr" }>): boolean {
  try {
    return describePath(x.fact).kind !== "array";
  } catch {
    // Variables hold one value each.
    return x.fact.startsWith("vars.");
  }
}

/**
 * The fact paths a match reads: its expressions' facts and the lists `some` walks (not the paths
 * inside a `some`, which are relative to an element).
 */
export function factsRead(node: MatchNode): string[] {
  if (node.kind === "expr" || node.kind === "some") return [node.fact];
  return node.nodes.flatMap(factsRead);
}
