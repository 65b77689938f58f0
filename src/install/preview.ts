// What an uninstall would do, without doing it: for each journalled file, its current bytes and
// the bytes it would get back, as the same kind of change a plan shows.
import { change, type FileChange, hash } from "../render/changeset.js";
import { dropBlock } from "../render/toml-edit.js";
import { readEntry } from "./fs-ops.js";
import { type JournalStore, wasCutShort } from "./journal.js";

export async function previewUninstall(
  store: JournalStore,
): Promise<{ installed: boolean; cutShort: boolean; changes: FileChange[] }> {
  const journal = await store.load();
  if (journal === null) return { installed: false, cutShort: false, changes: [] };
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
  };
}
