// A saved plan (`plan --out FILE`): the plan as `plan --json` prints it, the options it was made
// with, and what it was made from, hashed (see plan-inputs.ts). `install --plan FILE` plans again
// from the same inputs and applies only when nothing differs; differences() names what did.
import * as z from "zod/mini";
import { UserError } from "../errors.js";
import { parseJson, readDocument } from "../json-file.js";
import { toJson } from "../json-text.js";
import { PlanJson, Sha256 } from "../plan-schema.js";
import { keyPath } from "../schema.js";
import { writeFileAtomically } from "../write-file.js";

export const SAVED_PLAN_VERSION = 1;

export const SavedPlan = z.strictObject({
  schemaVersion: z.literal(SAVED_PLAN_VERSION),
  /** The options that shape a plan, as given (paths made absolute); null: not given. */
  options: z.strictObject({
    overrides: z.nullable(z.string()),
    shims: z.nullable(z.string()),
    defaultShim: z.nullable(z.string()),
    ignorePreflightErrors: z.nullable(z.string()),
    artifacts: z.nullable(z.string()),
    artifactsTag: z.string(),
  }),
  inputs: z.strictObject({
    version: z.string(),
    facts: z.strictObject({
      sha256: Sha256,
      paths: z.record(z.string(), Sha256),
    }),
    data: z.record(z.string(), Sha256),
    overrides: z.strictObject({ path: z.string(), sha256: z.nullable(Sha256) }),
    environment: z.record(z.string(), z.nullable(Sha256)),
    artifacts: z.nullable(z.string()),
    /** What identifies each artifact pulled in the source (its digest): a change is named by artifact. */
    artifactIds: z.optional(z.record(z.string(), z.string())),
  }),
  plan: PlanJson,
});
export type SavedPlan = z.infer<typeof SavedPlan>;

export class SavedPlanError extends UserError {
  constructor(file: string, details: string[]) {
    super(
      `${file}: not a saved plan this kata-install can apply:\n${details.map((d) => `  - ${d}`).join("\n")}`,
    );
  }
}

export async function loadSavedPlan(file: string): Promise<SavedPlan> {
  return parseSavedPlan(file, await readDocument(file, (details) => new SavedPlanError(file, details)));
}

export function parseSavedPlan(file: string, text: string): SavedPlan {
  const json = parseJson(text, (details) => new SavedPlanError(file, details));
  // Another format version is said as such, not as every field that moved in it.
  const version = (json as { schemaVersion?: unknown } | null)?.schemaVersion;
  if (typeof version === "number" && version !== SAVED_PLAN_VERSION)
    throw new SavedPlanError(file, [
      `schemaVersion: ${version}, and this kata-install reads ${SAVED_PLAN_VERSION}: make the plan again with it`,
    ]);
  const result = SavedPlan.safeParse(json);
  if (result.success) return result.data;
  throw new SavedPlanError(
    file,
    result.error.issues.map((issue) => `${keyPath(issue.path)}: ${issue.message}`),
  );
}

/** Checked against the schema first: a plan that could not be loaded again is not written. */
export function writeSavedPlan(file: string, saved: SavedPlan): void {
  writeFileAtomically(file, `${toJson(SavedPlan.parse(saved), 2)}\n`, "--out");
}

const short = (hash: string | null) => (hash === null ? "absent" : `${hash.slice(0, 16)}…`);
const VERB = { create: "creates", modify: "modifies", delete: "deletes" } as const;

/** Keys whose values differ between two records, a key missing from one included. */
function changedKeys<T>(before: Record<string, T>, after: Record<string, T>): string[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return keys.filter((k) => before[k] !== after[k]);
}

/** Sorted keys without those inside another one listed (a fact that was null and is a table now). */
function outermost(keys: string[]): string[] {
  const out: string[] = [];
  for (const key of keys) if (!out.some((k) => key.startsWith(`${k}.`))) out.push(key);
  return out;
}

/** At most `most` lines, then how many more: a plan of another node differs in most facts. */
function capped(lines: string[], most = 10): string[] {
  return lines.length <= most ? lines : [...lines.slice(0, most), `… and ${lines.length - most} more`];
}

/**
 * What differs between a saved plan and the plan made again now (`now`, built the same way), with
 * `current` the hash of each file the saved plan changes as it is on the node now. Empty: the saved
 * plan is what an install would do, exactly.
 */
