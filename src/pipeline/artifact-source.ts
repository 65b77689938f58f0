// The plan's last stage, for a plan of the node itself: what it learns from `--artifacts` (a new
// release there, shown as pulls; the check of every path the configurations name) and of the
// install directory. Run by the pipeline, for `plan`, `install --dry-run` and `install` alike.
import { loadArtifactCatalogue } from "../artifacts/catalogue.js";
import type { Check } from "../decide/decision.js";
import { installDir } from "../decide/layout.js";
import { foreignInVersion } from "../install/artifacts.js";
import { installChecks } from "../install/install-checks.js";
import type { JournalStore } from "../install/journal.js";
import { reusableArtifacts } from "../install/reuse.js";
import { deployTree } from "../install/takeover-tree.js";
import { withArtifactUpgrade } from "../install/upgrade.js";
import { NOTHING_REUSED, verifyPlanned } from "../install/verify.js";
import { reachedAs } from "../install/version-files.js";
import { nodeDropIns, replacedCheck } from "../render/node-drop-ins.js";
import type { Planned } from "./planned.js";

/**
 * What the plan learns beyond the decision: whether the prefix is kata-install's to write; the
 * source `--artifacts` names (with it, a new release there shows as pulls; null without); and
 * whether every file the configurations name will be there.
 */
export async function withArtifactSource(planned: Planned, store: JournalStore): Promise<void> {
  // The prefix first: what is there that is not ours would stop the install, so it stops the plan.
  const restart = planned.changeset.actions.find(
    (a) => a.kind === "restart-runtime" || a.kind === "reload-runtime",
  );
  planned.decision.checks.push(
    ...(await installChecks(
      planned.host,
      planned.facts,
      planned.decision,
      planned.prepared.catalog,
      store,
      restart?.target ?? null,
    )),
  );
  const { source } = planned;
  // What the installed version holds with the source's digests: taken from the node, not pulled.
  const bundled = planned.decision.artifacts.filter((a) => a.from === "bundled").map((a) => a.name);
  const journal = await store.load();
  const installed = source === null ? null : (journal?.artifacts ?? null);
  const reused = source === null ? NOTHING_REUSED : await reusableArtifacts(installed, source, bundled);
  if (source !== null)
    planned.changeset = await withArtifactUpgrade(
      planned,
      source,
      installed,
      reused,
      planned.facts.kata.installed ? planned.facts.kata.version : null,
    );
  // A new version switched in retires the installed one: what someone else put in it stays there,
  // and is no longer reached through the prefix's links. Said before the install does it.
  const retiring = installed?.version ?? null;
  if (retiring !== null && planned.changeset.actions.some((a) => a.kind === "pull-artifact")) {
    const prefix = installDir(planned.decision);
    const foreign = await foreignInVersion(planned.host, prefix, retiring);
    if (foreign.length > 0)
      planned.decision.checks.push({
        id: "kept-in-version",
        severity: "warning",
        status: "fail",
        message: `not kata-install's, in the installed version this install replaces: ${foreign.map((f) => `${reachedAs(f, prefix)} (kept as ${f})`).join(", ")}: kept, and no longer reached through ${prefix}'s links once the version is replaced`,
        hint: `move what you need of it out of ${prefix} (kata-install installs and removes Kata there), and point at it there; what is kept stays until you remove it`,
        rule: "install",
      });
  }
  // A takeover: what of kata-deploy's tree is someone else's is kept, and the release's tools it had
  // that this install does not put back go with it; both said by name, before the install.
  if (source !== null && planned.changeset.actions.some((a) => a.kind === "take-over")) {
    const prefix = installDir(planned.decision);
    const tree = await deployTree(planned.host, prefix, source, bundled);
    if (tree.foreign.length > 0)
      planned.decision.checks.push({
        id: "takeover-kept",
        severity: "warning",
        status: "fail",
        message: `not kata-deploy's, in its tree under ${prefix}: ${tree.foreign.map((f) => `${prefix}/${f}`).join(", ")}: kept (in ${prefix}/versions/kata-deploy.kept when kata-deploy's tree goes), no longer reached where it was`,
        hint: `move what you need of it out of ${prefix} (kata-install installs and removes Kata there), and point at it there`,
        rule: "install",
      });
    if (tree.dropped.length > 0)
      planned.decision.checks.push({
        id: "takeover-tools",
        severity: "warning",
        status: "fail",
        message: `kata-deploy's node has ${tree.dropped.map((f) => `${prefix}/${f}`).join(", ")}, which this install does not put back (no chosen shim needs ${tree.dropped.length === 1 ? "it" : "them"}): gone with kata-deploy's tree`,
        hint: "DEBUG=true installs Kata's tools (kata-runtime, kata-monitor, …) with the shims; nothing else does",
        rule: "install",
      });
  }
  // Pulls without a source: install would refuse, so the plan says it first.
  const pulls = planned.changeset.actions.filter((a) => a.kind === "pull-artifact").map((a) => a.target);
  const where =
    "say where from with --artifacts registry:HOST/REPOSITORY, oci-layout:DIR or dir:DIR (ARTIFACTS in the DaemonSet)";
  if (pulls.length > 0 && source === null)
    planned.decision.checks.push({
      id: "artifact-source",
      severity: "error",
      status: "fail",
      message: `artifacts to install (${pulls.join(", ")}) but no source to pull them from${planned.release === null ? ", nor a Kata release to read the shims' configuration from" : ""}`,
      hint: where,
      rule: "install",
    });
  else if (planned.release === null && planned.decision.shims.length > 0)
    planned.decision.checks.push({
      id: "release",
      severity: "error",
      status: "fail",
      message: `no Kata release to read the shims' configuration from: none is installed under ${installDir(planned.decision)} by kata-install, and no artifact source was given`,
      hint: where,
      rule: "install",
    });
  // Every file the configurations name, checked before anything is pulled or written.
  await verifyPlanned(planned, source, [...loadArtifactCatalogue().keys()], reused);
  // After the path check, which may add pulls of its own (a repair of a file changed by hand).
  const pulled = planned.changeset.actions.filter((a) => a.kind === "pull-artifact").map((a) => a.target);
  if (pulled.length > 0 && source?.unavailable !== undefined) {
    // Each layer to pull is there as its manifest says (a layout copied in part, a blob cut short):
    // else the install would stop at the first, after pulling the others.
    const problems = await source.unavailable([...new Set(pulled)]);
    if (problems.length > 0)
      planned.decision.checks.push({
        id: "artifact-blobs",
        severity: "error",
        status: "fail",
        message: `${source.description} cannot give every artifact to install: ${problems.join("; ")}`,
        hint: "copy the layout again whole (skopeo copy, or kata-install artifacts split)",
        rule: "install",
      });
  }
  // What a drop-in of the admin's read after kata-install's replaces: Kata uses it, unchecked.
  const plannedFiles = new Map(planned.changeset.changes.map((c) => [c.path, c.after]));
  const replaced = replacedCheck(
    planned.decision,
    await nodeDropIns(planned.host, planned.decision, planned.catalog, plannedFiles),
  );
  if (replaced !== null) planned.decision.checks.push(replaced);
  const unpinned = unpinnedCheck(planned, journal?.flagShims);
  if (unpinned !== null) planned.decision.checks.push(unpinned);
}

