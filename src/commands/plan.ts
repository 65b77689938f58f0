import { UserError } from "../errors.js";
import { recordingEnv } from "../install/plan-inputs.js";
import { toJson } from "../json-text.js";
import { planDocument, planExitCode, renderPlan } from "../output/plan.js";
import { planPipeline } from "../pipeline/pipeline.js";
import type { PlanOptions } from "./plan-options.js";

export async function runPlan(options: PlanOptions, out: (text: string) => void): Promise<number> {
  if (options.out !== undefined && options.facts !== undefined)
    throw new UserError(
      "--out with --facts: a saved plan is what install would do, and install reads the node: make it from the node (--host-root), not from a facts file",
    );
  // The variables the plan reads are remembered: a saved plan keeps their hashes.
  const env = recordingEnv(process.env);
  const planned = await planPipeline(options, env.env);
  const { decision, changeset, source } = planned;
  const doc = planDocument(decision, changeset);
  // Saved (or said why not) after the plan, which is printed as usual: --json stays one document.
  const saved =
    options.out === undefined
      ? ""
      : await (await import("./saved-plan.js")).savePlan(options.out, planned, {
          options,
          env: env.env,
          envNames: env.read(),
          source,
        });
  out(options.json ? `${toJson(doc, 2)}\n` : `${renderPlan(doc)}${saved ? `\n${saved}` : ""}`);
  return planExitCode(decision, doc, options.detailedExitcode === true);
}
