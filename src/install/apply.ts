// Apply a Changeset's files as one transaction: every step is journalled before it is taken, so a
// run cut short at any point is rolled back by the next one (recover()), and the node is either as
// it was or as the plan wants it, never something between. Kata's own files are written before the
// runtime's, so the runtime never points at a configuration that is not there yet.

import { isUtf8 } from "node:buffer";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { type FileChange, hash } from "../changeset.js";
import { HostError, UserError } from "../errors.js";
import { crashPoint } from "../host/crash-point.js";
import {
  atomicLink,
  atomicWrite,
  ensureParents,
  type FileMeta,
  MAX_FILE_BYTES,
  missingDirs,
  readEntry,
  removeEmptyDirs,
  removeFile,
  removeLeftoverTemps,
  removeUnbornDirs,
} from "../host/fs-ops.js";
import { MAX_TEXT_BYTES, NOT_UTF8, tooLarge } from "../host/host.js";
import { readInput } from "../input-file.js";
import { hasBlock } from "../render/toml-edit.js";
import { asidePath } from "./fate.js";
import { backupOf, type Journal, type JournalStore, type Saved, wasCutShort } from "./journal.js";
import { guardOwnPlaces } from "./place-guard.js";
import { type Left, RollbackIncomplete, rollBack } from "./rollback.js";
import { servicesAfterRollback } from "./services.js";
import { discardIfEmpty, openJournal, prefixOf, recoverStaging, recoverSwitch, retire } from "./switch.js";

export interface ApplyResult {
  written: string[];
  removed: string[];
  /** Runtime files of ours the admin edited, set aside before they went (asidePath). */
  setAside: Array<{ path: string; to: string }>;
  /** Whether a file the container runtime reads changed. */
  runtimeChanged: boolean;
}

/**
 * Test hook: KATA_INSTALL_CRASH_AT names a point ("step:2:before-write", "commit", …) at which
 * the process kills itself, as a power cut or kill -9 would. Only the crash-safety tests set it.
 */

/** The node moved on since the plan was made: nothing of this plan is left applied. */
export class StalePlanError extends UserError {}

/**
 * Apply `changes`, which must have been planned after recover(): a plan made while a cut-short
 * transaction was still on the node would not know what its rollback changes.
 */
export interface ApplyOptions {
  /** A switch of artifacts made by this same run: committed with the files, or rolled back with them. */
  withSwitch?: boolean;
  /** Run before the commit; if it throws, everything this run did is rolled back and the error stands. */
  beforeCommit?: (done: ApplyResult) => Promise<void>;
}

