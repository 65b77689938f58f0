// `install` and `uninstall`: take the node's lock, roll back whatever a killed run left, then do
// exactly what a fresh plan shows (or undo what the journal recorded).

import { parseArtifactSpecifier } from "../artifacts/open-source.js";
import { unifiedDiff } from "../changeset.js";
import { blocking } from "../decide/decision.js";
import { installDirFromEnv } from "../decide/layout.js";
import { type DetectOptions, detectOptionsFromEnv } from "../detect/context.js";
import { probeInstalled } from "../detect/facts.js";
import { ProbeCache } from "../detect/probe-cache.js";
import { UserError } from "../errors.js";
import { writeAtomically } from "../host/fs-ops.js";
import type { Host } from "../host/host.js";
import { openHost } from "../host/open.js";
import { prepare } from "../inputs/prepare.js";
import { recover } from "../install/apply.js";
import { install } from "../install/install.js";
import { type JournalStore, journalFor, wasCutShort } from "../install/journal.js";
import { acquireLock, LOCK_PATH } from "../install/lock.js";
import { previewUninstall } from "../install/preview.js";
import { restartRuntime } from "../install/runtime.js";
import { prefixOf } from "../install/switch.js";
import { uninstallFiles } from "../install/uninstall.js";
import { type InstallResult, installChanged, ROLLED_BACK, renderInstall } from "../output/install.js";
import { planDocument, refusalHint, renderPlan } from "../output/plan.js";
import { renderUninstall, restoredLine, type UninstallDone } from "../output/uninstall.js";
import { type Planned, planPipeline } from "../pipeline/pipeline.js";
import { JOURNAL_DIR } from "../state/places.js";
import type { DecideCommandOptions } from "./decide-run.js";
import { runPlan } from "./plan.js";
import type { PlanOptions } from "./plan-options.js";

export interface InstallOptions extends PlanOptions {
  dryRun?: boolean;
  artifacts?: string;
  artifactsTag?: string;
  runtimeTimeout?: string;
  /** A saved plan (`plan --out`): applied as it is, or refused if the node or the inputs moved. */
  plan?: string;
}

function timeoutOf(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const seconds = Number(text);
  if (!Number.isFinite(seconds) || seconds <= 0)
    throw new UserError(`--runtime-timeout ${text}: expected a number of seconds`);
  return seconds * 1000;
}

/** What a caller of runInstall (the container's entrypoint) wants besides the exit code. */
export interface InstallHooks {
  /** Print the plan about to be applied, as `plan` would, before applying it. */
  showPlan?: boolean;
  /** Called with what was planned, once the install succeeded. */
  installed?(planned: Planned): void;
  /**
   * How a refused saved plan is made again, where that is not where it is applied: the root it is
   * made under, and what to do with it then (the entrypoint's: on the node, into the ConfigMap).
   */
  remake?: { hostRoot: string; where: string; next: string };
}

