// What uninstall does with one journalled file, decided in one place for the uninstall and its
// dry run: a file as kata-install left it gets the node's own back (or goes, if kata-install made
// it); a file edited since keeps the edit, with only kata-install's parts taken out.
import { isUtf8 } from "node:buffer";
import { posix } from "node:path";
import { parse } from "smol-toml";
import { hash } from "../changeset.js";
import { firstFreePath, readEntry } from "../host/fs-ops.js";
import type { Host } from "../host/host.js";
import { hasEditedKey, revertKeys } from "../render/key-edit.js";
import {
  DamagedBlockError,
  dropBlock,
  findBlock,
  otherInstalls,
  removeImports,
  strayHandlers,
} from "../render/toml-edit.js";
import { tomlErrorText } from "../toml-error.js";
import type { FileRecord, JournalStore } from "./journal.js";

type Entry = NonNullable<Awaited<ReturnType<typeof readEntry>>>;

export type Fate =
  /** As kata-install left it (or gone): its original comes back, or it goes if it had none. */
  | { kind: "back"; current: Entry | null }
  /**
   * Edited since: `bytes` is what it becomes (null: nothing of ours was in it), `what` says so;
   * `aside`: where it is moved instead, out of the runtime's reach (a runtime file kata-install
   * made: it names what uninstall removes). Bytes, not text: what is the admin's (a Latin-1
   * comment, a byte that is no UTF-8) is kept as it is, not decoded and encoded again.
   */
  | { kind: "edited"; current: Entry; bytes: Buffer | null; what: string; aside?: string };

/** The admin's file as it was before kata-install (its saved copy), for a record edited in place. */
export type OriginalOf = (record: FileRecord) => Promise<string | null>;

/**
 * `created`: the files kata-install made, whose imports in the admin's file go with them;
 * `originalOf`: the saved copy of an admin's file, to tell its tables from those an install wrote.
 */
export async function fateOf(
  host: Host,
  path: string,
  record: FileRecord,
  created: ReadonlySet<string>,
  originalOf: OriginalOf,
): Promise<Fate> {
  const current = await readEntry(host, path, record.link === true);
  if (current === null || hash(current.bytes) === record.afterHash) return { kind: "back", current };
  if (record.original === "absent" && record.role === "runtime" && record.link !== true) {
    const aside = await asidePath(host, path);
    return {
      kind: "edited",
      current,
      bytes: null,
      what: `edited after the install: moved to ${aside}, with the edit in it, out of the runtime's reach (it names Kata's files, which uninstall removes)`,
      aside,
    };
  }
  // One character a byte: kata-install's parts (its markers, keys, imports) are ASCII, found and
  // taken out of the admin's bytes without decoding them; the rest goes back byte for byte.
  const text = current.bytes.toString("latin1");
  const missing = record.editedInPlace ? await blockMissing(text, path, record, originalOf) : false;
  const given = givenBack(text, path, record, created, missing);
  return {
    kind: "edited",
    current,
    bytes: given.text === null ? null : Buffer.from(given.text, "latin1"),
    what: given.what,
  };
}

/**
 * Where an edited runtime file of kata-install's goes at uninstall: beside it under a name no
 * runtime reads (`<name>.kata-install-edited`), and out of a drop-in directory (conf.d/,
 * crio.conf.d/, config.toml.d/: a runtime may read any file there) into the one above it; a
 * name already taken gets a number.
 */
export async function asidePath(host: Host, file: string): Promise<string> {
  const dir = posix.dirname(file);
  const into = dir.endsWith(".d") ? posix.dirname(dir) : dir;
  return firstFreePath(host, `${into}/${posix.basename(file)}.kata-install-edited`);
}

/**
 * Whether the admin's file no longer holds kata-install's block at all (true), or holds it whole
 * (false). Refused (DamagedBlockError), naming the file and lines: markers damaged, or gone while
 * the handler tables they held are still there — taking out "the block" would then take out
 * nothing, and Kata's files must not go while the runtime's configuration still names them.
 */
export async function blockMissing(
  text: string,
  path: string,
  record: FileRecord,
  originalOf: OriginalOf,
): Promise<boolean> {
  if (findBlock(text, path, record.block ?? "") !== null) return false;
  const stray = strayHandlers(text, await originalOf(record));
  if (stray.length > 0)
    throw new DamagedBlockError(
      `${path}: kata-install's block markers are gone, but the runtime handlers it wrote are still there (${stray.map((h) => `${h.name} at line ${h.line}`).join(", ")}): put its markers back around them (the lines "# >>> kata-install: …" before and "# <<< kata-install" after), or remove them by hand; nothing in the file is touched until then`,
    );
  return true;
}

/** The saved copies of the admin's files, read from the journal's store. */
export function originalReader(store: JournalStore): OriginalOf {
  return async (record) => {
    const original = record.original;
    if (original === "absent" || "link" in original) return null;
    return (await store.bytesOf(original.backup)).toString("latin1");
  };
}

/** The files kata-install created, of a journal's records. */
export function createdOf(files: Record<string, FileRecord>): Set<string> {
  return new Set(
    Object.entries(files)
      .filter(([, r]) => r.original === "absent")
      .map(([p]) => p),
  );
}

/** The order uninstall takes them in: the runtime must stop pointing at Kata before Kata's files go. */
export function uninstallOrder(files: Record<string, FileRecord>): Array<[string, FileRecord]> {
  return Object.entries(files)
    .reverse()
    .sort(([, a], [, b]) => (a.role === b.role ? 0 : a.role === "runtime" ? -1 : 1));
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
  blockGone: boolean,
): { text: string | null; what: string } {
  let out = text;
  let what = "edited after the install: left in place";
  if (record.editedInPlace && blockGone) {
    what =
      "edited after the install, kata-install's block already taken out of it: nothing of kata-install's left to remove, the rest kept as it is";
  } else if (record.editedInPlace) {
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
  if (record.role === "runtime" && path.endsWith(".toml")) {
    const bytes = Buffer.from(out, "latin1");
    if (!isUtf8(bytes))
      what += "; it is not valid TOML (not UTF-8 text): the runtime will not start on it until it is fixed";
    else
      try {
        parse(bytes.toString("utf8"));
      } catch (error) {
        what += `; it is not valid TOML (${tomlErrorText(error)}): the runtime will not start on it until it is fixed`;
      }
  }
  return { text: out === text ? null : out, what };
}
