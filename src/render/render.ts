// The render stage: Decision (+ Facts, + the node's current files) → Changeset. It reads files on
// the host to compare and to edit minimally; it never writes.

import { type Changeset, change, type FileChange, type PlanAction } from "../changeset.js";
import { byText } from "../compare.js";
import type { Catalog } from "../decide/catalog.js";
import type { Decision } from "../decide/decision.js";
import {
  DECIDED_DROP_IN,
  defaultConfigLinks,
  installDir,
  variantsDir,
  WRAPPERS_DIR,
} from "../decide/layout.js";
import type { Facts } from "../detect/facts.js";
import { RUNTIME_LAYOUTS } from "../detect/runtime/layouts.js";
import type { Host } from "../host/host.js";
import { type Installed, NOTHING_INSTALLED } from "../state/installed.js";
import { type RenderedFile, renderKataConfigs } from "./kata-config.js";
import { isNydusUnitPath, nydusChanges } from "./nydus-changes.js";
import { backupOf, renderRuntimeConfig } from "./runtime-config.js";
import { goneKataDeployImports } from "./stale-imports.js";
import type { Templates } from "./templates.js";

/** What an earlier install left in place, as its journal says: the install stage reads it for render. */
/** Said of a file of kata-install's own that someone edited since: the plan replaces the edit. */
const EDITED = {
  kata: "edited on the node since kata-install wrote it: the edit is replaced (an admin's Kata values go in a drop-in of config.d/, which kata-install keeps)",
  runtime:
    "edited on the node since kata-install wrote it: the edit is replaced (the file is kata-install's; an admin's settings go in a file of their own)",
};

const SET_ASIDE =
  "edited on the node since kata-install wrote it: set aside as <name>.kata-install-edited (out of a drop-in directory), with the edit in it";

/** kata-deploy's install at the prefix being installed, which this decision takes over. */
export function takesOver(decision: Decision, facts: Facts): boolean {
  return (
    decision.shims.length > 0 &&
    facts.kata.managedBy === "kata-deploy" &&
    facts.kata.prefix === installDir(decision) &&
    facts.kata.deploy !== undefined
  );
}