export async function applyChanges(
  store: JournalStore,
  changes: FileChange[],
  options: ApplyOptions = {},
): Promise<ApplyResult> {
  const result: ApplyResult = { written: [], removed: [], setAside: [], runtimeChanged: false };
  if (changes.length === 0) return result;
  const journal = await openJournal(store);
  if (journal.transaction || (journal.pendingSwitch && !options.withSwitch)) {
    throw new StalePlanError(
      `an earlier install was cut short (${store.file}): roll it back (recover) and plan again`,
    );
  }
  const ordered = [
    ...changes.filter((c) => c.role === "kata"),
    ...changes.filter((c) => c.role === "runtime"),
  ];

  journal.transaction = {
    id: randomUUID(),
    before: { files: structuredClone(journal.files), dirs: [...journal.dirs] },
    steps: [],
  };
  await store.save(journal);
  crashPoint("begin");

  for (const [i, c] of ordered.entries()) {
    const current = await readEntry(store.host, c.path, c.link === true);
    const moved = movedSincePlan(c, current);
    if (moved !== null) await rollBack(() => recover(store), moved);
    const pre: Saved =
      current === null
        ? "absent"
        : c.link
          ? { link: current.bytes.toString("utf8") }
          : { backup: await store.keep("txn", current.bytes), ...current.meta };
    // The directories the write will make are journalled before they exist: a kill between making
    // them and the next save must not leave them behind.
    const createdDirs = c.after === null ? [] : await missingDirs(store.host, path.posix.dirname(c.path));
    const step = { path: c.path, pre, createdDirs };
    journal.transaction.steps.push(step);
    journal.dirs.push(...createdDirs);
    if (journal.files[c.path] === undefined && c.after !== null) {
      // What uninstall restores: the current bytes, or (a takeover) the node's own without
      // another installer's parts.
      const own =
        c.restore === undefined
          ? (current?.bytes ?? null)
          : c.restore === null
            ? null
            : Buffer.from(c.restore);
      journal.files[c.path] = {
        original:
          current === null || own === null
            ? "absent"
            : c.link
              ? { link: own.toString("utf8") }
              : { backup: await store.keep("original", own), ...current.meta },
        afterHash: "",
        editedInPlace: !c.link && current !== null && hasBlock(c.after),
        ...(c.block ? { block: c.block } : {}),
        role: c.role,
        ...(c.link ? { link: true } : {}),
      };
    } else if (journal.files[c.path] === undefined && c.after === null && current !== null) {
      // A file of the node's that goes (kata-deploy's drop-in left without its install): uninstall
      // puts it back as it was. A takeover's deletions say restore: null, and are not recorded.
      if (c.restore === undefined)
        journal.files[c.path] = {
          original: c.link
            ? { link: current.bytes.toString("utf8") }
            : { backup: await store.keep("original", current.bytes), ...current.meta },
          afterHash: "",
          editedInPlace: false,
          role: c.role,
          ...(c.link ? { link: true } : {}),
        };
    } else if (c.after !== null && typeof c.restore === "string" && current !== null && !c.link) {
      const record = journal.files[c.path];
      // The admin's file, edited since kata-install last wrote it (between two installs): what
      // uninstall gives back is now their file as it is, without kata-install's parts — the copy
      // from before the first install would take their edit away.
      if (record !== undefined && record.original !== "absent" && hash(current.bytes) !== record.afterHash)
        record.original = { backup: await store.keep("original", Buffer.from(c.restore)), ...current.meta };
    }
    await store.save(journal);
    crashPoint(`step:${i}:before-write`);

    if (c.after === null) {
      // A runtime file of ours the admin edited since (the copied user drop-in, say) is set aside
      // as uninstall sets it aside, out of the runtime's reach, never deleted with their edit. The
      // copy is a step of its own, so a rollback removes it again.
      const record = journal.files[c.path];
      if (
        record?.original === "absent" &&
        record.role === "runtime" &&
        record.link !== true &&
        current !== null &&
        record.afterHash !== "" &&
        hash(current.bytes) !== record.afterHash
      ) {
        const aside = await asidePath(store.host, c.path);
        journal.transaction.steps.push({ path: aside, pre: "absent", createdDirs: [] });
        await store.save(journal);
        await atomicWrite(store.host, aside, current.bytes, current.meta);
        result.setAside.push({ path: c.path, to: aside });
      }
      await removeFile(store.host, c.path);
      result.removed.push(c.path);
      // A file of ours that goes leaves nothing to restore; one that was the node's stays recorded.
      if (journal.files[c.path]?.original === "absent") delete journal.files[c.path];
    } else if (c.link) {
      await ensureParents(store.host, c.path);
      await atomicLink(store.host, c.path, c.after);
      const record = journal.files[c.path];
      if (record) record.afterHash = hash(c.after);
      result.written.push(c.path);
    } else {
      await ensureParents(store.host, c.path);
      const meta: FileMeta = current?.meta ?? {
        mode: c.mode,
        uid: process.getuid?.() ?? 0,
        gid: process.getgid?.() ?? 0,
      };
      const bytes = c.blob ? blobBytes(c.path, c.blob) : c.after;
      await atomicWrite(store.host, c.path, bytes, meta);
      const record = journal.files[c.path];
      if (record) record.afterHash = c.blob ? c.blob.sha256 : hash(c.after);
      result.written.push(c.path);
    }
    if (c.role === "runtime") result.runtimeChanged = true;
    await store.save(journal);
    crashPoint(`step:${i}:after-write`);
  }

  crashPoint("before-commit");
  if (options.beforeCommit) {
    try {
      await options.beforeCommit(result);
    } catch (error) {
      await rollBack(() => recover(store), error);
    }
  }
  // One save commits the files and the switch made for them.
  journal.transaction = null;
  retire(journal);
  await store.save(journal);
  await discardTxnCopies(store);
  // Removed from the disk first, then from the journal: a kill between leaves names uninstall skips.
  if (await removeIdleDirs(store, journal, result.removed)) await store.save(journal);
  crashPoint("after-commit");
  return result;
}