export async function runInstall(
  given: InstallOptions,
  out: (text: string) => void,
  hooks: InstallHooks = {},
): Promise<number> {
  // Checked alike with --dry-run or without: a dry run that takes what the install refuses shows
  // nothing of what the install would do.
  timeoutOf(given.runtimeTimeout);
  // A script that asks for plan's exit codes must never install by leaving out --dry-run.
  if (given.detailedExitcode && !given.dryRun)
    throw new UserError(
      "--detailed-exitcode goes with --dry-run (or plan): without it this command installs. Nothing was installed",
    );
  if (given.dryRun && given.plan === undefined) return runPlan(given, out);
  // With --plan: the saved plan checked against the node as install checks it, and nothing applied.
  const dryRun = given.dryRun === true;
  if (given.facts !== undefined)
    throw new UserError(
      "--facts: install reads the node itself (a saved facts file is for plan and preflight)",
    );
  // A saved plan is made again from its own options, and applied only if nothing differs.
  const saved = given.plan === undefined ? null : await loadPlan(given.plan, given);
  const options = saved?.options ?? given;
  const env = process.env;
  const prepared = await prepare({ ...options, env });
  parseArtifactSpecifier(options.artifacts); // checked before the lock is taken
  const timeout = timeoutOf(options.runtimeTimeout);
  const host = await openHost(options.hostRoot, options.hostExec);
  // A dry run changes nothing: no lock, no rollback of a run cut short (said instead).
  const lock = dryRun ? null : await acquireLock(host);
  if (lock?.tookOver) process.stderr.write(`kata-install: took over ${LOCK_PATH}: ${lock.tookOver.why}\n`);
  try {
    const prefix = installDirFromEnv(env);
    const store = journalFor(host, prefix);
    const cutShort = dryRun && (await store.load().then((j) => j !== null && wasCutShort(j)));
    const recovered = dryRun ? false : await recover(store);
    const probes = await ProbeCache.load(host, prefix);
    const planned = await planPipeline(options, env, { prepared, host, probes });
    const source = planned.source;
    const asSaved = saved
      ? await saved.refuseIfMoved(planned, {
          hostRoot: options.hostRoot,
          env,
          source,
          installedVersion: (await store.load())?.artifacts.version ?? null,
          dryRun,
          remake: hooks.remake,
        })
      : null;
    const blockers = blocking(planned.decision);
    if (blockers.length > 0) {
      throw new UserError(
        `preflight errors: ${blockers.map((c) => `${c.id} (${c.message})`).join("; ")}. Nothing was installed; ${refusalHint(blockers.map((c) => c.id)).replace("the errors above", "them")}`,
      );
    }
    if (saved && dryRun) {
      out(renderPlan(asSaved === "as-made" ? saved.plan : planDocument(planned.decision, planned.changeset)));
      out(
        `${cutShort ? "An install was cut short: install would roll it back first, and check the plan again then.\n" : ""}${
          asSaved === "as-made"
            ? `The saved plan ${given.plan} would be applied: made again now, it is the same plan. Nothing was changed.`
            : `The saved plan ${given.plan} is applied already: install --plan would change nothing.`
        }\n`,
      );
      return 0;
    }
    // A saved plan applied already is shown as the plan made now: nothing to do, not its changes.
    if (hooks.showPlan)
      out(
        renderPlan(
          saved && asSaved === "as-made" ? saved.plan : planDocument(planned.decision, planned.changeset),
        ),
      );
    // What the plan warned of is said by the install too, which shows no plan when run by hand (the
    // entrypoint's shows it, warnings and all, so they are not said twice).
    const warnings = planned.decision.checks
      .filter((c) => (c.status === "fail" && c.severity === "warning") || c.status === "ignored")
      .map((c) => ({
        id: c.id,
        message: `${c.message}${c.status === "ignored" ? " (an error, ignored)" : ""}`,
      }));
    if (!hooks.showPlan)
      for (const w of warnings) process.stderr.write(`kata-install: warning: ${w.id}: ${w.message}\n`);
    const report = await install(host, planned, source, timeout);
    const changed = installChanged(report);
    // The node is installed by now: the probe cache only saves time later, its failure none of this.
    if (changed) {
      await rememberProbes(store, probes, detectOptionsFromEnv(env)).catch((error: Error) =>
        process.stderr.write(`kata-install: the probe cache was not written: ${error.message}\n`),
      );
      await rememberFlagShims(store, planned.prepared.flags.shims).catch((error: Error) =>
        process.stderr.write(`kata-install: the --shims given were not recorded: ${error.message}\n`),
      );
    }
    const result: InstallResult = {
      recovered,
      ...(asSaved === null ? {} : { savedPlan: asSaved }),
      ...report,
      warnings,
    };
    out(
      options.json
        ? `${JSON.stringify(result, null, 2)}\n`
        : renderInstall(result, { plan: given.plan, prefix: prefixOf(store) }),
    );
    hooks.installed?.(planned);
    return 0;
  } finally {
    await lock?.release();
  }
}