export async function render(
  decision: Decision,
  facts: Facts,
  catalog: Catalog,
  templates: Templates,
  host: Host,
  installed: Installed = NOTHING_INSTALLED,
): Promise<Changeset> {
  // A node kata-deploy installed at this prefix: kata-install takes it over. Its tree is moved
  // aside by the install (into a version of its own, removed once ours is in place), so the plan
  // writes the prefix's files as new, and its drop-ins and imports go.
  const prefix = installDir(decision);
  const deploy = takesOver(decision, facts) ? facts.kata.deploy : undefined;
  const takeover = deploy !== undefined ? { dropIns: deploy.dropIns } : null;
  const read = async (path: string) => {
    if (takeover && path.startsWith(`${prefix}/`)) return null;
    // A file that is there but is no UTF-8 text of a readable size is not read as text: the
    // preflight says why, and install refuses it by name (refuseMoved).
    const result = await host.readText(path, { utf8: true });
    return result.ok ? result.text : null;
  };
  // CRI-O's drop-ins too: what the admin set there decides what ours may set.
  const runtimeFiles = [
    facts.runtime.configPath,
    facts.runtime.templatePath,
    // kata-deploy's backup of the file it edited in place: what uninstall gives back after a takeover.
    ...(takeover && facts.runtime.configPath !== null ? [backupOf(facts.runtime.configPath)] : []),
    ...(facts.runtime.kind !== null && RUNTIME_LAYOUTS[facts.runtime.kind].family === "crio"
      ? facts.runtime.imports
      : []),
  ].filter((p): p is string => p !== null);
  const current = new Map(await Promise.all(runtimeFiles.map(async (p) => [p, await read(p)] as const)));
  const gone = await goneKataDeployImports(host, current);

  const kata = renderKataConfigs(decision, catalog, templates);
  const runtime = renderRuntimeConfig(decision, facts, catalog, templates, current, takeover, gone);
  const changes: FileChange[] = [];
  const consider = async (file: RenderedFile, role: "kata" | "runtime") => {
    const c = change(
      file.path,
      current.get(file.path) ?? (await read(file.path)),
      file.content,
      file.mode,
      file.reason,
      role,
    );
    if (c) {
      const recorded = file.block === undefined ? installed.written?.get(file.path) : undefined;
      const edited = c.action === "modify" && recorded !== undefined && c.beforeHash !== recorded;
      // A runtime file of ours that goes, edited since: install sets it aside (install/apply.ts).
      const setAside =
        c.action === "delete" &&
        role === "runtime" &&
        installed.files.get(file.path) === false &&
        recorded !== undefined &&
        recorded !== "" &&
        c.beforeHash !== recorded;
      changes.push({
        ...c,
        ...(edited ? { reason: `${c.reason}; ${EDITED[role]}` } : {}),
        ...(setAside ? { reason: `${c.reason}; ${SET_ASIDE}` } : {}),
        ...(file.restore !== undefined ? { restore: file.restore } : {}),
        ...(file.block !== undefined ? { block: file.block } : {}),
      });
    }
  };
  for (const file of kata) await consider(file, "kata");
  // nydus-for-kata-tee (EXPERIMENTAL_SETUP_SNAPSHOTTER=nydus): Kata's side, written before the
  // runtime's configuration names its proxy plugin; and the unit kata-install runs, when it changed.
  const deployedNydus = deploy?.snapshotters?.find((s) => s.name === "nydus")?.paths ?? [];
  const nydus = await nydusChanges(decision, host, read, installed, takeover !== null, deployedNydus);
  changes.push(...nydus.changes);
  // Without the release, no shim's configuration is written (the plan refuses: "release"), and
  // nothing of Kata's already there is taken for stale.
  const withRelease = catalog.release !== null;
  for (const link of withRelease ? defaultConfigLinks(decision, catalog) : []) {
    const before = takeover && link.path.startsWith(`${prefix}/`) ? null : await host.readlink(link.path);
    // A file there that is no link is not kata-install's (nor kata-deploy's): left as it is.
    if (before === null && !takeover && (await host.exists(link.path))) continue;
    const c = change(link.path, before, link.target, 0o777, link.reason ?? LINK_REASON, "kata");
    if (c) changes.push({ ...c, link: true });
  }
  let runtimeChanged = false;
  for (const file of runtime.files) {
    const before = changes.length;
    await consider(file, "runtime");
    if (changes.length > before) runtimeChanged = true;
  }
  // kata-deploy's drop-ins left without its install would replace kata-install's handlers (they
  // are read after ours): they go with the install, and uninstall gives them back as they were.
  if (takeover === null && decision.shims.length > 0)
    for (const path of facts.kata.deployLeftovers ?? []) {
      const before = changes.length;
      await consider(
        {
          path,
          content: null,
          mode: 0o644,
          template: "(leftover)",
          reason: `kata-deploy's runtime drop-in, left without kata-deploy's install (none under ${prefix}): its handlers, read after kata-install's, would replace them`,
        },
        "runtime",
      );
      if (changes.length > before) runtimeChanged = true;
    }
  if (takeover === null && withRelease)
    changes.push(...(await staleKataFiles(decision, catalog, kata, host, read, installed)));

  const actions: PlanAction[] = [];
  if (takeover)
    actions.push({
      kind: "take-over",
      target: prefix,
      reason: `kata-deploy's install (shims ${deploy?.shims.join(", ") || "none found"}; ${takeover.dropIns.length} runtime drop-in(s)) becomes kata-install's: its files are moved aside in one piece (running VMs keep theirs) and removed once kata-install's are in place; its handlers keep their names`,
    });
  // A takeover installs into a prefix whose journal (if any) is not ours to trust.
  const journal = takeover ? NOTHING_INSTALLED : installed;
  for (const artifact of decision.artifacts) {
    if (artifact.from === "bundled" && !journal.artifacts.has(artifact.name)) {
      actions.push({ kind: "pull-artifact", target: artifact.name, reason: artifact.reason });
    }
  }
  actions.push(...nydus.actions);
  if (runtimeChanged && runtime.onChange)
    actions.push(
      journal.pendingRestart
        ? {
            ...runtime.onChange,
            reason: `${runtime.onChange.reason}; the restart an earlier run failed to finish is still owed, too`,
          }
        : runtime.onChange,
    );
  else if (journal.pendingRestart)
    actions.push({
      ...journal.pendingRestart,
      reason: `${journal.pendingRestart.target} has not loaded its configuration as it is on disk (an earlier restart failed or was cut short): the restart is still owed`,
    });
  return { changes: changes.sort((a, b) => byText(a.path, b.path)), actions };
}

