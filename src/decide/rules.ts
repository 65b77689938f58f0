// Rule files (rules/*.toml other than the catalogue): loaded, validated against the Facts schema and
// the catalogue, checked for conflicts, and put in evaluation order. Every problem of every file is
// reported together, each with file, line, rule and key.
import * as z from "zod/mini";
import "../schema.js";
import { must } from "../at.js";
import { byText } from "../compare.js";
import { describePath } from "../detect/fact-paths.js";
import { InputError, type InputIssue } from "../input-error.js";
import { typeOf } from "../release/config-file.js";
import { TomlLines } from "../toml-lines.js";
import { type Catalog, keyShapeProblem, parseToml, unknownShim } from "./catalog.js";
import { type DataText, readable } from "./data-text.js";
import { isKernelCmdlineKey, kernelCmdlineProblem } from "./kernel-cmdline.js";
import { compileMatch, factScope, factsRead, MatchError, type MatchNode, provablyDisjoint } from "./match.js";

export const Severity = z.enum(["error", "warning", "info"]);
export type Severity = z.infer<typeof Severity>;

const Named = z.strictObject({ name: z.string(), reason: z.optional(z.string()) });
const VarValue = z.union([z.boolean(), z.string(), z.number()]);

const RawRule = z.strictObject({
  name: z.string().check(z.regex(/^[a-z0-9][a-z0-9-]*$/, "use lower-case letters, digits and dashes")),
  description: z.string(),
  why: z.string(),
  priority: z.optional(z.int()),
  match: z.optional(z.unknown()),
  match_any: z.optional(z.unknown()),
  check: z.optional(
    z.strictObject({
      id: z.string().check(z.regex(/^[a-z0-9][a-z0-9-]*$/, "use lower-case letters, digits and dashes")),
      severity: Severity,
      message: z.string(),
      hint: z.optional(z.string()),
    }),
  ),
  vars: z.optional(z.record(z.string(), VarValue)),
  add_shims: z.optional(z.array(Named)),
  drop_shims: z.optional(z.array(Named)),
  add_artifacts: z.optional(z.array(Named)),
  drop_artifacts: z.optional(z.array(Named)),
  artifact_source: z.optional(z.record(z.string(), z.enum(["bundled", "distro"]))),
  config: z.optional(z.record(z.string(), z.record(z.string(), z.unknown()))),
});
const RuleFile = z.strictObject({ rule: z.array(RawRule) });

/** A configuration value in a rule: a literal, or `{ fact = "path" }` to take it from the facts. */
export type RuleValue = { literal: unknown } | { fact: string };

export interface Rule {
  name: string;
  description: string;
  why: string;
  priority: number;
  file: string;
  line?: number;
  match: MatchNode;
  check?: { id: string; severity: Severity; message: string; hint?: string };
  vars: Record<string, string | number | boolean>;
  addShims: Array<{ name: string; reason: string }>;
  dropShims: Array<{ name: string; reason: string }>;
  addArtifacts: Array<{ name: string; reason: string }>;
  dropArtifacts: Array<{ name: string; reason: string }>;
  artifactSource: Record<string, "bundled" | "distro">;
  /** Shim name or "all" → key → value. */
  config: Record<string, Record<string, RuleValue>>;
  /** Variables its match reads. */
  reads: string[];
}

export interface RuleSet {
  /** In evaluation order: every rule after those that set the variables it reads. */
  rules: Rule[];
  vars: ReadonlySet<string>;
  checkIds: ReadonlySet<string>;
}

/**
 * The rules in three steps, each reporting every problem it finds: parse the files (TOML and
 * shape), check what each rule names against the catalogue and build it, then check the set as a
 * whole (conflicts, one severity per check, an evaluation order).
 */
export function parseRules(
  files: readonly DataText[],
  catalog: Catalog,
  display: (file: string) => string = (f) => f,
): RuleSet {
  const issues: InputIssue[] = [];
  const parsed = parseRuleFiles(files, display, issues);
  // Variables first: a match may read any variable that some rule sets.
  const vars = new Set(parsed.flatMap(({ raw }) => Object.keys(raw.vars ?? {})));
  const rules = buildRules(parsed, catalog, factScope(vars), issues);
  const { ordered, checkIds } = checkSet(rules, issues);
  if (issues.length > 0) throw new InputError("the rules are invalid", dedupe(issues));
  return { rules: ordered, vars, checkIds };
}

