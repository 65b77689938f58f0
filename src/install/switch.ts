// Artifacts into place as a journalled step: stage the version, then switch `current` to it and
// create the links, recording beforehand what to put back if the switch is cut short.

import fs from "node:fs";
import path from "node:path";
import type { ListedEntry } from "../artifacts/listing.js";
import type { ArtifactSource } from "../artifacts/source.js";
import { crashPoint } from "../host/crash-point.js";
import { createDirsWith, ensureParents, missingDirs, removeEmptyDirs } from "../host/fs-ops.js";
import { mkdirOwn, removeOwnTree } from "../host/own-place.js";
import { JOURNAL_DIR } from "../state/places.js";
import {
  createLinks,
  existingVersion,
  holds,
  missingLinks,
  removeVersions,
  type Staged,
  stageVersion,
  stagingPath,
  switchCurrent,
  versionId,
} from "./artifacts.js";
import { emptyJournal, type Journal, type JournalStore, type PendingSwitch } from "./journal.js";
import { KATA_DEPLOY_ENTRIES, recordedVersions, TAKEN_OVER } from "./prefix.js";
import { identitiesOf, reusableArtifacts } from "./reuse.js";
import {
  settleIdentities,
  updateVersionIdentities,
  versionIdentities,
  writeVersionFiles,
} from "./version-files.js";

export interface SwitchResult {
  staged: Staged | null;
  switched: boolean;
  /** Entries of the installed version put back (removed or changed by hand since). */
  repaired: number;
}

/** The journal, created (with the directories it needs, recorded) when there is none yet. */
export async function openJournal(store: JournalStore): Promise<Journal> {
  const journal = await store.load();
  if (journal !== null) return journal;
  const fresh = emptyJournal();
  const missing = await missingDirs(store.host, store.dir);
  if (missing.length === 0) return fresh;
  // The directories are born with the journal that records them inside: a kill between making
  // them and writing it would otherwise leave directories no later run knows are ours.
  fresh.dirs.push(...missing);
  await createDirsWith(store.host, missing, (dir) => store.saveAt(dir, fresh));
  return fresh;
}

export async function installArtifacts(
  store: JournalStore,
  prefix: string,
  source: ArtifactSource,
  names: string[],
  /** takeOver: kata-deploy's entries of the prefix (takeover-tree.ts): the rest is kept when its tree goes. */
  options: { takeOver?: { ours: ReadonlySet<string> } } = {},
): Promise<SwitchResult> {
  const known = await store.load();
  if (names.length === 0 && (known?.artifacts.version ?? null) === null)
    return { staged: null, switched: false, repaired: 0 };
  // The version is named from the source (image digests) before the node is touched: a node that
  // has it already writes nothing, and a tag or manifest refused here leaves no trace.
  const id = await versionId(source, names);
  const journal = await openJournal(store);
  let staged = await existingVersion(store.host, prefix, id);
  if (id === journal.artifacts.version && staged !== null) {
    const repaired = await repairVersion(store, prefix, journal, id, source, names);
    return { staged, switched: false, repaired };
  }
  // The directories staging makes (versions/) belong to the switch too: taken back with it.
  const recorded = journal.dirs.length;
  if (staged === null) staged = await stageJournalled(store, prefix, journal, id, source, names);
  const stagedDirs = journal.dirs.slice(recorded);
  // What the switch will create is journalled before it exists, so a cut-short switch is undone
  // whole; so is a switch whose install fails later in the run (recoverSwitch puts the previous
  // version back), until commitSwitch().
  const { meta: previousMeta, identities: previousIdentities } = journal.artifacts;
  journal.pendingSwitch = {
    previous: journal.artifacts.version,
    previousNames: journal.artifacts.names,
    next: staged.id,
    createdLinks: [],
    createdDirs: stagedDirs,
    previousOrigin: {
      ...(previousMeta !== undefined ? { meta: previousMeta } : {}),
      ...(previousIdentities !== undefined ? { identities: previousIdentities } : {}),
    },
  };
  if (options.takeOver) await moveAside(store, prefix, journal, options.takeOver.ours);
  const { links, dirs } = await missingLinks(store.host, prefix, staged.id);
  journal.pendingSwitch.createdLinks = links;
  journal.pendingSwitch.createdDirs = [...stagedDirs, ...dirs];
  journal.dirs.push(...dirs);
  const meta = names.includes("meta") ? await source.identify("meta") : undefined;
  journal.artifacts = {
    version: staged.id,
    names: [...names].sort(),
    links: [...journal.artifacts.links, ...links],
    ...(meta !== undefined ? { meta: { version: staged.id, digest: meta } } : {}),
    identities: await identitiesOf(source, names),
  };
  await store.save(journal);
  crashPoint("switch:before");
  await switchCurrent(store.host, prefix, staged.id);
  await createLinks(store.host, prefix, links);
  crashPoint("switch:after");
  return { staged, switched: true, repaired: 0 };
}

