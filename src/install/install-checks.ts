// The checks install makes of the node itself before it writes anything: whether the prefix is
// kata-install's to write, whether a handler of the node's own would be replaced, and whether the
// runtime can be restarted on what is written. Shared by
// `preflight`, `plan` and `install`, so that preflight reports what install would refuse.
import type { Catalog } from "../decide/catalog.js";
import type { Check, Decision } from "../decide/decision.js";
import { installDir } from "../decide/layout.js";
import type { Facts } from "../detect/facts.js";
import { RUNTIME_LAYOUTS, restartTarget } from "../detect/runtime/layouts.js";
import type { Host } from "../host/host.js";
import { handlerCheck } from "../render/handler-owners.js";
import { takesOver } from "../render/render.js";
import { type Journal, type JournalStore, wasCutShort } from "./journal.js";
import { prefixCheck } from "./prefix.js";
import { missingRestartCommand } from "./runtime.js";

export async function installChecks(
  host: Host,
  facts: Facts,
  decision: Decision,
  catalog: Catalog,
  store: JournalStore,
  /**
   * The runtime the plan restarts (its changeset's restart or reload target), or null for none;
   * undefined where nothing is rendered (preflight): the runtime found, which a first install
   * restarts.
   */
  restarted?: string | null,
): Promise<Check[]> {
  if (decision.shims.length === 0) return [];
  const kind = facts.runtime.kind;
  const target =
    restarted !== undefined ? restarted : kind === null ? null : restartTarget(RUNTIME_LAYOUTS[kind].restart);
  const journal = await store.load();
  return [
    ...cutShortCheck(journal),
    // What is there that is not ours would stop the install.
    await prefixCheck(host, installDir(decision), journal, takesOver(decision, facts)),
    // So would a handler of the node's own that the plan would replace.
    handlerCheck(facts.runtime.handlers, decision, catalog),
    ...(target === null ? [] : [await restartCheck(host, target)]),
  ];
}

/**
 * An install cut short (killed, the power lost) that the next install rolls back before it plans:
 * this plan is of the node as the cut left it, so it may show what that install will not do (its
 * half-made version, a restart still owed) — said, so that the difference is not a surprise.
 */
function cutShortCheck(journal: Journal | null): Check[] {
  if (journal === null || !wasCutShort(journal)) return [];
  return [
    {
      id: "cut-short",
      severity: "warning",
      status: "fail",
      message:
        "an install here was cut short (killed, or the node lost power): the next install rolls it back first, then plans again, so what it does may differ from this plan, made on the node as the cut left it",
      hint: "run kata-install install (it rolls back, then installs), or uninstall (it rolls back, then uninstalls)",
      rule: "install",
    },
  ];
}

/** Not ignorable (output/preflight.ts NOT_IGNORABLE): ignored, the install would fail after writing. */
const RESTART_CHECK_ID = "restart-command";

/** Whether the command that restarts the runtime is on the host: without it, a restart cannot even start. */
async function restartCheck(host: Host, target: string): Promise<Check> {
  const missing = await missingRestartCommand(host, target);
  return {
    id: RESTART_CHECK_ID,
    severity: "error",
    status: missing === null ? "pass" : "fail",
    message:
      missing === null
        ? `${target} can be restarted on the configuration install writes`
        : `${missing}: the runtime would keep its old configuration, and install writes nothing`,
    ...(missing === null
      ? {}
      : {
          hint: "kata-install restarts the runtime through the node's systemd: run it on a node whose runtime systemd runs",
        }),
    rule: "install",
  };
}
