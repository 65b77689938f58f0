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
  const { decision } = planned;
  let { changeset } = planned;
  if (options.artifacts !== undefined) {
    const { artifactSource, parseArtifactSpecifier } = await import("./install.js");
    const { journalFor } = await import("../install/install.js");
    const { withArtifactUpgrade } = await import("../install/upgrade.js");
    const { installDirFromEnv } = await import("../render/layout.js");
    const specifier = parseArtifactSpecifier(options.artifacts);
    if (specifier) {
      const source = artifactSource(specifier, planned.facts.arch, options.artifactsTag ?? "latest");
      changeset = await withArtifactUpgrade(
        planned,
        source,
        journalFor(planned.host, installDirFromEnv(process.env)),
      );
    }
  }
  const doc = planDocument(decision, changeset);
  out(options.json ? `${JSON.stringify(doc, null, 2)}\n` : renderPlan(doc));
  return planExitCode(decision, doc, options.detailedExitcode === true);
}