/**
 * The directories an earlier install made for files this one removed (nydus's, once it is no longer
 * asked for), when nothing the journal records is under them and they are empty: they go now, not
 * at uninstall. Whether anything was removed (the journal then lists fewer directories).
 */
async function removeIdleDirs(store: JournalStore, journal: Journal, removed: string[]): Promise<boolean> {
  const recorded = Object.keys(journal.files);
  const idle = new Set<string>();
  for (const file of removed)
    for (
      let dir = path.posix.dirname(file);
      dir !== "/" && journal.dirs.includes(dir);
      dir = path.posix.dirname(dir)
    )
      if (!recorded.some((f) => f.startsWith(`${dir}/`))) idle.add(dir);
  if (idle.size === 0) return false;
  const left = new Set(await removeEmptyDirs(store.host, [...idle]));
  const before = journal.dirs.length;
  journal.dirs = journal.dirs.filter((d) => !idle.has(d) || left.has(d));
  return journal.dirs.length < before;
}

/**
 * A binary's bytes, read from kata-install's own file system (kata-deploy's image) as the plan
 * hashed them: bytes that changed since are refused, and the transaction rolled back.
 */
function blobBytes(target: string, blob: NonNullable<FileChange["blob"]>): Buffer {
  const read = readInput(blob.from, MAX_FILE_BYTES);
  if (!read.ok)
    throw new UserError(
      `${blob.from} (for ${target}) cannot be read: ${read.reason}; nothing was left applied`,
    );
  if (hash(read.bytes) !== blob.sha256)
    throw new StalePlanError(
      `${blob.from} is not the file the plan copies to ${target} (sha256 ${blob.sha256.slice(0, 12)}… planned): it changed since the plan was made; nothing was left applied: plan again`,
    );
  return read.bytes;
}

/**
 * Why the file `c` is not as the plan found it, or null when it is. A file the plan could not read
 * as text (not UTF-8, too large: its preflight check says so, and may have been ignored) is said
 * to be that, never "changed since the plan": it would be on every run.
 */
function movedSincePlan(c: FileChange, current: { bytes: Buffer } | null): UserError | null {
  if ((current === null ? null : hash(current.bytes)) === c.beforeHash) return null;
  if (current !== null && !c.link) {
    if (current.bytes.length > MAX_TEXT_BYTES)
      return new HostError(
        `${c.path} ${tooLarge(MAX_TEXT_BYTES)}: kata-install reads a configuration whole, and no larger; make it smaller (settings into drop-ins), then plan again (nothing was written)`,
      );
    if (!isUtf8(current.bytes))
      return new HostError(
        `${c.path} ${NOT_UTF8}: kata-install edits only UTF-8 text, and would not keep this file's bytes; convert it (iconv -f LATIN1 -t UTF-8, say), then plan again (nothing was written)`,
      );
  }
  return new StalePlanError(
    `${c.path} changed since the plan was made; nothing was left applied: plan again`,
  );
}

/** Before anything is written (artifacts included): every file the plan changes is as it found it. */
export async function refuseMoved(store: JournalStore, changes: FileChange[]): Promise<void> {
  for (const c of changes) {
    const moved = movedSincePlan(c, await readEntry(store.host, c.path, c.link === true));
    if (moved !== null) throw moved;
  }
}

