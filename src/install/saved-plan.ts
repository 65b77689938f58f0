// A saved plan (`plan --out FILE`): the plan as `plan --json` prints it, the options it was made
// with, and what it was made from, hashed (see plan-inputs.ts). `install --plan FILE` plans again
// from the same inputs and applies only when nothing differs; differences() names what did.
import * as z from "zod/mini";
import { UserError } from "../errors.js";
import { parseJson, readDocument } from "../json-file.js";
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
  writeFileAtomically(file, `${JSON.stringify(SavedPlan.parse(saved), null, 2)}\n`, "--out");
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
    .filter((key) => JSON.stringify(saved.plan[key]) !== JSON.stringify(now.plan[key]))
    .map((key) => `the saved plan's "${key}" is not what the plan made again shows (was the file edited?)`);
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
  if (was.artifacts !== is.artifacts)
    out.push(
      `artifacts: the plan pulls version ${was.artifacts ?? "none"}; made again, it pulls ${is.artifacts ?? "none"}`,
    );
  return out;
}

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
