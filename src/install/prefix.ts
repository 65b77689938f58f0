// Whose is the install prefix? kata-install changes or removes there only what its journal says it
// made: `current`, the version directories, Kata's usual paths as links into `current`, and its
// own `.install`. Anything else already there is someone's data (or another installer's Kata), and
// the plan refuses the prefix up front, naming it, instead of staging and then deleting or
// replacing it.
import fs from "node:fs";
import type { Check } from "../decide/decision.js";
import { KATA_DEPLOY_DROP_INS } from "../detect/kata.js";
import type { Host } from "../host/host.js";
import { LINKS } from "../release/links.js";
import { JOURNAL_DIR } from "../state/places.js";
import { KEPT_NAME, linkTarget } from "./artifacts.js";
import type { Journal } from "./journal.js";

export const CHECK_ID = "install-prefix";

/** Version directories the journal records as kata-install's. */
export function recordedVersions(journal: Journal | null): Set<string> {
  const out = new Set<string>();
  if (journal === null) return out;
  if (journal.artifacts.version) out.add(journal.artifacts.version);
  for (const v of journal.artifacts.retired ?? []) out.add(v);
  if (journal.pendingSwitch) {
    out.add(journal.pendingSwitch.next);
    if (journal.pendingSwitch.previous) out.add(journal.pendingSwitch.previous);
    if (journal.pendingSwitch.movedAside) out.add(journal.pendingSwitch.movedAside.id);
  }
  return out;
}

/** What kata-deploy puts at the top of its prefix: what a takeover moves aside, and only that. */
export const KATA_DEPLOY_ENTRIES = [
  "bin",
  "containerd",
  "include",
  "lib",
  "libexec",
  "nydus-for-kata-tee",
  // 3.x's EXPERIMENTAL_SETUP_SNAPSHOTTER=nydus (the takeover-snapshotter check names it first).
  "nydus-snapshotter",
  "runtime-rs",
  "share",
  "VERSION",
  "versions.yaml",
];

/** The version id kata-deploy's tree gets when a takeover moves it aside. */
export const TAKEN_OVER = "kata-deploy";

/** What in the prefix is not kata-install's, as lines naming each path. */
export async function foreignContent(
  host: Host,
  prefix: string,
  journal: Journal | null,
  takeover = false,
): Promise<string[]> {
  if (takeover) {
    // kata-deploy's own entries are taken over; anything else there is still someone's — an
    // admin's drop-in in a shim's config.d too, which the takeover would otherwise remove.
    const listing = await host.readDir(prefix);
    const found = (listing.ok ? listing.entries : [])
      // kata-install's journal too: one left by a takeover a later run rolled back (a restart owed).
      .filter((name) => !KATA_DEPLOY_ENTRIES.includes(name) && name !== JOURNAL_DIR)
      .map((name) => `${prefix}/${name} is neither kata-deploy's nor kata-install's`);
    const defaults = `${prefix}/share/defaults/kata-containers`;
    for (const base of [
      `${defaults}/runtimes`,
      `${defaults}/runtime-rs/runtimes`,
      `${defaults}/custom-runtimes`,
    ]) {
      const shims = await host.readDir(base);
      for (const shim of shims.ok ? shims.entries : []) {
        const dropIns = await host.readDir(`${base}/${shim}/config.d`);
        for (const name of dropIns.ok ? dropIns.entries : [])
          if (!KATA_DEPLOY_DROP_INS.includes(name))
            found.push(
              `${base}/${shim}/config.d/${name} is not one of kata-deploy's drop-ins: an admin's setting, which a takeover would remove (move it into /etc/kata-containers/kata-install.toml as [config.${shim}] values)`,
            );
      }
    }
    return found;
  }
  const found: string[] = [];
  const lstat = async (p: string) => fs.lstatSync(await host.resolveLink(p), { throwIfNoEntry: false });
  const versions = recordedVersions(journal);
  const current = await lstat(`${prefix}/current`);
  if (current) {
    const target = current.isSymbolicLink()
      ? fs.readlinkSync(await host.resolveLink(`${prefix}/current`))
      : null;
    const ours = target?.startsWith("versions/") && versions.has(target.slice("versions/".length));
    if (!ours)
      found.push(
        `${prefix}/current ${target === null ? "is not a link" : `points at ${target}`}, and no kata-install journal records it`,
      );
  }
  const versionsDir = await host.readDir(`${prefix}/versions`);
  if (versionsDir.ok)
    for (const name of versionsDir.entries) {
      if (versions.has(name)) continue;
      // What a removed version of ours kept of someone else's (src/install/version-files.ts).
      if (KEPT_NAME.test(name) && (await lstat(`${prefix}/versions/${name}`))?.isDirectory()) continue;
      // A staging directory of ours is a directory; anything else of that name is not ours.
      const partial = name.endsWith(".partial") && (await lstat(`${prefix}/versions/${name}`))?.isDirectory();
      if (!partial) found.push(`${prefix}/versions/${name} is not a version kata-install made`);
    }
  const links = new Set(journal?.artifacts.links ?? []);
  for (const link of LINKS) {
    const at = `${prefix}/${link}`;
    const st = await lstat(at);
    if (!st) continue;
    const target = st.isSymbolicLink() ? fs.readlinkSync(await host.resolveLink(at)) : null;
    // Our link, recorded (or about to be, by a switch under way).
    if (target === linkTarget(link) && (links.has(at) || journal?.pendingSwitch?.createdLinks.includes(at)))
      continue;
    found.push(
      `${at} ${st.isDirectory() ? "is a directory" : target === null ? "is a file" : `is a link to ${target}`} that kata-install did not make`,
    );
  }
  return found;
}

export async function prefixCheck(
  host: Host,
  prefix: string,
  journal: Journal | null,
  takeover = false,
): Promise<Check> {
  const found = await foreignContent(host, prefix, journal, takeover);
  if (found.length === 0)
    return {
      id: CHECK_ID,
      severity: "error",
      status: "pass",
      message: takeover
        ? `${prefix} holds kata-deploy's install, which kata-install takes over, and nothing else`
        : `${prefix} holds nothing of anyone else's`,
      rule: "install",
    };
  return {
    id: CHECK_ID,
    severity: "error",
    status: "fail",
    message: `${prefix} holds content that is not kata-install's, which an install would have to replace: ${found.join("; ")}`,
    hint: "kata-install never deletes what it did not make: move it away, uninstall the Kata another installer put there, or choose another prefix (INSTALLATION_PREFIX)",
    rule: "install",
  };
}