const LINK_REASON =
  "where kata-deploy leaves this shim's configuration (kata-runtime, kata-ctl and admins look there): a link to it";

/** Configuration files of ours that the decision no longer wants: shims dropped, drop-ins emptied. */
async function staleKataFiles(
  decision: Decision,
  catalog: Catalog,
  wanted: RenderedFile[],
  host: Host,
  read: (p: string) => Promise<string | null>,
  installed: Installed,
): Promise<FileChange[]> {
  const defaults = `${installDir(decision)}/share/defaults/kata-containers`;
  const keep = new Set(wanted.map((f) => f.path));
  const out: FileChange[] = [];
  // Go shims' directories, and the Rust shims' (where an earlier kata-install also put them under runtimes/).
  for (const root of [`${defaults}/runtimes`, `${defaults}/runtime-rs/runtimes`]) {
    const listing = await host.readDir(root);
    if (!listing.ok) continue;
    for (const shim of listing.entries) {
      for (const path of [
        `${root}/${shim}/configuration-${shim}.toml`,
        `${root}/${shim}/config.d/${DECIDED_DROP_IN}`,
      ]) {
        if (keep.has(path)) continue;
        const before = await read(path);
        const moved = decision.shims.some((s) => s.name === shim) && !path.endsWith(DECIDED_DROP_IN);
        const c = change(
          path,
          before,
          null,
          0o644,
          moved
            ? `the ${shim} shim's configuration lives elsewhere now`
            : decision.shims.some((s) => s.name === shim)
              ? "no value is decided for this shim any more"
              : `the ${shim} shim is no longer installed`,
          "kata",
        );
        if (c) out.push(c);
      }
    }
  }
  // Files of kata-install's own kinds no handler or shim needs any more — variants' configurations
  // (DEBUG off, a custom runtime dropped), the links to shims' configurations, qemu wrappers:
  // those the journal records as written by an install, and nothing else there.
  const variants = `${variantsDir(decision)}/`;
  const wrappers = `${installDir(decision)}/${WRAPPERS_DIR}/`;
  const linked = new Set(defaultConfigLinks(decision, catalog).map((l) => l.path));
  for (const [path, link] of installed.files) {
    if (keep.has(path)) continue;
    if (link) {
      // nydus's unit link is nydus's to keep or remove (nydus-changes.ts).
      if (linked.has(path) || isNydusUnitPath(path)) continue;
      const c = change(
        path,
        await host.readlink(path),
        null,
        0o777,
        "its shim is no longer installed",
        "kata",
      );
      if (c) out.push({ ...c, link: true });
    } else if (path.startsWith(variants) || path.startsWith(wrappers)) {
      const why = path.startsWith(variants)
        ? `no handler ${path.slice(variants.length).split("/")[0]} any more`
        : "no shim runs this qemu any more";
      const c = change(path, await read(path), null, 0o644, why, "kata");
      if (c) out.push(c);
    }
  }
  return out;
}
