// Whose is a runtime handler named as kata-install names its own (kata-<shim>[-<suffix>])? Not the
// name's: an installer's handler at this prefix — kata-install's, as its journal records writing it,
// or kata-deploy's, whose install kata-install takes over — points into the prefix, at its shim
// (runtime_path) or its Kata configuration (ConfigPath), or (kata-deploy's older ones) names no path
// and runs kata-deploy's per-shim shim. One of that name that points elsewhere (a distro's Kata, an
// admin's own) is the node's: never removed, and never replaced — a plan that would write a handler
// of the same name fails its runtime-handlers check, by name.
import type { Catalog } from "../decide/catalog.js";
import type { Check, Decision } from "../decide/decision.js";
import { handlersFor, installDir } from "../decide/layout.js";
import type { RuntimeHandler } from "../detect/runtime/schema.js";

export const HANDLERS_CHECK_ID = "runtime-handlers";

/**
 * Handlers named as kata-install (or kata-deploy before it) names its own: kata-<known shim>, with
 * this install's suffix; and the variants `variantOurs` names (a -debug or custom runtime this
 * install writes, or one whose configuration is under this prefix's custom-runtimes/). Any other
 * table is the admin's (kata-qemu-mylab, or a kata-qemu-debug of their own): never removed. Of
 * those so named, the node's own are told by where they point (nodesOwnHandlers).
 */
export function isOurHandler(
  name: string,
  catalog: Catalog,
  suffix = "",
  variantOurs: (name: string) => boolean = () => false,
): boolean {
  if (variantOurs(name)) return true;
  if (!name.startsWith("kata-")) return false;
  const rest = name.slice(5);
  const tail = suffix ? `-${suffix}` : "";
  return catalog.shimNames().some((shim) => rest === `${shim}${tail}`);
}

/** The node's own handlers among those named as kata-install's: what render must leave alone. */
export function nodesOwnHandlers(
  handlers: readonly RuntimeHandler[],
  decision: Decision,
  catalog: Catalog,
): RuntimeHandler[] {
  const inside = (p: string | null) => p?.startsWith(`${installDir(decision)}/`) === true;
  // kata-deploy's older handlers name no path: their shim is found on the PATH by the name
  // kata-deploy gives its per-shim binaries (containerd-shim-<handler>-v2, links into its prefix),
  // which distributions' Kata does not use (io.containerd.kata.v2).
  const deploysPathless = (h: RuntimeHandler) =>
    h.runtimePath === null && h.configPath === null && h.runtimeType === `io.containerd.${h.name}.v2`;
  return handlers.filter(
    (h) =>
      isOurHandler(h.name, catalog, decision.install.suffix.value) &&
      !inside(h.runtimePath) &&
      !inside(h.configPath) &&
      !deploysPathless(h),
  );
}

/** Fails when the plan writes a handler whose name one of the node's own handlers has. */
export function handlerCheck(
  handlers: readonly RuntimeHandler[],
  decision: Decision,
  catalog: Catalog,
): Check {
  const writes = new Set(handlersFor(decision, catalog).map((h) => h.name));
  const clashing = nodesOwnHandlers(handlers, decision, catalog).filter((h) => writes.has(h.name));
  if (clashing.length === 0)
    return {
      id: HANDLERS_CHECK_ID,
      severity: "error",
      status: "pass",
      message: "no handler of the node's own has the name of one kata-install writes",
      rule: "install",
    };
  const prefix = installDir(decision);
  return {
    id: HANDLERS_CHECK_ID,
    severity: "error",
    status: "fail",
    message: clashing
      .map((h) => {
        const target = h.configPath ?? h.runtimePath ?? "no configuration";
        // A Kata prefix of another INSTALLATION_PREFIX or MULTI_INSTALL_SUFFIX: most likely an
        // install of kata-install's or kata-deploy's made with other variables than this plan's.
        const other = /^(.*\/opt\/kata(?:-[A-Za-z0-9_-]+)?)\//.exec(target)?.[1];
        return other !== undefined && other !== prefix
          ? `${h.name} (${h.file}) points into ${other}, another Kata prefix than this plan's ${prefix}: an install made with other INSTALLATION_PREFIX or MULTI_INSTALL_SUFFIX values? Plan with the ones it was made with; as it is, kata-install writes a handler of that name`
          : `${h.name} (${h.file}) is a handler of the node's own, for ${target}: not kata-install's nor kata-deploy's (those point into ${prefix}), and kata-install writes a handler of that name`;
      })
      .join("; "),
    hint: "kata-install never replaces a handler it did not write: rename that one (and any RuntimeClass naming it) or remove it, or leave its shim out (--shims, SHIMS), then plan again",
    rule: "install",
  };
}
