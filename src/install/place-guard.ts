// Before an install or an uninstall changes anything: every place of kata-install's own, and every
// one its journal records, is what kata-install made there — a directory, a file, a link — and not
// a link planted in its stead (or a FIFO, a device). Anything else stops the run, by name, before
// the first write or deletion: a run refused halfway would leave the node between two states.
import fs from "node:fs";
import { PROBE_CACHE_FILE } from "../detect/probe-cache.js";
import { HostError } from "../errors.js";
import { describeEntry, type OwnKind, OwnPlaceError } from "../host/own-place.js";
import type { Journal, JournalStore } from "./journal.js";
import { recordedVersions } from "./prefix.js";

/** The places to look at, each with the kind it must be when it is there. */
function places(store: JournalStore, journal: Journal | null): Array<[string, OwnKind]> {
  const prefix = store.prefix;
  const out: Array<[string, OwnKind]> = [
    [store.dir, "dir"],
    [store.file, "file"],
    [`${store.dir}/original`, "dir"],
    [`${store.dir}/txn`, "dir"],
    [`${store.dir}/${PROBE_CACHE_FILE}`, "file"],
  ];
  // Without a journal, nothing else in the prefix is kata-install's (the plan's install-prefix
  // check names what is there).
  if (journal === null) return out;
  out.push([`${prefix}/versions`, "dir"], [`${prefix}/current`, "link"], [`${prefix}/current.next`, "link"]);
  for (const id of recordedVersions(journal)) out.push([`${prefix}/versions/${id}`, "dir"]);
  if (journal.staging) out.push([journal.staging.dir, "dir"], [journal.staging.version, "dir"]);
  for (const link of [...journal.artifacts.links, ...(journal.pendingSwitch?.createdLinks ?? [])])
    out.push([link, "link"]);
  return out;
}

export async function guardOwnPlaces(store: JournalStore, journal: Journal | null): Promise<void> {
  const found: string[] = [];
  for (const [place, kind] of places(store, journal)) {
    try {
      await store.own(place, kind);
    } catch (error) {
      if (!(error instanceof OwnPlaceError)) throw error;
      found.push(error.found);
    }
  }
  // The directories the journal made, wherever they are (conf.d/ beside containerd's file too):
  // each itself, not followed; their parents are the host's.
  for (const dir of journal?.dirs ?? []) {
    const real = await store.host.resolveLink(dir).catch(() => null);
    const st = real === null ? undefined : fs.lstatSync(real, { throwIfNoEntry: false });
    if (real !== null && st !== undefined && !st.isDirectory())
      found.push(`${dir} is ${describeEntry(st, real)}, where kata-install made a directory`);
  }
  if (found.length > 0)
    throw new HostError(
      `${[...new Set(found)].join("; ")}: kata-install reads, writes and deletes nothing through what it did not make; nothing was changed. Move it away (it is not kata-install's), then run kata-install again`,
    );
}
