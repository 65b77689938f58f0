// The install stage: artifacts into place, then the plan's files (Kata's, then the runtime's), then
// the runtime restarted if a file it reads changed. It does what the plan showed and nothing else;
// the caller has taken the lock and rolled back any cut-short run before planning.

import { loadArtifactCatalogue } from "../artifacts/catalogue.js";
import type { ArtifactSource } from "../artifacts/source.js";
import type { Changeset, PlanAction } from "../changeset.js";
import type { Catalog } from "../decide/catalog.js";
import type { Decision } from "../decide/decision.js";
import { handlersFor, installDir } from "../decide/layout.js";
import type { Facts } from "../detect/facts.js";
import { UserError } from "../errors.js";
import { crashPoint } from "../host/crash-point.js";
import type { Host } from "../host/host.js";
import { type ApplyResult, applyChanges, recover, refuseMoved } from "./apply.js";
import { type JournalStore, journalFor } from "./journal.js";
import { RollbackFailed, rollBack } from "./rollback.js";
import { restartRuntime, type Served } from "./runtime.js";
import { runServices } from "./services.js";
import {
  commitSwitch,
  discardIfEmpty,
  installArtifacts,
  openJournal,
  removeRetired,
  type SwitchResult,
} from "./switch.js";
import { deployTree } from "./takeover-tree.js";
import {
  describeFailures,
  findFailures,
  keptOnTakeover,
  namedPaths,
  nodeWorld,
  refusedOf,
  type Transfer,
  transferOf,
  wasTakenOver,
} from "./verify.js";

export interface InstallReport {
  artifacts: SwitchResult;
  /** Bytes of the artifacts this node needed, against the whole release in the source. */
  pulled: Transfer | null;
  files: ApplyResult;
  restarted: PlanAction | null;
  /** What the runtime was seen to serve after that restart. */
  served: Served;
  /** What was not kata-install's in the version switched from: left where it is (host paths). */
  kept: string[];
}