export function differences(
  saved: SavedPlan,
  now: SavedPlan,
  current: Record<string, string | null>,
): string[] {
  const moved = movedFiles(saved, current);
  const found = [
    ...inputDifferences(saved.inputs, now.inputs),
    ...moved.map((m) => m.line),
    ...planDifferences(saved.plan, now.plan, new Set(moved.map((m) => m.path))),
  ];
  if (found.length > 0) return found;
  // Nothing the plan is made from moved, and it does the same: the rest of what was reviewed (the
  // diffs, the checks, the reasons) must be what it is now too, or the file was edited.
  return (Object.keys(PlanJson.shape) as Array<keyof PlanJson>)
    .filter((key) => toJson(saved.plan[key]) !== toJson(now.plan[key]))
    .flatMap((key) => reviewedDifferences(key, saved.plan[key], now.plan[key]));
}

const EDITED = "is not what the plan made again shows (was the file edited?)";

/** What names an entry of a plan's list: a change's path, a check's id, a shim's name, an action. */
function entryName(entry: unknown, index: number): string {
  const e = (entry ?? {}) as Record<string, unknown>;
  for (const key of ["path", "id", "name"]) if (typeof e[key] === "string") return e[key] as string;
  if (typeof e.kind === "string" && typeof e.target === "string") return `${e.kind} ${e.target}`;
  return `#${index + 1}`;
}

/** The fields of two records whose values differ. */
function differingFields(was: unknown, is: unknown): string[] {
  const a = (was ?? {}) as Record<string, unknown>;
  const b = (is ?? {}) as Record<string, unknown>;
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => toJson(a[k]) !== toJson(b[k]));
}

/** A part of what was reviewed that is not so now, by the entry and the fields that differ. */
function reviewedDifferences(key: string, was: unknown, is: unknown): string[] {
  if (!Array.isArray(was) || !Array.isArray(is)) {
    const fields = was !== null && typeof was === "object" ? differingFields(was, is) : [];
    return [`the saved plan's "${key}"${fields.length > 0 ? ` (${fields.join(", ")})` : ""} ${EDITED}`];
  }
  const named = (list: unknown[]) => new Map(list.map((entry, i) => [entryName(entry, i), entry]));
  const saved = named(was);
  const again = named(is);
  const out: string[] = [];
  for (const name of new Set([...saved.keys(), ...again.keys()])) {
    const a = saved.get(name);
    const b = again.get(name);
    if (toJson(a) === toJson(b)) continue;
    if (key === "checks") {
      out.push(checkDifference(name, a, b));
      continue;
    }
    out.push(
      a === undefined
        ? `the plan made again has a "${key}" entry ${name} that the saved plan does not (was the file edited?)`
        : b === undefined
          ? `the saved plan's "${key}" entry ${name} is not in the plan made again (was the file edited?)`
          : `the saved plan's "${key}" entry ${name} (${differingFields(a, b).join(", ")}) ${EDITED}`,
    );
  }
  // The same entries in another order (or two of one name): said of the list.
  return out.length > 0 ? out : [`the saved plan's "${key}" ${EDITED}`];
}

/**
 * A check that is not what it was: what it says now, since the node may have changed where the
 * plan's hashes do not look (an admin's drop-in, a file a configuration names) as well as the file.
 */
function checkDifference(name: string, was: unknown, is: unknown): string {
  const said = (check: unknown) => {
    const c = (check ?? {}) as { status?: unknown; severity?: unknown; message?: unknown };
    return `${String(c.status)} (${String(c.severity)}): ${String(c.message)}`;
  };
  const why =
    "the node changed where the plan's hashes do not look (an admin's drop-in, a file a configuration names), or the plan file was edited";
  if (was === undefined)
    return `the check ${name}, not in the saved plan, is raised now: ${said(is)} — ${why}`;
  if (is === undefined)
    return `the saved plan's check ${name} is not raised now (it was ${said(was)}) — ${why}`;
  return `the check ${name} is not as it was when the plan was made: now ${said(is)} (it was ${said(was)}) — ${why}`;
}

function inputDifferences(was: SavedPlan["inputs"], is: SavedPlan["inputs"]): string[] {
  const out: string[] = [];
  if (was.version !== is.version)
    out.push(`kata-install ${was.version} made the plan; this is kata-install ${is.version}`);
  for (const file of changedKeys(was.data, is.data)) out.push(`kata-install's data: ${file} changed`);
  if (was.overrides.path !== is.overrides.path || was.overrides.sha256 !== is.overrides.sha256)
    out.push(
      `overrides file ${is.overrides.path} changed since the plan (sha256 ${short(was.overrides.sha256)} → ${short(is.overrides.sha256)})`,
    );
  for (const name of changedKeys(was.environment, is.environment))
    out.push(
      `environment: ${name} ${was.environment[name] === null ? "is set now" : is.environment[name] === null ? "is unset now" : "changed"}`,
    );
  if (was.facts.sha256 !== is.facts.sha256)
    out.push(
      ...capped(
        outermost(changedKeys(was.facts.paths, is.facts.paths)).map((key) => `facts: ${key} changed`),
      ),
    );
  if (was.facts.sha256 !== is.facts.sha256 && changedKeys(was.facts.paths, is.facts.paths).length === 0)
    out.push(
      "facts: the saved plan's facts.sha256 is not the hash of the facts it lists (was the file edited?)",
    );
  if (was.artifacts !== is.artifacts) {
    const named = artifactDifferences(was.artifactIds, is.artifactIds);
    out.push(
      `artifacts: the plan pulls version ${was.artifacts ?? "none"}; made again, it pulls ${is.artifacts ?? "none"}${named.length > 0 ? `: ${named.join("; ")}` : ""}`,
    );
  }
  return out;
}

