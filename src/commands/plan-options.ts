// What \`plan\` (and \`install --dry-run\`) are given: one definition for the plan and the saved plan.
import type { DecideCommandOptions } from "./decide-run.js";

export interface PlanOptions extends DecideCommandOptions {
  detailedExitcode?: boolean;
  /** `install --dry-run --artifacts …`: also compare the installed artifacts with the source's. */
  artifacts?: string;
  artifactsTag?: string;
  /** Save the plan, with the hashes of what it was made from, for `install --plan`. */
  out?: string;
}
