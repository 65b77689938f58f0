// What an uninstall would do, without doing it: for each journalled file, its current bytes and
// the bytes it would get back, as the same kind of change a plan shows.
import { change, type FileChange, hash } from "../render/changeset.js";
import { dropBlock } from "../render/toml-edit.js";
import { readEntry, tempOf } from "./fs-ops.js";
import { type Journal, type JournalStore, wasCutShort } from "./journal.js";
import { recordedVersions } from "./prefix.js";
import { prefixOf } from "./switch.js";

export async function previewUninstall(
  store: JournalStore,
): Promise<{ installed: boolean; cutShort: boolean; changes: FileChange[]; kept: string[] }> {
  const journal = await store.load();
  if (journal === null) return { installed: false, cutShort: false, changes: [], kept: [] };
  const changes: FileChange[] = [];
  for (const [path, record] of Object.entries(journal.files)) {
    const current = await readEntry(store.host, path, record.link === true);
    const text = current?.bytes.toString("utf8") ?? null;
    let after: string | null;
    if (current === null || hash(current.bytes) === record.afterHash) {
      const original = record.original;
      after =
        original === "absent"
          ? null
          : "link" in original
            ? original.link
            : (await store.bytesOf(original.backup)).toString("utf8");
    } else if (record.editedInPlace && text !== null) after = dropBlock(text, path, record.block ?? "");
    else after = text;
    const original = record.original;
    const c = change(
      path,
      text,
      after,
      original === "absent" || "link" in original ? 0o644 : original.mode,
      "restored as it was before kata-install",
      record.role,
    );
    if (c) changes.push(record.link ? { ...c, link: true } : c);
  }
  return {
    installed: true,
    cutShort: wasCutShort(journal),
    changes,
    kept: await keptEntries(store, journal),
  };
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