/** Roll back a transaction that a crash cut short; true when there was one. Safe to repeat. */
export async function recover(store: JournalStore): Promise<boolean> {
  // Refused by name, before anything changes, when a place of ours is not what kata-install made.
  const journal = await store.load();
  await guardOwnPlaces(store, journal);
  await removeUnbornDirs(store.host, store.dir);
  if (journal === null) return false;
  if (!wasCutShort(journal))
    // Nothing cut short; a journal that records nothing at all (a run failed right after making
    // it) goes, with the directories it made.
    return discardIfEmpty(store, journal);
  // Backwards: the files first (they were written after the switch), then the switch. Until the
  // journal is saved at the end, it records the whole cut-short run: a rollback that stops (a disk
  // still full) is said with what it left, and the next run does it again from the start.
  const transaction = journal.transaction ?? {
    steps: [],
    before: { files: journal.files, dirs: journal.dirs },
  };
  const pending = [...transaction.steps].reverse();
  const left: Left = {
    files: pending.map((s) => s.path),
    version: journal.pendingSwitch?.next ?? null,
    staging: journal.staging?.dir ?? null,
  };
  try {
    await recoverStaging(store, journal);
    left.staging = null;
    for (const step of pending) {
      await removeLeftoverTemps(store.host, step.path);
      await restore(store, step.path, step.pre);
      await removeEmptyDirs(store.host, step.createdDirs);
      left.files.shift();
    }
    journal.files = transaction.before.files;
    journal.dirs = transaction.before.dirs;
    // Units restarted on the files just rolled back: on the ones put back now (or stopped).
    await servicesAfterRollback(store, journal.transaction?.services ?? []);
    // The runtime may have loaded the files just rolled back: it must load them again.
    if (journal.transaction?.restarting && journal.runtime) journal.pendingRestart = journal.runtime.action;
    journal.transaction = null;
    // A takeover undone: kata-deploy's install is whole again, and nothing was carried over.
    if (journal.pendingSwitch?.movedAside) delete journal.carried;
    await recoverSwitch(store, prefixOf(store), journal);
    left.version = null;
    // Nothing of ours left on the node: no journal either, and none of the directories it made.
    if (await discardIfEmpty(store, journal)) return true;
    await store.save(journal);
  } catch (error) {
    throw new RollbackIncomplete(store, error, left);
  }
  await discardTxnCopies(store);
  await discardUnrecordedOriginals(store, journal);
  return true;
}

/**
 * Put a file back as saved: its bytes, mode and owner, a link's target, or its absence. One that is
 * so already (a write that failed left it untouched) is not written again: on a full disk, that
 * write would fail too.
 */
export async function restore(store: JournalStore, path: string, saved: Saved): Promise<void> {
  if (saved === "absent") await removeFile(store.host, path);
  else if ("link" in saved) {
    if ((await store.host.readlink(path)) === saved.link) return;
    await ensureParents(store.host, path);
    await atomicLink(store.host, path, saved.link);
  } else {
    const bytes = await store.bytesOf(saved.backup);
    const current = await readEntry(store.host, path, false).catch(() => null);
    const same =
      current?.meta.mode === saved.mode && current.meta.uid === saved.uid && current.meta.gid === saved.gid;
    if (same && current?.bytes.equals(bytes)) return;
    await ensureParents(store.host, path);
    await atomicWrite(store.host, path, bytes, saved);
  }
}

/** Saved originals of files whose record was rolled back with the transaction that made it. */
async function discardUnrecordedOriginals(store: JournalStore, journal: Journal): Promise<void> {
  const kept = new Set(Object.values(journal.files).flatMap((r) => backupOf(r.original) ?? []));
  await store.discardCopies("original", kept);
}

async function discardTxnCopies(store: JournalStore): Promise<void> {
  await store.discardCopies("txn");
}