export async function install(
  host: Host,
  planned: { decision: Decision; facts: Facts; changeset: Changeset; catalog: Catalog },
  source: ArtifactSource | null,
  answerTimeoutMs?: number,
): Promise<InstallReport> {
  const { decision, facts, changeset } = planned;
  const prefix = installDir(decision);
  const store = journalFor(host, prefix);
  const pulls = changeset.actions.filter((a) => a.kind === "pull-artifact").map((a) => a.target);
  if (pulls.length > 0 && source === null) {
    throw new UserError(
      `artifacts to install: ${pulls.join(", ")}; say where from with --artifacts registry:HOST/REPOSITORY, oci-layout:DIR or dir:DIR`,
    );
  }
  const names = decision.artifacts.filter((a) => a.from === "bundled").map((a) => a.name);
  const takingOver = changeset.actions.some((a) => a.kind === "take-over");
  const action =
    changeset.actions.find((a) => a.kind === "restart-runtime" || a.kind === "reload-runtime") ?? null;
  const socket = facts.runtime.socket?.path ?? null;
  // Before anything is committed, the node itself is checked: every path the configurations name
  // is there. If not, the whole run is rolled back (files, then the switch) and the error stands.
  const verify = async () => {
    if (decision.shims.length === 0) return;
    const {
      paths,
      problems: missing,
      configs,
    } = await namedPaths(host, decision, changeset, planned.catalog);
    const problems = [...missing, ...refusedOf(configs)];
    // What a takeover keeps as kata-deploy had it (the plan said so) is no failure here either.
    const failures = keptOnTakeover(
      await findFailures(paths, nodeWorld(host)),
      decision,
      changeset,
      wasTakenOver(facts),
    ).rest;
    if (failures.length > 0 || problems.length > 0)
      throw new UserError(
        `after the install, ${[...problems, describeFailures(failures)].filter(Boolean).join("; ")}: everything this run changed was rolled back`,
      );
  };
  // The runtime loads the new files before they are committed: if it does not come back, they are
  // rolled back and it is restarted on what it had (see rollBackRestart).
  const restart = async (runtimeChanged: boolean) => {
    if (!action || !runtimeChanged) return;
    const journal = await store.load();
    if (journal?.transaction) {
      journal.transaction.restarting = true;
      await store.save(journal);
    }
    crashPoint("restart:before");
    // Served once restarted: every handler this plan wrote (and CRI itself, and its default runtime).
    const handlers = handlersFor(decision, planned.catalog).map((h) => h.name);
    served = await restartRuntime(host, action, socket, answerTimeoutMs, { handlers }).catch(
      (error: Error) => {
        throw new RestartFailed(error.message, action.target);
      },
    );
    crashPoint("restart:after");
  };
  let served: Served = "not-asked";
  let artifacts: SwitchResult = { staged: null, switched: false, repaired: 0 };
  let files: ApplyResult = { written: [], removed: [], setAside: [], runtimeChanged: false };
  // The node as the plan found it, or nothing is written (not even the artifacts). A takeover
  // plans the prefix's files as new: kata-deploy's there are moved aside first.
  const takeOver = changeset.actions.some((a) => a.kind === "take-over");
  await refuseMoved(
    store,
    changeset.changes.filter((c) => !takeOver || !c.path.startsWith(`${prefix}/`)),
  );
  // The version this install switches away from: what an upgrade takes unchanged artifacts from.
  let previousVersion: string | null = null;
  try {
    // Artifacts first: no configuration may name a file that is not there yet.
    if (source && pulls.length > 0) {
      previousVersion = (await store.load())?.artifacts.version ?? null;
      // kata-deploy's tree sorted into its own entries and someone else's, which are kept.
      const tree = takeOver ? await deployTree(host, prefix, source, names) : null;
      artifacts = await installArtifacts(store, prefix, source, names, tree ? { takeOver: tree } : {});
    }
    // A takeover: what kata-deploy served and wrote is kept with the install, for every later plan.
    const deploy = facts.kata.deploy;
    if (takingOver && deploy !== undefined) {
      const journal = await openJournal(store);
      journal.carried = {
        shims: deploy.shims,
        settings: deploy.settings ?? [],
        ...(deploy.customRuntimes ? { customRuntimes: deploy.customRuntimes } : {}),
      };
      await store.save(journal);
    }
    // How to restart the runtime is journalled before its files change, so an uninstall after a
    // crash at any later point still knows.
    if (action && changeset.changes.some((c) => c.role === "runtime")) {
      const journal = await openJournal(store);
      journal.runtime = { action, socket };
      await store.save(journal);
    }
    files = await applyChanges(store, changeset.changes, {
      withSwitch: artifacts.switched,
      beforeCommit: async (done) => {
        await verify();
        // nydus's unit on its new files before the runtime loads the proxy plugin naming it.
        crashPoint("services:before");
        await runServices(store, changeset.actions);
        crashPoint("services:after");
        await restart(done.runtimeChanged);
      },
    });
    // Artifacts alone changed (a new release, same configuration): checked, then committed.
    if (changeset.changes.length === 0 && artifacts.switched) await verify();
  } catch (error) {
    // Whatever failed, the node goes back to where this run found it (recover is a no-op when
    // applyChanges has done it already), and the runtime back to the files it had. A rollback
    // that could not finish has been said already, with what it left.
    if (error instanceof RollbackFailed) throw error;
    let owed: string | null = null;
    let back: RestartBack = "none";
    try {
      await rollBack(
        () => recover(store),
        error,
        async () => {
          back = await rollBackRestart(store, host, socket, answerTimeoutMs);
          // A takeover undone leaves kata-deploy's node as it was, with no journal of ours.
          if (takingOver) owed = await forgetTakeover(store);
        },
      );
    } catch (cause) {
      // The runtime that failed its restart: what it runs on now, and what is still owed, said.
      const said =
        cause === error && error instanceof RestartFailed && owed === null
          ? new UserError(`${error.message}. ${afterFailedRestart(error.target, back, store)}`)
          : cause;
      if (owed === null) throw said;
      throw new UserError(`${(said as Error).message}; ${owed}`);
    }
  }
  // What someone else put in the version switched from stays there (src/install/version-files.ts).
  let kept: string[] = [];
  if (artifacts.switched) kept = await commitSwitch(store, prefix);
  else {
    // An earlier run committed its switch and was cut short before removing the version it
    // switched from (or the tree it took over): the journal holds them as retired, ours to remove.
    const journal = await store.load();
    if (journal !== null) kept = await removeRetired(store, prefix, journal);
  }
  // A restart that an earlier run left undone (it failed, or was cut short), with nothing to
  // change now: done, and the journal no longer says it is owed.
  const owed = (await store.load())?.pendingRestart ?? null;
  let restarted = files.runtimeChanged ? action : null;
  if (owed !== null) {
    if (restarted === null) {
      served = await restartRuntime(host, owed, socket, answerTimeoutMs, {
        handlers: handlersFor(decision, planned.catalog).map((h) => h.name),
      });
      restarted = owed;
    }
    await clearPendingRestart(store);
  }
  let pulled: InstallReport["pulled"] = null;
  if (source && artifacts.switched)
    pulled = await transferOf(source, names, [...loadArtifactCatalogue().keys()], {
      version: previousVersion,
      artifacts: new Set(artifacts.staged?.reused ?? []),
    });
  return { artifacts, pulled, files, restarted, served, kept };
}