/**
 * The last install was given its shims by --shims, and this run has no pin at all: a flag is not
 * remembered, so this plan's shims are the rules' (more, or fewer). Said, with what changes.
 */
function unpinnedCheck(planned: Planned, flagShims: string[] | undefined): Check | null {
  const { flags, overrides } = planned.prepared;
  if (flagShims === undefined || flags.shims !== undefined || overrides.shims !== undefined) return null;
  // SHIMS (or its per-architecture form): the pinned shims carry it as their source.
  if (planned.decision.shims.some((s) => s.source.kind === "env")) return null;
  const now = planned.decision.shims.map((s) => s.name);
  const added = now.filter((s) => !flagShims.includes(s));
  const dropped = flagShims.filter((s) => !now.includes(s));
  if (added.length + dropped.length === 0) return null;
  return {
    id: "shims-unpinned",
    severity: "warning",
    status: "fail",
    message: `the last install was given --shims ${flagShims.join(",")}; this run names no shims, so it installs the ones the rules choose${added.length > 0 ? `: adds ${added.join(", ")}` : ""}${dropped.length > 0 ? `${added.length > 0 ? ";" : ":"} drops ${dropped.join(", ")}` : ""}`,
    hint: `give --shims ${flagShims.join(",")} again, or put shims = [${flagShims.map((s) => `"${s}"`).join(", ")}] in the overrides file, where it stays`,
    rule: "install",
  };
}
