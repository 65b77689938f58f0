// The install stage: artifacts into place, then the plan's files (Kata's, then the runtime's), then
// the runtime restarted if a file it reads changed. It does what the plan showed and nothing else;
// the caller has taken the lock and rolled back any cut-short run before planning.

import { loadArtifactCatalogue } from "../artifacts/catalogue.js";
import type { Catalog } from "../decide/catalog.js";
import type { Decision } from "../decide/decision.js";
import type { Facts } from "../detect/facts.js";
import { UserError } from "../errors.js";
import type { Host } from "../host/host.js";
import type { Changeset, PlanAction } from "../render/changeset.js";
import { installDir } from "../render/layout.js";
import { type ApplyResult, applyChanges, recover } from "./apply.js";
import type { ArtifactSource } from "./artifacts.js";
import { JournalStore } from "./journal.js";
import { restartRuntime } from "./runtime.js";
import { commitSwitch, installArtifacts, openJournal, type SwitchResult } from "./switch.js";
import { describeFailures, findFailures, namedPaths, nodeWorld, transferOf } from "./verify.js";

export interface InstallReport {
  artifacts: SwitchResult;
  /** Bytes of the artifacts this node needed, against the whole release in the source. */
  pulled: { bytes: number; releaseBytes: number; images: number; releaseImages: number } | null;
  files: ApplyResult;
  restarted: PlanAction | null;
}

export function journalFor(host: Host, prefix: string): JournalStore {
  return new JournalStore(host, `${prefix}/.install`);
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
  // Artifacts first: no configuration may name a file that is not there yet.
  const artifacts =
    source && pulls.length > 0
      ? await installArtifacts(store, prefix, source, names)
      : { staged: null, switched: false, repaired: 0 };
  // Before anything is committed, the node itself is checked: every path the configurations name
  // is there. If not, the whole run is rolled back (files, then the switch) and the error stands.
  const verify = async () => {
    const { paths, problems } = await namedPaths(host, decision, changeset, planned.catalog);
    const failures = await findFailures(paths, nodeWorld(host));
    if (failures.length > 0 || problems.length > 0)
      throw new UserError(
        `after the install, ${[...problems, describeFailures(failures)].filter(Boolean).join("; ")}: everything this run changed was rolled back`,
      );
  };
  const action =
    changeset.actions.find((a) => a.kind === "restart-runtime" || a.kind === "reload-runtime") ?? null;
  // How to restart the runtime is journalled before its files change, so an uninstall after a
  // crash at any later point still knows.
  const socket = facts.runtime.socket?.path ?? null;
  if (action && changeset.changes.some((c) => c.role === "runtime")) {
    const journal = await openJournal(store);
    journal.runtime = { action, socket };
    await store.save(journal);
  }
  let files: ApplyResult;
  try {
    files = await applyChanges(store, changeset.changes, {
      withSwitch: artifacts.switched,
      beforeCommit: decision.shims.length > 0 ? verify : undefined,
    });
    if (changeset.changes.length === 0 && artifacts.switched) {
      // Artifacts alone changed (a new release, same configuration): checked, then committed.
      if (decision.shims.length > 0) await verify();
    }
  } catch (error) {
    if (artifacts.switched) await recover(store);
    throw error;
  }
  if (artifacts.switched) await commitSwitch(store, prefix);
  let pulled: InstallReport["pulled"] = null;
  if (source && artifacts.switched)
    pulled = await transferOf(source, names, [...loadArtifactCatalogue().keys()]);
  if (files.runtimeChanged && action) await restartRuntime(host, action, socket, answerTimeoutMs);
  return { artifacts, pulled, files, restarted: files.runtimeChanged ? action : null };
}