/**
 * The switch stands: the previous version goes (VMs started from it keep their open files until
 * they stop). applyChanges() commits a pending switch with its files; this does it when no file
 * changed, and removes the old version in both cases.
 */
export async function commitSwitch(store: JournalStore, prefix: string): Promise<string[]> {
  const journal = await store.load();
  if (journal === null) return [];
  if (journal.pendingSwitch !== null) {
    retire(journal);
    await store.save(journal);
  }
  crashPoint("switch:committed");
  return removeRetired(store, prefix, journal);
}

/** At the commit of a switch: the version switched away from (or a taken-over tree) is ours to remove. */
export function retire(journal: Journal): void {
  const pending = journal.pendingSwitch;
  if (pending === null) return;
  const gone = [pending.previous, pending.movedAside?.id ?? null].filter(
    (v): v is string => v !== null && v !== journal.artifacts.version,
  );
  journal.artifacts.retired = [...(journal.artifacts.retired ?? []), ...gone];
  journal.pendingSwitch = null;
}

/**
 * A takeover: kata-deploy's entries of the prefix (bin/, share/, …) renamed in one piece into
 * versions/kata-deploy — on the same file system, so running VMs keep the files they have open —
 * journalled first, so a rollback renames them back.
 */
async function moveAside(
  store: JournalStore,
  prefix: string,
  journal: Journal,
  ours: ReadonlySet<string>,
): Promise<void> {
  const pending = journal.pendingSwitch as PendingSwitch;
  const listing = await store.host.readDir(prefix);
  // kata-deploy's runtime drop-in directory (containerd/) stays where the runtime's configuration
  // imports it from until that configuration no longer does: moved, a runtime restarted in between
  // (a node rebooted mid-takeover) would not start on an import of a missing file. It follows the
  // tree once the switch is committed (removeRetired).
  const names = (listing.ok ? listing.entries : []).filter(
    (n) => KATA_DEPLOY_ENTRIES.includes(n) && n !== DROP_IN_ENTRY,
  );
  pending.movedAside = { id: TAKEN_OVER, names };
  // The install taken over is kata-install's now, its directory too: uninstall removes it whole.
  if (!journal.dirs.includes(prefix)) journal.dirs.push(prefix);
  await store.save(journal);
  mkdirOwn(await store.own(`${prefix}/versions`, "dir"), `${prefix}/versions`);
  const aside = await store.own(`${prefix}/versions/${TAKEN_OVER}`, "dir");
  mkdirOwn(aside, `${prefix}/versions/${TAKEN_OVER}`);
  // What is kata-deploy's in it, listed as a version's files are, before anything moves: the rest
  // (an admin's file in bin/, say) is kept when the tree is removed.
  writeVersionFiles(aside, ours);
  for (const name of names) {
    crashPoint("takeover:move");
    fs.renameSync(await store.host.resolveLink(`${prefix}/${name}`), path.join(aside, name));
  }
}

/** kata-deploy's entry of the prefix that its runtime configuration imports a drop-in from. */
const DROP_IN_ENTRY = "containerd";

/** kata-deploy's containerd/ renamed into its moved-aside tree, if it is still in the prefix. */
async function followTree(store: JournalStore, prefix: string): Promise<void> {
  const at = await store.host.resolveLink(`${prefix}/${DROP_IN_ENTRY}`);
  if (!fs.lstatSync(at, { throwIfNoEntry: false })?.isDirectory()) return;
  const aside = await store.own(`${prefix}/versions/${TAKEN_OVER}`, "dir");
  mkdirOwn(aside, `${prefix}/versions/${TAKEN_OVER}`);
  const to = path.join(aside, DROP_IN_ENTRY);
  if (!fs.lstatSync(to, { throwIfNoEntry: false })) fs.renameSync(at, to);
}

/** Rename a taken-over tree back into the prefix (a rollback of the switch that moved it). */
async function moveBack(
  store: JournalStore,
  prefix: string,
  moved: { id: string; names: string[] },
): Promise<void> {
  const where = `${prefix}/versions/${moved.id}`;
  const aside = await store.own(where, "dir");
  for (const name of moved.names) {
    const from = path.join(aside, name);
    const to = await store.host.resolveLink(`${prefix}/${name}`);
    if (fs.lstatSync(from, { throwIfNoEntry: false }) && !fs.lstatSync(to, { throwIfNoEntry: false }))
      fs.renameSync(from, to);
  }
  removeOwnTree(aside, where);
}

