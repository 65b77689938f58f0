import { planDocument, planExitCode, renderPlan } from "../output/plan.js";
import { planPipeline } from "../pipeline.js";
import type { DecideCommandOptions } from "./decide-run.js";

export interface PlanOptions extends DecideCommandOptions {
  detailedExitcode?: boolean;
}

export async function runPlan(options: PlanOptions, out: (text: string) => void): Promise<number> {
  const { decision, changeset } = await planPipeline(options);
  const doc = planDocument(decision, changeset);
  out(options.json ? `${JSON.stringify(doc, null, 2)}\n` : renderPlan(doc));
  return planExitCode(decision, doc, options.detailedExitcode === true);
}