interface ParsedRule {
  file: string;
  lines: TomlLines;
  raw: z.infer<typeof RawRule>;
  index: number;
}

/** Each file's rules as written: read, TOML, and the shape of a rule. */
function parseRuleFiles(
  files: readonly DataText[],
  display: (file: string) => string,
  issues: InputIssue[],
): ParsedRule[] {
  const parsed: ParsedRule[] = [];
  for (const data of files) {
    const read = readable(data, issues);
    if (read === null) continue;
    const { file, text } = read;
    const table = parseToml(display(file), text, issues, read.table);
    if (table === undefined) continue;
    const lines = new TomlLines(text);
    const result = RuleFile.safeParse(table);
    if (!result.success) {
      for (const issue of result.error.issues) {
        const [, index] = issue.path;
        const name =
          typeof index === "number"
            ? ((table.rule as Array<{ name?: unknown }>)?.[index]?.name as string | undefined)
            : undefined;
        issues.push({
          file: display(file),
          line: lines.lineOf(issue.path as Array<string | number>),
          rule: typeof name === "string" ? name : undefined,
          key: issue.path.slice(2).join(".") || issue.path.join("."),
          message: issue.message,
        });
      }
      continue;
    }
    result.data.rule.forEach((raw, index) => {
      parsed.push({ file: display(file), lines, raw, index });
    });
  }
  return parsed;
}

/** Each rule checked against the catalogue and the facts it may read, and built when it holds. */
function buildRules(
  parsed: ParsedRule[],
  catalog: Catalog,
  scope: ReturnType<typeof factScope>,
  issues: InputIssue[],
): Rule[] {
  const rules: Rule[] = [];
  const names = new Map<string, string>();
  for (const { file, lines, raw, index } of parsed) {
    const at = (key: string, keyPath: Array<string | number>) => ({
      file,
      line: lines.lineOf(["rule", index, ...keyPath]),
      rule: raw.name,
      key,
    });
    const before = issues.length;
    const previous = names.get(raw.name);
    if (previous !== undefined)
      issues.push({ ...at("name", ["name"]), message: `a rule of this name is already in ${previous}` });
    names.set(raw.name, file);
    let match: MatchNode | undefined;
    if (raw.match === undefined && raw.match_any === undefined) {
      issues.push({
        ...at("match", []),
        message: "no match: a rule without one would apply to every node; match what it is about",
      });
    } else if (raw.match !== undefined && raw.match_any !== undefined) {
      issues.push({ ...at("match", ["match"]), message: "give match or match_any, not both" });
    } else {
      const which = raw.match !== undefined ? "match" : "match_any";
      try {
        const node = compileMatch(raw[which], which, scope);
        match =
          which === "match_any" ? { kind: "any", nodes: node.kind === "all" ? node.nodes : [node] } : node;
      } catch (error) {
        const key = error instanceof MatchError ? error.key : which;
        issues.push({ ...at(key, [which]), message: (error as Error).message });
      }
    }
    for (const list of ["add_shims", "drop_shims"] as const) {
      (raw[list] ?? []).forEach((item, i) => {
        if (!catalog.shims.has(item.name))
          issues.push({ ...at(`${list}[${i}].name`, [list]), message: unknownShim(item.name, catalog) });
      });
    }
    for (const list of ["add_artifacts", "drop_artifacts"] as const) {
      (raw[list] ?? []).forEach((item, i) => {
        if (!catalog.artifacts.has(item.name))
          issues.push({ ...at(`${list}[${i}].name`, [list]), message: `unknown artifact "${item.name}"` });
      });
    }
    for (const name of Object.keys(raw.artifact_source ?? {})) {
      if (!catalog.artifacts.has(name))
        issues.push({
          ...at(`artifact_source.${name}`, ["artifact_source", name]),
          message: `unknown artifact "${name}"`,
        });
    }
    const config: Rule["config"] = {};
    for (const [target, values] of Object.entries(raw.config ?? {})) {
      if (target !== "all" && !catalog.shims.has(target)) {
        issues.push({ ...at(`config.${target}`, ["config", target]), message: unknownShim(target, catalog) });
        continue;
      }
      config[target] = {};
      for (const [key, value] of Object.entries(values)) {
        const problem = checkConfigValue(catalog, target, key, value);
        if (problem !== null)
          issues.push({ ...at(`config.${target}."${key}"`, ["config", target, key]), message: problem });
        else
          (config[target] as Record<string, RuleValue>)[key] = isFactRef(value)
            ? { fact: value.fact }
            : { literal: value };
      }
    }
    // A check's message may name facts ({fact:runtime.configPath}): each must be one.
    for (const [, path] of (raw.check?.message ?? "").matchAll(/\{fact:([^}]+)\}/g)) {
      try {
        describePath(must(path, "the fact path"));
      } catch (error) {
        issues.push({ ...at("check.message", ["check"]), message: (error as Error).message });
      }
    }
    if (issues.length > before || match === undefined) continue;
    rules.push({
      name: raw.name,
      description: raw.description,
      why: raw.why,
      priority: raw.priority ?? 0,
      file,
      // Only an error names it: looked up then, not for every rule of every run.
      get line() {
        return lines.lineOf(["rule", index]);
      },
      match,
      check: raw.check,
      vars: raw.vars ?? {},
      addShims: (raw.add_shims ?? []).map((s) => ({ name: s.name, reason: s.reason ?? raw.description })),
      dropShims: (raw.drop_shims ?? []).map((s) => ({ name: s.name, reason: s.reason ?? raw.description })),
      addArtifacts: (raw.add_artifacts ?? []).map((s) => ({
        name: s.name,
        reason: s.reason ?? raw.description,
      })),
      dropArtifacts: (raw.drop_artifacts ?? []).map((s) => ({
        name: s.name,
        reason: s.reason ?? raw.description,
      })),
      artifactSource: raw.artifact_source ?? {},
      config,
      reads: readsOf(match),
    });
  }
  return rules;
}

