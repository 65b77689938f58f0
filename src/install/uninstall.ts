// Uninstall: the journal replayed backwards. A file as kata-install left it gets the node's own
// bytes, mode and owner back (or goes, if kata-install created it); a file someone edited since is
// not clobbered: from the admin's own file only kata-install's block is taken out (and a line it
// edited there given back), and a file of ours that was edited stays; both are reported.
import fs from "node:fs";
import { hash } from "../changeset.js";
import { hostError } from "../errors.js";
import { fault } from "../host/fault.js";
import { atomicWrite, type FileMeta, readEntry, removeEmptyDirs } from "../host/fs-ops.js";
import { recover, restore } from "./apply.js";
import { blockMissing, createdOf, fateOf, originalReader, uninstallOrder } from "./fate.js";
import type { JournalStore } from "./journal.js";
import { reloadSystemd, stopUnits, unitsToStop } from "./services.js";
import { prefixOf, removeArtifacts } from "./switch.js";
import { reachedAs } from "./version-files.js";

/** What uninstall says of an entry of someone else's in a version of kata-install's. */
export function keptWhat(entry: string, prefix: string): string {
  return `not kata-install's (reached as ${reachedAs(entry, prefix)} while Kata was installed): kept there`;
}

export interface UninstallResult {
  /** Nothing was installed: there was no journal. */
  nothingInstalled: boolean;
  restored: string[];
  removed: string[];
  /** Files left as someone edited them, with what was done. */
  leftEdited: Array<{ path: string; what: string }>;
  /**
   * Runtime files the admin's edits leave unreadable: the runtime would not start on them, so it
   * is not restarted (it goes on with what it loaded before) until they are mended.
   */
  unloadable: string[];
  runtimeChanged: boolean;
  /** A restart an earlier run left owed (the runtime may not have loaded what is on disk). */
  restartOwed: boolean;
  recovered: boolean;
}

export async function uninstallFiles(store: JournalStore): Promise<UninstallResult> {
  const recovered = await recover(store);
  const journal = await store.load();
  const result: UninstallResult = {
    nothingInstalled: journal === null,
    restored: [],
    removed: [],
    leftEdited: [],
    unloadable: [],
    runtimeChanged: false,
    restartOwed: (journal?.pendingRestart ?? null) !== null,
    recovered,
  };
  if (journal === null) return result;
  // A file of the admin's whose block markers were damaged stops the uninstall before anything
  // changes: where our block ends cannot be guessed, and Kata's files must not go while the
  // runtime's configuration still names them.
  const originalOf = originalReader(store);
  for (const [path, record] of Object.entries(journal.files)) {
    if (!record.editedInPlace) continue;
    const current = await readEntry(store.host, path, false);
    if (current !== null && hash(current.bytes) !== record.afterHash)
      await blockMissing(current.bytes.toString("latin1"), path, record, originalOf);
  }
  // The units kata-install runs (nydus's) stop before their files go; systemd forgets them after.
  const units = unitsToStop(journal.files);
  await stopUnits(store.host, units);
  // Runtime files first: the runtime must stop pointing at Kata before Kata's files go.
  // The files kata-install created: an import of one of them in the admin's file goes with it.
  const created = createdOf(journal.files);
  for (const [path, record] of uninstallOrder(journal.files)) {
    const fate = await fateOf(store.host, path, record, created, originalOf);
    if (fate.kind === "back") {
      await restore(store, path, record.original);
      (record.original === "absent" ? result.removed : result.restored).push(path);
    } else {
      if (fate.aside !== undefined) await moveAside(store, path, fate.aside, fate.current);
      else if (fate.bytes !== null) await atomicWrite(store.host, path, fate.bytes, fate.current.meta);
      result.leftEdited.push({ path, what: fate.what });
      if (record.role === "runtime" && fate.what.includes("it is not valid TOML"))
        result.unloadable.push(path);
    }
    if (record.role === "runtime") result.runtimeChanged = true;
  }
  if (units.length > 0) await reloadSystemd(store.host);
  // What someone else put in a version of ours stays, with the directories that hold it.
  const prefix = prefixOf(store);
  for (const entry of await removeArtifacts(store, prefix, journal))
    result.leftEdited.push({ path: entry, what: keptWhat(entry, prefix) });
  // The journal goes last: until here, a crash leaves an uninstall that can be run again.
  await store.discard();
  const leftDirs = await removeEmptyDirs(store.host, journal.dirs);
  for (const dir of leftDirs)
    result.leftEdited.push({ path: dir, what: "a directory kata-install created, not empty: left in place" });
  return result;
}

/**
 * An edited file of ours moved to `aside`, never over something there (a hard link, then the old
 * name goes). Across file systems (conf.d on a mount of its own) it is copied whole first, bytes,
 * mode and owner, then the old name goes: a run killed in between leaves both, never neither.
 */
async function moveAside(
  store: JournalStore,
  file: string,
  aside: string,
  current: { bytes: Buffer; meta: FileMeta },
): Promise<void> {
  const from = await store.host.resolveLink(file);
  const to = await store.host.resolveLink(aside);
  try {
    try {
      fault("link", file);
      fs.linkSync(from, to);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EXDEV") throw error;
      await atomicWrite(store.host, aside, current.bytes, current.meta);
    }
    fs.unlinkSync(from);
  } catch (error) {
    throw hostError(`cannot move ${file} to ${aside}`, error);
  }
}
