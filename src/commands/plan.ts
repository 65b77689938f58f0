import { planDocument, planExitCode, renderPlan } from "../output/plan.js";
import { planPipeline } from "../pipeline.js";
import type { DecideCommandOptions } from "./decide-run.js";

export interface PlanOptions extends DecideCommandOptions {
  detailedExitcode?: boolean;
  /** `install --dry-run --artifacts …`: also compare the installed artifacts with the source's. */
  artifacts?: string;
  artifactsTag?: string;
}

export async function runPlan(options: PlanOptions, out: (text: string) => void): Promise<number> {
  const planned = await planPipeline(options);
  if (options.facts === undefined) {
    // The artifact source (if any) and the check of every path the configurations name.
    const { parseArtifactSpecifier, withArtifactSource } = await import("./artifact-source.js");
    const { journalFor } = await import("../install/install.js");
    const { installDirFromEnv } = await import("../render/layout.js");
    const store = journalFor(planned.host, installDirFromEnv(process.env));
    await withArtifactSource(planned, parseArtifactSpecifier(options.artifacts), options.artifactsTag, store);
  }
  const { decision, changeset } = planned;
  const doc = planDocument(decision, changeset);
  out(options.json ? `${JSON.stringify(doc, null, 2)}\n` : renderPlan(doc));
  return planExitCode(decision, doc, options.detailedExitcode === true);
}