/**
 * Remove the retired versions (only those: nothing else under versions/ is touched). Returns what
 * someone else put in them, which stays (host paths).
 */
export async function removeRetired(
  store: JournalStore,
  prefix: string,
  journal: Journal,
): Promise<string[]> {
  const retired = journal.artifacts.retired ?? [];
  if (retired.length === 0) return [];
  // The takeover committed: kata-deploy's runtime drop-in directory, left in place until now, goes
  // with its tree.
  if (retired.includes(TAKEN_OVER)) await followTree(store, prefix);
  const kept = await removeVersions(store.host, prefix, retired);
  // Files of the current version hard-linked from a removed one: their ctime moved with the unlink.
  const current = journal.artifacts.version;
  if (current !== null) {
    const dir = await store.own(`${prefix}/versions/${current}`, "dir").catch(() => null);
    if (dir !== null) settleIdentities(dir);
  }
  journal.artifacts.retired = [];
  await store.save(journal);
  return kept;
}

/**
 * Put back what was taken from the installed version (a file removed or changed by hand): the
 * artifacts are staged whole beside it, and each entry the version lacks, or holds otherwise than
 * the source lists it, is renamed into place. Returns how many entries were put back.
 */
async function repairVersion(
  store: JournalStore,
  prefix: string,
  journal: Journal,
  id: string,
  source: ArtifactSource,
  names: string[],
): Promise<number> {
  const version = await store.own(`${prefix}/versions/${id}`, "dir");
  const wrong: ListedEntry[] = [];
  const identities = versionIdentities(version);
  for (const name of names)
    for (const entry of await source.list(name)) if (!holds(version, entry, identities)) wrong.push(entry);
  if (wrong.length === 0) return 0;
  journal.staging = { dir: stagingPath(prefix, id), version: `${prefix}/versions/${id}`, createdDirs: [] };
  await store.save(journal);
  try {
    const partial = (await stageVersion(store.host, prefix, id, source, names, { rename: false })).dir;
    for (const entry of wrong) {
      // Into the version's own directories, never through a link that replaced one of them; what
      // stands at the entry's place goes only if it is a file or link (as the entry is).
      const at = `${prefix}/versions/${id}/${entry.path}`;
      const to = await store.own(path.posix.dirname(at), "dir");
      fs.mkdirSync(to, { recursive: true });
      const there = path.join(to, path.posix.basename(at));
      if (!fs.lstatSync(there, { throwIfNoEntry: false })?.isDirectory()) fs.rmSync(there, { force: true });
      fs.renameSync(path.join(partial, entry.path), there);
    }
    // What was put back is kata-install's as written now.
    updateVersionIdentities(
      version,
      wrong.map((e) => e.path),
    );
  } finally {
    await recoverStaging(store, journal);
    await store.save(journal);
  }
  return wrong.length;
}

/**
 * Stream the artifacts into a new version directory. The staging is journalled first (with the
 * directories it will make), so a kill halfway is cleaned up by the next run; a refused artifact
 * is cleaned up at once, and a journal that has nothing else in it goes too: no trace is left.
 */
async function stageJournalled(
  store: JournalStore,
  prefix: string,
  journal: Journal,
  id: string,
  source: ArtifactSource,
  names: string[],
): Promise<Staged> {
  const versions = `${prefix}/versions`;
  // What the installed version already holds, by digest, is taken from it, not pulled again.
  const { version: installed, artifacts: same } = await reusableArtifacts(journal.artifacts, source, names);
  const reuse =
    installed === null || same.size === 0
      ? undefined
      : { dir: await store.own(`${versions}/${installed}`, "dir"), artifacts: same };
  // Refused before anything is journalled or made: a link planted where the staging goes.
  for (const dir of [stagingPath(prefix, id), `${versions}/${id}`]) await store.own(dir, "dir");
  journal.staging = {
    dir: stagingPath(prefix, id),
    version: `${versions}/${id}`,
    createdDirs: await missingDirs(store.host, versions),
  };
  await store.save(journal);
  await ensureParents(store.host, `${versions}/x`);
  crashPoint("stage:begin");
  try {
    const staged = await stageVersion(store.host, prefix, id, source, names, { reuse });
    crashPoint("stage:end");
    // From here the version is the switch's to keep or take back; the directories, the journal's.
    journal.dirs.push(...journal.staging.createdDirs);
    journal.staging = null;
    return staged;
  } catch (error) {
    await recoverStaging(store, journal);
    if (!(await discardIfEmpty(store, journal))) await store.save(journal);
    throw error;
  }
}

