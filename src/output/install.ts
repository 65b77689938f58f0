// What `install` did, as text: rendered from the result object `install --json` prints (as
// output/plan.ts renders a plan from its document), so that the two never say different things.
import type { InstallReport } from "../install/install.js";
import { servedText } from "../install/runtime.js";
import { reachedAs } from "../install/version-files.js";
import { transferLine } from "./plan.js";

/** Said first when a run cut short was rolled back (by install or uninstall). */
export const ROLLED_BACK = "An earlier install had been cut short: it was rolled back first.";

/** An install's result: `install --json` prints it whole. */
export interface InstallResult extends InstallReport {
  /** A run cut short was rolled back first. */
  recovered: boolean;
  /** With --plan: the saved plan applied as made, or found applied already. */
  savedPlan?: "as-made" | "applied";
  /** What the plan warned of (said on stderr by a run that shows no plan). */
  warnings: Array<{ id: string; message: string }>;
}

/** Whether the install changed anything on the node. */
export function installChanged(report: InstallReport): boolean {
  return (
    report.artifacts.switched ||
    report.artifacts.repaired > 0 ||
    report.restarted !== null ||
    report.files.written.length + report.files.removed.length > 0
  );
}

/** `result` as lines; `plan`: the saved plan's file, `prefix`: where Kata is installed. */
export function renderInstall(result: InstallResult, context: { plan?: string; prefix: string }): string {
  const lines: string[] = [];
  const { artifacts } = result;
  if (result.recovered) lines.push(ROLLED_BACK);
  if (result.savedPlan === "applied")
    lines.push(
      `The saved plan ${context.plan} is applied already: the node is as it leaves it, and the plan made again now changes nothing.`,
    );
  if (artifacts.switched)
    lines.push(
      `Artifacts: version ${artifacts.staged?.id} (${artifacts.staged?.files} files, ${artifacts.staged?.bytes} bytes) switched in.`,
    );
  for (const entry of result.kept)
    lines.push(
      `  kept ${entry}: not kata-install's (it was ${reachedAs(entry, context.prefix)}); the version it was in is gone`,
    );
  if (artifacts.repaired > 0)
    lines.push(
      `Artifacts: ${artifacts.repaired} file(s) of version ${artifacts.staged?.id} were not as installed: put back.`,
    );
  if (result.pulled) lines.push(transferLine(result.pulled).replace(/^Pulls/, "Pulled"));
  lines.push(`Files: ${result.files.written.length} written, ${result.files.removed.length} removed.`);
  for (const aside of result.files.setAside)
    lines.push(
      `  set aside ${aside.path} as ${aside.to}: edited since kata-install wrote it, with the edit in it`,
    );
  if (result.restarted)
    lines.push(
      `Runtime: ${result.restarted.kind === "reload-runtime" ? "reloaded" : "restarted"} ${result.restarted.target}, ${servedText(result.served)}.`,
    );
  if (!installChanged(result)) lines.push("Nothing to do: the node is as the plan wants it.");
  return `${lines.join("\n")}\n`;
}