/** Which artifacts are not the ones the plan pulls: another image in the source, or pulled or not now. */
function artifactDifferences(
  was: Record<string, string> | undefined,
  is: Record<string, string> | undefined,
): string[] {
  if (was === undefined || is === undefined) return [];
  return changedKeys(was, is).map((name) =>
    was[name] === undefined
      ? `${name} is pulled now`
      : is[name] === undefined
        ? `${name} is no longer pulled`
        : `${name} is another image in the source (${shortId(was[name])} → ${shortId(is[name])})`,
  );
}

const shortId = (id: string) => id.replace(/^(sha256:)?([0-9a-f]{12})[0-9a-f]{52}$/, "$1$2…");

/**
 * The command that makes the plan again as this one was made: its options, and the root it was
 * made under when that was not the node's own.
 */
export function planAgainCommand(file: string, options: SavedPlan["options"], hostRoot: string): string {
  // Quoted as a shell reads it back, where a word needs it.
  const word = (text: string) =>
    /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
  const words = ["kata-install", "plan"];
  if (hostRoot !== "/") words.push("--host-root", word(hostRoot));
  for (const [key, flag] of OPTION_FLAGS) {
    const value = options[key];
    // The tag a plan is made with when none is given says nothing.
    if (value !== null && !(key === "artifactsTag" && value === "latest")) words.push(flag, word(value));
  }
  words.push("--out", word(file));
  return words.join(" ");
}

/** The options that shape a plan, by the flag that gives each. */
export const OPTION_FLAGS: ReadonlyArray<[keyof SavedPlan["options"], string]> = [
  ["overrides", "--overrides"],
  ["shims", "--shims"],
  ["defaultShim", "--default-shim"],
  ["ignorePreflightErrors", "--ignore-preflight-errors"],
  ["artifacts", "--artifacts"],
  ["artifactsTag", "--artifacts-tag"],
];

/** The files the plan changes that are not on the node as they were when it was made. */
function movedFiles(saved: SavedPlan, current: Record<string, string | null>) {
  return saved.plan.changes.flatMap((c) => {
    const hash = current[c.path] ?? null;
    return hash === c.beforeHash
      ? []
      : [
          {
            path: c.path,
            line: `${c.path} changed since the plan (sha256 ${short(c.beforeHash)} → ${short(hash)})`,
          },
        ];
  });
}

/** What the plan made again writes or does otherwise; a file that moved is said once, above. */
function planDifferences(was: PlanJson, is: PlanJson, moved: Set<string>): string[] {
  const out: string[] = [];
  const planned = new Map(was.changes.map((c) => [c.path, c]));
  const again = new Map(is.changes.map((c) => [c.path, c]));
  for (const path of [...new Set([...planned.keys(), ...again.keys()])].sort()) {
    const before = planned.get(path);
    const after = again.get(path);
    if (moved.has(path) || (before?.action === after?.action && before?.afterHash === after?.afterHash))
      continue;
    if (before === undefined && after !== undefined)
      out.push(`the plan now also ${VERB[after.action]} ${path}`);
    else if (before !== undefined && after === undefined)
      out.push(`the plan no longer ${VERB[before.action]} ${path}`);
    else if (before !== undefined && after !== undefined)
      out.push(
        `the plan now ${VERB[after.action]} ${path} with other content (sha256 ${short(before.afterHash)} → ${short(after.afterHash)})`,
      );
  }
  const action = (a: { kind: string; target: string }) => `${a.kind} ${a.target}`;
  const savedActions = new Set(was.actions.map(action));
  const nowActions = new Set(is.actions.map(action));
  for (const a of savedActions) if (!nowActions.has(a)) out.push(`the plan no longer does ${a}`);
  for (const a of nowActions) if (!savedActions.has(a)) out.push(`the plan now also does ${a}`);
  return out;
}