export interface UninstallOptions extends Pick<DecideCommandOptions, "hostRoot" | "hostExec" | "json"> {
  dryRun?: boolean;
  runtimeTimeout?: string;
}

/** Where uninstall looked, and what decides where: an install made with a prefix is found only with it. */
async function nothingToUninstall(
  host: Host,
  journal: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<string> {
  const where = ["INSTALLATION_PREFIX", "MULTI_INSTALL_SUFFIX"]
    .map((name) => `${name}=${env[name]?.trim() ? env[name]?.trim() : "(unset)"}`)
    .join(", ");
  // Installs of another suffix beside this one's place (/opt/kata-lts next to /opt/kata): named,
  // as the likely meaning of a run made without its variables.
  const opt = journal.slice(0, journal.lastIndexOf("/opt/") + "/opt".length);
  const listing = await host.readDir(opt);
  const others: string[] = [];
  for (const name of listing.ok ? listing.entries.sort() : [])
    if (
      /^kata(-[A-Za-z0-9_-]+)?$/.test(name) &&
      (await host.exists(`${opt}/${name}/${JOURNAL_DIR}/journal.json`))
    )
      if (`${opt}/${name}/${JOURNAL_DIR}/journal.json` !== journal)
        others.push(
          `${opt}/${name} (${name === "kata" ? "no MULTI_INSTALL_SUFFIX" : `MULTI_INSTALL_SUFFIX=${name.slice(5)}`})`,
        );
  const found =
    others.length > 0
      ? ` kata-install has an install at ${others.join(", ")}: run with that to uninstall it.`
      : "";
  return `Nothing to uninstall: no kata-install journal at ${journal} (looked where ${where} put Kata: an install made with another prefix or suffix is uninstalled with the same variables).${found}\n`;
}

export async function runUninstall(options: UninstallOptions, out: (text: string) => void): Promise<number> {
  const env = process.env;
  const timeout = timeoutOf(options.runtimeTimeout);
  const host = await openHost(options.hostRoot, options.hostExec);
  const store = journalFor(host, installDirFromEnv(env));
  if (options.dryRun) {
    const preview = await previewUninstall(store);
    if (options.json) {
      const message = preview.installed
        ? undefined
        : (await nothingToUninstall(host, store.file, env)).trim();
      out(`${JSON.stringify({ dryRun: true, ...preview, ...(message ? { message } : {}) }, null, 2)}\n`);
    } else if (!preview.installed) out(await nothingToUninstall(host, store.file, env));
    else {
      if (preview.cutShort) out("An install was cut short: uninstall would roll it back first.\n");
      for (const c of preview.changes) out(`# ${c.action} ${c.path}\n${unifiedDiff(c)}`);
      out(
        preview.artifactsVersion === null
          ? `Uninstall would restore ${preview.restored.length} file(s) and remove ${preview.removed.length}.\n`
          : `Uninstall would restore ${preview.restored.length} file(s), remove ${preview.removed.length}, and the artifacts under ${prefixOf(store)}.\n`,
      );
      for (const left of preview.leftEdited) out(`  would leave ${left.path}: ${left.what}\n`);
      // What is not kata-install's in a directory it made stays, and the directory with it.
      for (const entry of preview.kept) out(`  would leave ${entry}: not kata-install's\n`);
      for (const dir of preview.leftDirs)
        out(`  would leave ${dir}: a directory kata-install created, not empty: left in place\n`);
      if (preview.restart !== null)
        out(
          `Runtime: would ${preview.restart.kind} ${preview.restart.target}${preview.restart.owed ? " (a restart an earlier run left owed)" : ""}, and wait until it answers.\n`,
        );
    }
    return 0;
  }
  const lock = await acquireLock(host);
  if (lock.tookOver) process.stderr.write(`kata-install: took over ${LOCK_PATH}: ${lock.tookOver.why}\n`);
  try {
    const journal = await store.load();
    const runtime = journal?.runtime ?? null;
    // A node taken over from kata-deploy: what it has after this is no Kata at all, said plainly.
    const takenOver = journal?.carried !== undefined;
    const result = await uninstallFiles(store);
    // A rollback of a run cut short changed the node: said, even when nothing is left to uninstall.
    const rolledBack = result.recovered ? ROLLED_BACK : null;
    if (result.nothingInstalled) {
      const message =
        rolledBack === null
          ? await nothingToUninstall(host, store.file, env)
          : `${rolledBack} Nothing of kata-install's is left installed.\n`;
      out(options.json ? `${JSON.stringify({ ...result, message: message.trim() }, null, 2)}\n` : message);
      return 0;
    }
    // A runtime file the admin's edit left unreadable: a restart would take the runtime down (it
    // runs on what it loaded before, Kata's handlers with it, until the file is mended).
    const held = result.unloadable.length > 0;
    const restart = (result.runtimeChanged || result.restartOwed) && !held;
    const restored = restoredLine(result);
    if (restart && runtime)
      await restartRuntime(host, runtime.action, runtime.socket, timeout).catch((error: Error) => {
        // The files are back and the journal is gone: no later run would restart it.
        throw new UserError(
          `${restored.slice(0, -1)}; but ${error.message}: restart ${runtime.action.target} yourself, so that it runs without Kata's handlers`,
        );
      });
    // The JSON says what the text says: the rollback first, the restart done.
    const done: UninstallDone = {
      ...result,
      restarted: restart && runtime ? runtime.action : null,
      heldRuntime: held && runtime ? runtime.action.target : null,
      takenOverFromKataDeploy: takenOver,
      goneHandlers: [...(journal?.carried?.shims ?? [])].map((s) => `kata-${s}`),
    };
    const text = renderUninstall(done);
    out(options.json ? `${JSON.stringify({ ...done, message: text }, null, 2)}\n` : `${text}\n`);
    return 0;
  } finally {
    await lock.release();
  }
}

/** A saved plan, the options to plan again with (its own), and the check that it still holds. */
async function loadPlan(file: string, given: InstallOptions) {
  const { loadSavedPlan } = await import("../install/saved-plan.js");
  const { optionsOfSavedPlan, refuseIfMoved } = await import("./saved-plan.js");
  const saved = await loadSavedPlan(file);
  return {
    plan: saved.plan,
    options: optionsOfSavedPlan(file, saved, given),
    refuseIfMoved: (planned: Planned, made: Parameters<typeof refuseIfMoved>[3]) =>
      refuseIfMoved(file, saved, planned, made),
  };
}

/** The shims --shims gave this install, kept in the journal for later plans (a hint, no more). */
async function rememberFlagShims(store: JournalStore, shims: string[] | undefined): Promise<void> {
  const journal = await store.load();
  if (journal === null) return; // nothing of ours is installed (an uninstall's leftovers, say)
  const sorted = shims === undefined ? undefined : [...new Set(shims)].sort();
  if (JSON.stringify(journal.flagShims) === JSON.stringify(sorted)) return;
  if (sorted === undefined) delete journal.flagShims;
  else journal.flagShims = sorted;
  await store.save(journal);
}

/**
 * After an install that changed the node, ask Kata's binaries now in place for their answers and
 * keep them beside the journal, so the next no-op install starts none of them.
 */
async function rememberProbes(store: JournalStore, probes: ProbeCache, looks: DetectOptions): Promise<void> {
  if (!(await store.host.exists(store.file))) return; // nothing of ours is installed
  const renewed = probes.renewed();
  await probeInstalled(store.host, renewed, looks);
  await writeAtomically(await store.own(renewed.file, "file"), renewed.file, renewed.serialize(), {
    mode: 0o644,
    uid: process.getuid?.() ?? 0,
    gid: process.getgid?.() ?? 0,
  });
}
