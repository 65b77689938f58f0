// What an uninstall would do, without doing it: for each journalled file, its current bytes and
// the bytes it would get back, as the same kind of change a plan shows.

import { change, type FileChange } from "../changeset.js";
import { tempOf } from "../host/fs-ops.js";
import { foreignInVersion } from "./artifacts.js";
import { createdOf, fateOf, originalReader, uninstallOrder } from "./fate.js";
import { type Journal, type JournalStore, wasCutShort } from "./journal.js";
import { recordedVersions } from "./prefix.js";
import { prefixOf } from "./switch.js";
import { keptWhat } from "./uninstall.js";

export interface UninstallPreview {
  installed: boolean;
  cutShort: boolean;
  changes: FileChange[];
  /** As the uninstall itself counts them: a file it made goes, one it changed comes back. */
  restored: string[];
  removed: string[];
  /** Files edited since the install, with what the uninstall would do to them. */
  leftEdited: Array<{ path: string; what: string }>;
  kept: string[];
  /** The directories kata-install made that would not be empty, deepest first as uninstall finds them. */
  leftDirs: string[];
  /**
   * The runtime restarted (or reloaded) afterwards, as the uninstall does: its files change, or an
   * earlier run left a restart owed. Null: none.
   */
  restart: { kind: "restart" | "reload"; target: string; owed: boolean } | null;
  /** The artifacts' version the uninstall would remove; null: none is installed. */
  artifactsVersion: string | null;
}

export async function previewUninstall(store: JournalStore): Promise<UninstallPreview> {
  const journal = await store.load();
  const preview: UninstallPreview = {
    installed: journal !== null,
    cutShort: journal !== null && wasCutShort(journal),
    changes: [],
    restored: [],
    removed: [],
    leftEdited: [],
    kept: [],
    leftDirs: [],
    restart: null,
    artifactsVersion: journal?.artifacts.version ?? null,
  };
  if (journal === null) return preview;
  // As uninstallFiles decides it: any runtime file of the journal's, or a restart owed.
  const owed = journal.pendingRestart !== null;
  const runtimeFiles = Object.values(journal.files).some((record) => record.role === "runtime");
  if (journal.runtime !== null && (runtimeFiles || owed))
    preview.restart = {
      kind: journal.runtime.action.kind === "reload-runtime" ? "reload" : "restart",
      target: journal.runtime.action.target,
      owed,
    };
  const created = createdOf(journal.files);
  for (const [path, record] of uninstallOrder(journal.files)) {
    const fate = await fateOf(store.host, path, record, created, originalReader(store));
    const text = fate.current?.bytes.toString("utf8") ?? null;
    const original = record.original;
    let after: string | null;
    let reason = "restored as it was before kata-install";
    if (fate.kind === "back") {
      after =
        original === "absent"
          ? null
          : "link" in original
            ? original.link
            : (await store.bytesOf(original.backup)).toString("utf8");
      (original === "absent" ? preview.removed : preview.restored).push(path);
    } else {
      after = fate.aside !== undefined ? null : (fate.bytes?.toString("utf8") ?? text);
      reason = fate.what;
      preview.leftEdited.push({ path, what: fate.what });
    }
    // An edited file keeps its mode; one given back gets its own.
    const mode =
      fate.kind === "edited"
        ? fate.current.meta.mode
        : original === "absent" || "link" in original
          ? 0o644
          : original.mode;
    const c = change(path, text, after, mode, reason, record.role);
    if (c) preview.changes.push(record.link ? { ...c, link: true } : c);
  }
  preview.kept = await keptEntries(store, journal);
  // What someone else put in a version of ours stays too (the uninstall says it as it goes).
  const prefix = prefixOf(store);
  for (const id of recordedVersions(journal))
    for (const entry of await foreignInVersion(store.host, prefix, id))
      preview.leftEdited.push({ path: entry, what: keptWhat(entry, prefix) });
  const staying = [...preview.kept, ...preview.leftEdited.map((l) => l.path)];
  preview.leftDirs = [...journal.dirs]
    .sort((a, b) => b.length - a.length)
    .filter((dir) => staying.some((entry) => entry.startsWith(`${dir}/`)));
  return preview;
}

/**
 * What is not kata-install's in the directories it made (an admin's drop-in in a shim's
 * config.d/, say): uninstall leaves it, and with it the directory that holds it.
 */
async function keptEntries(store: JournalStore, journal: Journal): Promise<string[]> {
  const prefix = prefixOf(store);
  const ours = new Set([
    ...Object.keys(journal.files),
    ...journal.dirs,
    ...journal.artifacts.links,
    `${prefix}/current`,
    store.dir,
    ...[...recordedVersions(journal)].map((id) => `${prefix}/versions/${id}`),
    ...(journal.staging ? [journal.staging.dir] : []),
  ]);
  const kept: string[] = [];
  for (const dir of journal.dirs) {
    // The journal's own directory goes with the journal (its copies, its probe cache).
    if (dir === store.dir || dir.startsWith(`${store.dir}/`)) continue;
    const listing = await store.host.readDir(dir);
    if (!listing.ok) continue;
    for (const name of listing.entries) {
      const entry = `${dir}/${name}`;
      // A temp file or directory a killed run of ours left: recovery's, not the admin's.
      if (!ours.has(entry) && tempOf(name) === null && !name.startsWith(".kata-install-")) kept.push(entry);
    }
  }
  return kept.sort();
}