/**
 * A takeover rolled back: kata-deploy's install is whole again, and a journal of kata-install's
 * would make the next run take the node for kata-install's. Discarded when it records nothing else
 * — a restart still owed included, which is said instead: the one command that gets out of it.
 */
async function forgetTakeover(store: JournalStore): Promise<string | null> {
  const journal = await store.load();
  if (journal === null) return null;
  const owed = journal.pendingRestart ?? null;
  journal.pendingRestart = null;
  delete journal.carried;
  if (!(await discardIfEmpty(store, journal))) return null;
  return owed === null
    ? null
    : `the runtime did not answer on its configuration put back either: restart it (${owed.target}), then run kata-install install again to take the node over`;
}

/**
 * After a rollback of files the runtime may have loaded: restart it on the files it has again. If
 * that fails too, the journal keeps saying a restart is owed (the plan shows it, the next install
 * does it), and the error of this run stands.
 */
async function rollBackRestart(
  store: JournalStore,
  host: Host,
  socket: string | null,
  answerTimeoutMs?: number,
): Promise<RestartBack> {
  const owed = (await store.load())?.pendingRestart ?? null;
  if (owed === null) return "none";
  try {
    // The files as they were: they need serve no more than they did before this run.
    await restartRuntime(host, owed, socket, answerTimeoutMs, null);
    await clearPendingRestart(store);
    return "answers";
  } catch {
    // Left owed, on purpose: said by the plan, done by the next install.
    return "owed";
  }
}

/** The runtime's restart on its old files after a rollback: not needed, it answered, or still owed. */
type RestartBack = "none" | "answers" | "owed";

/** The runtime's restart (or its answer after it) failed: the files it had are put back. */
class RestartFailed extends UserError {
  constructor(
    message: string,
    readonly target: string,
  ) {
    super(message);
  }
}

/** After a failed restart and the rollback: where the node and its runtime are, and what is owed. */
function afterFailedRestart(target: string, back: RestartBack, store: JournalStore): string {
  const root = store.host.root === "/" ? "" : ` --host-root ${store.host.root}`;
  const rolled = `Everything this run changed was rolled back: ${target}'s configuration and Kata's files are as they were before it`;
  if (back === "answers")
    return `${rolled}, and ${target} was restarted on them and answers. Find why it did not come back on the new one (\`journalctl -u ${target}\`), then install again.`;
  if (back === "owed")
    return `${rolled}; ${target} was restarted on them too and did not answer either, so it may still run on the configuration that was rolled back. A restart of ${target} is still owed: \`kata-install plan${root}\` shows it, and the next \`kata-install install${root}\` does it (or restart ${target} yourself once it is mended).`;
  return `${rolled}.`;
}

async function clearPendingRestart(store: JournalStore): Promise<void> {
  const journal = await store.load();
  if (journal === null || (journal.pendingRestart ?? null) === null) return;
  journal.pendingRestart = null;
  if (!(await discardIfEmpty(store, journal))) await store.save(journal);
}