/** The rules as a set: no two setting one key apart, one severity per check, an order that exists. */
function checkSet(rules: Rule[], issues: InputIssue[]): { ordered: Rule[]; checkIds: Set<string> } {
  if (issues.length === 0) issues.push(...conflicts(rules));
  const checkIds = new Set<string>();
  for (const rule of rules) {
    if (rule.check === undefined) continue;
    const other = rules.find(
      (r) => r.check?.id === rule.check?.id && r.check?.severity !== rule.check?.severity,
    );
    if (other !== undefined) {
      issues.push({
        file: rule.file,
        line: rule.line,
        rule: rule.name,
        key: "check.severity",
        message: `check "${rule.check.id}" is "${other.check?.severity}" in rule "${other.name}" (${other.file})`,
      });
    }
    checkIds.add(rule.check.id);
  }
  let ordered: Rule[] = [];
  if (issues.length === 0) {
    try {
      ordered = order(rules);
    } catch (error) {
      const rule = (error as { rule?: Rule }).rule;
      issues.push({ file: rule?.file ?? "rules", line: rule?.line, message: (error as Error).message });
    }
  }
  return { ordered, checkIds };
}

/**
 * The facts the rules read, by path, in rule order: those of one value (a string, number or
 * boolean). What a rule reads of a list (cpu.flags, pci.devices) shows in what it decides.
 */
export function scalarFactsRead(rules: readonly Rule[]): string[] {
  const out = new Set<string>();
  for (const rule of rules)
    for (const fact of factsRead(rule.match)) {
      if (fact.startsWith("vars.")) continue;
      const kind = describePath(fact).kind;
      if (kind !== "array" && kind !== "object") out.add(fact);
    }
  return [...out];
}

function isFactRef(value: unknown): value is { fact: string } {
  return (
    value !== null &&
    typeof value === "object" &&
    !Array.isArray(value) &&
    Object.keys(value).length === 1 &&
    typeof (value as { fact?: unknown }).fact === "string"
  );
}

/**
 * Null when `value` may be set for `key` on `target` (a shim or "all"), as far as can be told
 * before the release is read: the key's shape, a fact reference that exists, a value Kata takes
 * for that key's name (rules/config-values.toml). Whether the shim's configuration in the release
 * has the key, of that type, is decided once the release is read (decide, shim-config.ts).
 */
