// `plan --out FILE` and `install --plan FILE` (the entrypoint's KATA_INSTALL_PLAN too): a plan saved
// with what it was made from, and applied only when, made again now, it is the same plan.
import path from "node:path";
import type { ArtifactSource } from "../artifacts/source.js";
import { itemAt } from "../at.js";
import { hash } from "../changeset.js";
import { blocking } from "../decide/decision.js";
import { UserError } from "../errors.js";
import { readEntry } from "../host/fs-ops.js";
import { StalePlanError } from "../install/apply.js";
import { versionIdOf } from "../install/artifacts.js";
import {
  dataHashes,
  type Env,
  envHashes,
  factsHashes,
  kataInstallVersion,
  overridesInput,
} from "../install/plan-inputs.js";
import { identitiesOf } from "../install/reuse.js";
import {
  differences,
  OPTION_FLAGS,
  planAgainCommand,
  SAVED_PLAN_VERSION,
  type SavedPlan,
  writeSavedPlan,
} from "../install/saved-plan.js";
import { planDocument } from "../output/plan.js";
import type { Planned } from "../pipeline/pipeline.js";
import { PlanJson } from "../plan-schema.js";
import type { PlanOptions } from "./plan-options.js";

type Shaping = SavedPlan["options"];

/** The options that shape a plan, as a saved plan keeps them: paths absolute, the tag's default said. */
export function shapingOptions(options: PlanOptions): Shaping {
  return {
    overrides: options.overrides === undefined ? null : path.resolve(options.overrides),
    shims: options.shims ?? null,
    defaultShim: options.defaultShim ?? null,
    ignorePreflightErrors: options.ignorePreflightErrors ?? null,
    artifacts: options.artifacts === undefined ? null : absoluteSource(options.artifacts),
    artifactsTag: options.artifactsTag ?? "latest",
  };
}

/** dir:DIR and oci-layout:DIR with DIR absolute: the plan may be applied from another directory. */
function absoluteSource(spec: string): string {
  const local = /^(dir|oci-layout):(.+)$/.exec(spec);
  return local ? `${local[1]}:${path.resolve(itemAt(local, 2, "the path"))}` : spec;
}

/**
 * The options to plan again with: the saved plan's own. One given that would make another plan is
 * refused, by name; one given as the plan has it is harmless.
 */
export function optionsOfSavedPlan<T extends PlanOptions>(file: string, saved: SavedPlan, given: T): T {
  const shaped = shapingOptions(given);
  for (const [key, flag] of OPTION_FLAGS) {
    if (given[key] === undefined || shaped[key] === saved.options[key]) continue;
    const was = saved.options[key];
    throw new UserError(
      `${flag} ${given[key]}: the plan in ${file} was made ${was === null ? `without ${flag}` : `with ${flag} ${was}`}, and a saved plan is applied as it was made: leave ${flag} out, or make the plan again with it`,
    );
  }
  const { overrides, shims, defaultShim, ignorePreflightErrors, artifacts, artifactsTag } = saved.options;
  return {
    ...given,
    overrides: overrides ?? undefined,
    shims: shims ?? undefined,
    defaultShim: defaultShim ?? undefined,
    ignorePreflightErrors: ignorePreflightErrors ?? undefined,
    artifacts: artifacts ?? undefined,
    artifactsTag,
  };
}

export interface Making {
  options: Shaping;
  hostRoot: string;
  /** The environment the plan was made in, and the variables it read. */
  env: Env;
  envNames: string[];
  source: ArtifactSource | null;
}

/** A plan as saved: the plan document, and the hashes of everything it was made from. */
export async function savedPlanOf(planned: Planned, made: Making): Promise<SavedPlan> {
  const { facts, decision, changeset } = planned;
  const pulls = changeset.actions.some((a) => a.kind === "pull-artifact");
  const bundled = decision.artifacts.filter((a) => a.from === "bundled").map((a) => a.name);
  // What would be pulled, named by the source's digests: a new release there is another plan.
  const ids = pulls && made.source !== null ? await identitiesOf(made.source, bundled) : null;
  return {
    schemaVersion: SAVED_PLAN_VERSION,
    options: made.options,
    inputs: {
      version: kataInstallVersion(),
      facts: factsHashes(facts),
      data: dataHashes(),
      overrides: overridesInput(made.options.overrides, planned.prepared.overrides),
      environment: envHashes(made.envNames, made.env),
      artifacts: ids === null ? null : versionIdOf(ids),
      ...(ids === null ? {} : { artifactIds: ids }),
    },
    plan: PlanJson.parse(planDocument(decision, changeset)),
  };
}

