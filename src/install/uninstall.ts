// Uninstall: the journal replayed backwards. A file as kata-install left it gets the node's own
// bytes, mode and owner back (or goes, if kata-install created it); a file someone edited since is
// not clobbered: from the admin's own file only kata-install's block is taken out (and a line it
// edited there given back), and a file of ours that was edited stays; both are reported.
import { parse } from "smol-toml";
import { tomlErrorText } from "../detect/toml.js";
import { hash } from "../render/changeset.js";
import { hasEditedKey, revertKeys } from "../render/key-edit.js";
import { dropBlock, findBlock, otherInstalls, removeImports } from "../render/toml-edit.js";
import { recover, restore } from "./apply.js";
import { atomicWrite, readEntry, removeEmptyDirs } from "./fs-ops.js";
import type { FileRecord, JournalStore } from "./journal.js";
import { reloadSystemd, stopUnits, unitsToStop } from "./services.js";
import { prefixOf, removeArtifacts } from "./switch.js";

export interface UninstallResult {
  /** Nothing was installed: there was no journal. */
  nothingInstalled: boolean;
  restored: string[];
  removed: string[];
  /** Files left as someone edited them, with what was done. */
  leftEdited: Array<{ path: string; what: string }>;
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
    runtimeChanged: false,
    restartOwed: (journal?.pendingRestart ?? null) !== null,
    recovered,
  };
  if (journal === null) return result;
  // A file of the admin's whose block markers were damaged stops the uninstall before anything
  // changes: where our block ends cannot be guessed, and Kata's files must not go while the
  // runtime's configuration still names them.
  for (const [path, record] of Object.entries(journal.files)) {
    if (!record.editedInPlace) continue;
    const current = await readEntry(store.host, path, false);
    if (current !== null && hash(current.bytes) !== record.afterHash)
      findBlock(current.bytes.toString("utf8"), path);
  }
  // The units kata-install runs (nydus's) stop before their files go; systemd forgets them after.
  const units = unitsToStop(journal.files);
  await stopUnits(store.host, units);
  // Runtime files first: the runtime must stop pointing at Kata before Kata's files go.
  // The files kata-install created: an import of one of them in the admin's file goes with it.
  const created = new Set(
    Object.entries(journal.files)
      .filter(([, r]) => r.original === "absent")
      .map(([p]) => p),
  );
  const entries = Object.entries(journal.files)
    .reverse()
    .sort(([, a], [, b]) => (a.role === b.role ? 0 : a.role === "runtime" ? -1 : 1));
  for (const [path, record] of entries) {
    const current = await readEntry(store.host, path, record.link === true);
    const untouched = current !== null && hash(current.bytes) === record.afterHash;
    if (untouched || current === null) {
      await restore(store, path, record.original);
      (record.original === "absent" ? result.removed : result.restored).push(path);
    } else {
      const edited = givenBack(current.bytes.toString("utf8"), path, record, created);
      if (edited.text !== null) await atomicWrite(store.host, path, edited.text, current.meta);
      result.leftEdited.push({ path, what: edited.what });
    }
    if (record.role === "runtime") result.runtimeChanged = true;
  }
  if (units.length > 0) await reloadSystemd(store.host);
  await removeArtifacts(store, prefixOf(store), journal);
  // The journal goes last: until here, a crash leaves an uninstall that can be run again.
  await store.discard();
  const leftDirs = await removeEmptyDirs(store.host, journal.dirs);
  for (const dir of leftDirs)
    result.leftEdited.push({ path: dir, what: "a directory kata-install created, not empty: left in place" });
  return result;
}

/**
 * A file someone edited since the install, with kata-install's parts taken out and the rest kept:
 * from the admin's own file its block and the line it edited (handed to another install still
 * there), from containerd's main file its imports of kata-install's drop-ins, which would keep
 * containerd from starting once they are gone. Null text: nothing of kata-install's was in it.
 */
function givenBack(
  text: string,
  path: string,
  record: FileRecord,
  created: ReadonlySet<string>,
): { text: string | null; what: string } {
  let out = text;
  let what = "edited after the install: left in place";
  if (record.editedInPlace) {
    const suffix = record.block ?? "";
    const rest = dropBlock(text, path, suffix);
    const heir = otherInstalls(rest, suffix)[0] ?? null;
    out = revertKeys(rest, suffix, heir);
    what = !hasEditedKey(text, suffix)
      ? "edited after the install: only kata-install's block was removed, the rest kept as it is"
      : heir === null
        ? "edited after the install: only kata-install's block was removed and the line it edited given back, the rest kept as it is"
        : `edited after the install: only kata-install's block was removed, and the line it edited left to the install still there (${heir === "" ? "the default one" : `MULTI_INSTALL_SUFFIX=${heir}`}), the rest kept as it is`;
  } else if (record.role === "runtime" && record.original !== "absent") {
    out = removeImports(text, (entry) => created.has(entry));
    if (out !== text)
      what = "edited after the install: only kata-install's imports were removed, the rest kept as it is";
  }
  // The admin's edit may have left the file unreadable: the runtime will not start on it either.
  if (record.role === "runtime" && path.endsWith(".toml"))
    try {
      parse(out);
    } catch (error) {
      what += `; it is not valid TOML (${tomlErrorText(error)}): the runtime will not start on it until it is fixed`;
    }
  return { text: out === text ? null : out, what };
}
