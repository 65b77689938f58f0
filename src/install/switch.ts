// Artifacts into place as a journalled step: stage the version, then switch `current` to it and
// create the links, recording beforehand what to put back if the switch is cut short.
import fs from "node:fs";
import {
  type ArtifactSource,
  collectFiles,
  createLinks,
  missingLinks,
  removeOtherVersions,
  type Staged,
  stageVersion,
  switchCurrent,
} from "./artifacts.js";
import { ensureParents, removeEmptyDirs } from "./fs-ops.js";
import { emptyJournal, type Journal, type JournalStore } from "./journal.js";

export interface SwitchResult {
  staged: Staged | null;
  switched: boolean;
}

function crashPoint(name: string): void {
  if (process.env.KATA_INSTALL_CRASH_AT === name) process.kill(process.pid, "SIGKILL");
}

/** The journal, created (with the directories it needs, recorded) when there is none yet. */
export async function openJournal(store: JournalStore): Promise<Journal> {
  const journal = await store.load();
  if (journal !== null) return journal;
  const fresh = emptyJournal();
  fresh.dirs.push(...(await ensureParents(store.host, store.file)));
  return fresh;
}

export async function installArtifacts(
  store: JournalStore,
  prefix: string,
  source: ArtifactSource,
  names: string[],
): Promise<SwitchResult> {
  // Read and check everything before the node is touched: a refused artifact writes nothing.
  const files = await collectFiles(source, names);
  const journal = await openJournal(store);
  if (names.length === 0 && journal.artifacts.version === null) return { staged: null, switched: false };
  const staged = await stageVersion(store.host, prefix, files);
  if (staged.id === journal.artifacts.version) return { staged, switched: false };
  // What the switch will create is journalled before it exists, so a cut-short switch is undone whole.
  const { links, dirs } = await missingLinks(store.host, prefix);
  journal.pendingSwitch = {
    previous: journal.artifacts.version,
    previousNames: journal.artifacts.names,
    next: staged.id,
    createdLinks: links,
    createdDirs: dirs,
  };
  await store.save(journal);
  crashPoint("switch:before");
  await switchCurrent(store.host, prefix, staged.id);
  await createLinks(store.host, prefix, links);
  journal.dirs.push(...dirs);
  journal.artifacts = {
    version: staged.id,
    names: [...names].sort(),
    links: [...journal.artifacts.links, ...links],
  };
  journal.pendingSwitch = null;
  await store.save(journal);
  crashPoint("switch:after");
  // The old version goes only now: VMs started from it keep their open files until they stop.
  await removeOtherVersions(store.host, prefix, staged.id);
  return { staged, switched: true };
}

/** Put back what a cut-short switch changed; true when there was one. */
export async function recoverSwitch(store: JournalStore, prefix: string, journal: Journal): Promise<boolean> {
  const pending = journal.pendingSwitch;
  if (pending === null) return false;
  await switchCurrent(store.host, prefix, pending.previous);
  for (const link of pending.createdLinks) fs.rmSync(await store.host.resolveLink(link), { force: true });
  await removeEmptyDirs(store.host, pending.createdDirs);
  if (pending.next !== pending.previous)
    fs.rmSync(await store.host.resolve(`${prefix}/versions/${pending.next}`), {
      recursive: true,
      force: true,
    });
  journal.pendingSwitch = null;
  return true;
}

/** Uninstall's part: links, `current` and every version go. */
export async function removeArtifacts(store: JournalStore, prefix: string, journal: Journal): Promise<void> {
  for (const link of journal.artifacts.links) fs.rmSync(await store.host.resolveLink(link), { force: true });
  await switchCurrent(store.host, prefix, null);
  fs.rmSync(await store.host.resolve(`${prefix}/versions`), { recursive: true, force: true });
}

export function prefixOf(store: JournalStore): string {
  return store.dir.replace(/\/\.install$/, "");
}