/** `plan --out FILE`: the plan saved, unless an install would refuse it; what to tell the user. */
export async function savePlan(
  file: string,
  planned: Planned,
  made: { options: PlanOptions } & Pick<Making, "env" | "envNames" | "source">,
): Promise<string> {
  if (blocking(planned.decision).length > 0)
    return `The plan was not saved to ${file}: a preflight error remains, so an install would refuse it.\n`;
  const { options, ...rest } = made;
  const saved = await savedPlanOf(planned, {
    ...rest,
    options: shapingOptions(options),
    hostRoot: options.hostRoot,
  });
  writeSavedPlan(file, saved);
  // Made under another root, it applies there or on the node itself: its paths are the node's.
  const root = options.hostRoot === "/" ? "" : ` --host-root ${options.hostRoot}`;
  return `Saved the plan to ${file}. To see it checked against the node again: kata-install install${root} --plan ${file} --dry-run. To apply exactly this plan: kata-install install${root} --plan ${file}${root ? " (or, on the node itself, without --host-root)" : ""}\n`;
}

/**
 * Refuse, naming each difference, unless the plan made again now (`planned`, from the saved plan's
 * options, the node as it is and the environment as it is) is the saved one — or the saved plan was
 * applied already (a pod restarted with the same KATA_INSTALL_PLAN): "as-made" or "applied".
 */
export async function refuseIfMoved(
  file: string,
  saved: SavedPlan,
  planned: Planned,
  made: Pick<Making, "hostRoot" | "env" | "source"> & {
    installedVersion: string | null;
    dryRun?: boolean;
    remake?: { hostRoot: string; where: string; next: string };
  },
): Promise<"as-made" | "applied"> {
  const now = await savedPlanOf(planned, {
    ...made,
    options: saved.options,
    envNames: Object.keys(saved.inputs.environment),
  });
  const current: Record<string, string | null> = {};
  for (const c of saved.plan.changes) {
    const read = await readEntry(planned.host, c.path, c.link === true);
    current[c.path] = read === null ? null : hash(read.bytes);
  }
  const found = differences(saved, now, current);
  if (found.length === 0) return "as-made";
  if (appliedAlready(saved, planned, current, made.installedVersion)) return "applied";
  throw new StalePlanError(
    `the plan in ${file} ${made.dryRun ? "would not be applied" : "was not applied"}: the node or the inputs changed since it was made:\n${found.map((d) => `  - ${d}`).join("\n")}\n${made.dryRun ? "Nothing of it would be applied" : "Nothing of it was applied"}. Make the plan again${made.remake?.where ?? ""} (${planAgainCommand(file, saved.options, made.remake?.hostRoot ?? made.hostRoot)}), ${made.remake?.next ?? "review it, and apply that"}.`,
  );
}

/**
 * The node is as the saved plan leaves it: each file it changes holds what it writes (or is gone),
 * the artifacts it pulls are the version in place, and the plan made now has nothing to do. Its
 * inputs no longer match (the facts include what it installed), but applying it would change nothing.
 */
function appliedAlready(
  saved: SavedPlan,
  planned: Planned,
  current: Record<string, string | null>,
  installedVersion: string | null,
): boolean {
  const { changes, actions } = planned.changeset;
  if (changes.length > 0 || actions.length > 0) return false;
  if (saved.inputs.artifacts !== null && saved.inputs.artifacts !== installedVersion) return false;
  return saved.plan.changes.every(
    (c) => (current[c.path] ?? null) === (c.action === "delete" ? null : c.afterHash),
  );
}