export function checkConfigValue(
  catalog: Catalog,
  _target: string,
  key: string,
  value: unknown,
): string | null {
  const shape = keyShapeProblem(key);
  if (shape !== null) return shape;
  if (isFactRef(value)) {
    try {
      describePath(value.fact);
      return null;
    } catch (error) {
      return (error as Error).message;
    }
  }
  if (typeOf(value) === "other")
    return `expected a string, a boolean, a number or a list of strings, got ${JSON.stringify(value)}`;
  if (isKernelCmdlineKey(key)) {
    const problem = kernelCmdlineProblem(value);
    if (problem !== null) return problem;
  }
  return catalog.valueProblem(null, key, value);
}

/** "a string", "a list of strings": a key's type, as an error names it. */
export function article(type: string): string {
  return type === "string[]"
    ? "a list of strings"
    : type === "int"
      ? "an integer"
      : `a ${type === "bool" ? "boolean" : type}`;
}

function readsOf(node: MatchNode): string[] {
  switch (node.kind) {
    case "expr":
      return node.fact.startsWith("vars.") ? [node.fact.slice(5)] : [];
    case "some":
      return [];
    default:
      return node.nodes.flatMap(readsOf);
  }
}

/** Two rules that can both match and set one thing to different values at one priority. */
function conflicts(rules: Rule[]): InputIssue[] {
  const issues: InputIssue[] = [];
  const setters = new Map<string, Array<{ rule: Rule; value: string }>>();
  const add = (what: string, rule: Rule, value: unknown) => {
    const list = setters.get(what) ?? [];
    list.push({ rule, value: JSON.stringify(value) });
    setters.set(what, list);
  };
  for (const rule of rules) {
    for (const [name, value] of Object.entries(rule.vars)) add(`variable "${name}"`, rule, value);
    for (const [target, values] of Object.entries(rule.config)) {
      for (const [key, value] of Object.entries(values)) {
        const shown = "literal" in value ? value.literal : { fact: value.fact };
        add(`"${key}" for ${target === "all" ? "every shim" : `shim ${target}`}`, rule, shown);
      }
    }
    for (const [artifact, source] of Object.entries(rule.artifactSource))
      add(`the source of artifact "${artifact}"`, rule, source);
  }
  for (const [what, list] of setters) {
    for (let i = 0; i < list.length; i++) {
      for (let j = i + 1; j < list.length; j++) {
        const a = list[i] as { rule: Rule; value: string };
        const b = list[j] as { rule: Rule; value: string };
        if (
          a.value === b.value ||
          a.rule.priority !== b.rule.priority ||
          provablyDisjoint(a.rule.match, b.rule.match)
        )
          continue;
        issues.push({
          file: b.rule.file,
          line: b.rule.line,
          rule: b.rule.name,
          message: `sets ${what} to ${b.value}, and rule "${a.rule.name}" (${a.rule.file}) sets it to ${a.value} at the same priority ${a.rule.priority}; give one a higher priority or make their matches exclusive`,
        });
      }
    }
  }
  return issues;
}

/** Setters of a variable before its readers; otherwise by name, so file order never matters. */
function order(rules: Rule[]): Rule[] {
  const byName = [...rules].sort((a, b) => byText(a.name, b.name));
  const done = new Set<string>();
  const visiting = new Set<string>();
  const out: Rule[] = [];
  const visit = (rule: Rule, trail: string[]) => {
    if (done.has(rule.name)) return;
    if (visiting.has(rule.name)) {
      const message = `rules read each other's variables in a cycle: ${[...trail, rule.name].join(" → ")}`;
      throw Object.assign(new Error(message), { rule });
    }
    visiting.add(rule.name);
    for (const variable of rule.reads) {
      for (const setter of byName.filter((r) => variable in r.vars)) visit(setter, [...trail, rule.name]);
    }
    visiting.delete(rule.name);
    done.add(rule.name);
    out.push(rule);
  };
  for (const rule of byName) visit(rule, []);
  return out;
}

function dedupe(issues: InputIssue[]): InputIssue[] {
  const seen = new Set<string>();
  return issues.filter((issue) => {
    const id = JSON.stringify(issue);
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}