/** Remove a staging cut short (by a kill or a refusal). */
export async function recoverStaging(store: JournalStore, journal: Journal): Promise<boolean> {
  const staging = journal.staging ?? null;
  if (staging === null) return false;
  removeOwnTree(await store.own(staging.dir, "dir"), staging.dir);
  // Cut short after the rename: the complete version goes too, unless it is the one in use.
  if (staging.version !== `${prefixOf(store)}/versions/${journal.artifacts.version}`)
    removeOwnTree(await store.own(staging.version, "dir"), staging.version);
  await removeEmptyDirs(store.host, staging.createdDirs);
  journal.staging = null;
  return true;
}

/** A journal that records nothing installed goes, with the directories it made; true if it went. */
export async function discardIfEmpty(store: JournalStore, journal: Journal): Promise<boolean> {
  const empty =
    Object.keys(journal.files).length === 0 &&
    journal.artifacts.version === null &&
    journal.transaction === null &&
    journal.pendingSwitch === null &&
    (journal.pendingRestart ?? null) === null &&
    (journal.staging ?? null) === null;
  if (!empty) return false;
  await store.discard();
  await removeEmptyDirs(store.host, journal.dirs);
  return true;
}

/** Put back what a cut-short switch changed; true when there was one. */
export async function recoverSwitch(store: JournalStore, prefix: string, journal: Journal): Promise<boolean> {
  const pending = journal.pendingSwitch;
  if (pending === null) return false;
  await switchCurrent(store.host, prefix, pending.previous);
  for (const link of pending.createdLinks) await removeOwnLink(store, link);
  if (pending.next !== pending.previous) {
    const next = `${prefix}/versions/${pending.next}`;
    removeOwnTree(await store.own(next, "dir"), next);
  }
  await removeEmptyDirs(store.host, pending.createdDirs);
  if (pending.movedAside) {
    // Our directories for the links are gone: the taken-over tree goes back in their place, and
    // then versions/, if the switch made it, can go too.
    await moveBack(store, prefix, pending.movedAside);
    await removeEmptyDirs(store.host, pending.createdDirs);
  }
  // The record goes back with the node: the previous version, without the links the switch made,
  // and with where that version came from, not where the next one did.
  const { meta: _next, identities: _nextIdentities, ...kept } = journal.artifacts;
  const origin = pending.previousOrigin ?? {};
  journal.artifacts = {
    ...kept,
    version: pending.previous,
    names: pending.previousNames,
    links: journal.artifacts.links.filter((l) => !pending.createdLinks.includes(l)),
    ...(origin.meta !== undefined ? { meta: origin.meta } : {}),
    ...(origin.identities !== undefined ? { identities: origin.identities } : {}),
  };
  journal.dirs = journal.dirs.filter((d) => !pending.createdDirs.includes(d));
  journal.pendingSwitch = null;
  return true;
}

/** Uninstall's part: links, `current` and every version go. */
export async function removeArtifacts(
  store: JournalStore,
  prefix: string,
  journal: Journal,
): Promise<string[]> {
  for (const link of journal.artifacts.links) await removeOwnLink(store, link);
  const versions = recordedVersions(journal);
  // `current` goes only if it is our link; versions only those the journal records.
  const current = await store.own(`${prefix}/current`, "link");
  const target = fs.lstatSync(current, { throwIfNoEntry: false })?.isSymbolicLink()
    ? fs.readlinkSync(current)
    : null;
  if (target?.startsWith("versions/") && versions.has(target.slice("versions/".length)))
    await switchCurrent(store.host, prefix, null);
  // versions/ itself goes with the journal's directories, if it made it and it is empty.
  return removeVersions(store.host, prefix, versions);
}

/** A link of ours (Kata's usual paths into `current`): removed if it is still a link, else left. */
async function removeOwnLink(store: JournalStore, link: string): Promise<void> {
  const at = await store.own(link, "link");
  if (fs.lstatSync(at, { throwIfNoEntry: false })?.isSymbolicLink()) fs.rmSync(at, { force: true });
}

export function prefixOf(store: JournalStore): string {
  return store.dir.endsWith(`/${JOURNAL_DIR}`) ? store.dir.slice(0, -JOURNAL_DIR.length - 1) : store.dir;
}
