// What `uninstall` did, as text: rendered from the result object `uninstall --json` prints (its
// `message` is this text), so that the two never say different things.
import type { PlanAction } from "../changeset.js";
import type { UninstallResult } from "../install/uninstall.js";
import { ROLLED_BACK } from "./install.js";

/** An uninstall's result, once files are given back: `uninstall --json` prints it whole. */
export interface UninstallDone extends UninstallResult {
  /** The runtime restarted (or reloaded) on the files given back; null when none was. */
  restarted: PlanAction | null;
  /** The runtime's unit, when its files are unloadable and it was not restarted: the admin's to restart. */
  heldRuntime: string | null;
  /** The node was kata-deploy's until kata-install took it over. */
  takenOverFromKataDeploy: boolean;
  /** Then, the handlers the node no longer has. */
  goneHandlers: string[];
}

/** What the files' uninstall gave back, in one line. */
export function restoredLine(u: Pick<UninstallResult, "restored" | "removed">): string {
  return `Restored ${u.restored.length} file(s), removed ${u.removed.length}, and the artifacts.`;
}

export function renderUninstall(u: UninstallDone): string {
  const rolledBack = u.recovered ? ROLLED_BACK : null;
  const restored = restoredLine(u);
  // After a rollback that left nothing installed, "restored 0, removed 0" would say nothing.
  const none = u.restored.length + u.removed.length === 0;
  const lines =
    rolledBack === null
      ? [restored]
      : none
        ? [`${rolledBack} Nothing else was installed.`]
        : [rolledBack, restored];
  for (const left of u.leftEdited) lines.push(`  left ${left.path}: ${left.what}`);
  if (u.takenOverFromKataDeploy)
    lines.push(
      `This node was kata-deploy's until kata-install took it over: kata-deploy's install is not restored (its files and handlers went with the takeover), and the node has no Kata now (${u.goneHandlers.join(", ") || "no handler"} gone). To have Kata again, install with kata-install, or deploy kata-deploy again.`,
    );
  if (u.heldRuntime !== null)
    lines.push(
      `Runtime: not restarted: it would not start on ${u.unloadable.join(", ")}; it runs on what it loaded before, Kata's handlers with it, until you mend the file and restart ${u.heldRuntime}.`,
    );
  if (u.restarted)
    lines.push(
      `Runtime: ${u.restarted.kind === "reload-runtime" ? "reloaded" : "restarted"} ${u.restarted.target}, and it answers.`,
    );
  return lines.join("\n");
}
