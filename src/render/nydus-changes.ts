// nydus-for-kata-tee's files as changes to the node: its configuration and unit (text), its two
// binaries (bytes compared by hash: a binary is never read as text), the link that enables the
// unit; those of an earlier install no longer wanted, removed (only what the journal says an
// install wrote). Its unit is restarted when any of them changed, stopped when they go.

import { must } from "../at.js";
import { change, type FileChange, hash, type PlanAction } from "../changeset.js";
import type { Decision } from "../decide/decision.js";
import { installDir } from "../decide/layout.js";
import { NYDUS_FOR_KATA_TEE } from "../decide/nydus-setup.js";
import { readFile } from "../host/fs-ops.js";
import type { Host } from "../host/host.js";
import type { Installed } from "../state/installed.js";
import { renderNydus, UNIT_DIR } from "./nydus-config.js";

const TAKEN_OVER = "kata-deploy's, taken over: kata-install's from now on (uninstall removes it)";
const ENDED =
  "kata-deploy's nydus, ended by the takeover: its binaries go with kata-deploy's tree (kata-install sets up only nydus-for-kata-tee, when EXPERIMENTAL_SETUP_SNAPSHOTTER names nydus)";

/** kata-deploy 3.x's name for its nydus unit (4.x's is nydus-for-kata-tee). */
const OLDER_NYDUS = "nydus-snapshotter";

/** A unit file or enable link of nydus's, by its path (any suffix; 4.x's name or 3.x's). */
export function isNydusUnitPath(path: string): boolean {
  const name = path.slice(path.lastIndexOf("/") + 1);
  return (
    path.startsWith(`${UNIT_DIR}/`) &&
    (name.startsWith(NYDUS_FOR_KATA_TEE) || name.startsWith(OLDER_NYDUS)) &&
    path.endsWith(".service")
  );
}

/** The unit a unit file or wants link names. */
export function unitOf(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

export async function nydusChanges(
  decision: Decision,
  host: Host,
  read: (path: string) => Promise<string | null>,
  installed: Installed,
  takeover: boolean,
  /** On a takeover, the paths that show kata-deploy's nydus (detect/kata.ts deploySnapshotters). */
  deployed: readonly string[] = [],
): Promise<{ changes: FileChange[]; actions: PlanAction[] }> {
  const setup = decision.shims.length > 0 ? decision.nydus : null;
  const dir = `${installDir(decision)}/${NYDUS_FOR_KATA_TEE}/`;
  const prefix = installDir(decision);
  const changes: FileChange[] = [];
  // kata-deploy's unit and link, outside the prefix: on a takeover, ours — uninstall takes them away.
  const restore = (path: string) => (takeover && !path.startsWith(`${prefix}/`) ? { restore: null } : {});
  const wanted = new Set<string>();
  const rendered = setup === null ? null : renderNydus(decision, setup);
  if (rendered !== null) {
    for (const file of rendered.files) {
      wanted.add(file.path);
      const before = await read(file.path);
      const c = change(file.path, before, file.content, file.mode, file.reason, "kata");
      if (c) changes.push({ ...c, ...restore(file.path) });
      else if (takeover && before !== null && !file.path.startsWith(`${prefix}/`))
        changes.push(adopted(file.path, before, file.mode, "kata", false));
    }
    for (const blob of rendered.blobs) {
      wanted.add(blob.path);
      const current = takeover ? null : await bytesAt(host, blob.path);
      const beforeHash = current === null ? null : hash(current);
      if (beforeHash === blob.sha256) continue;
      changes.push({
        path: blob.path,
        action: current === null ? "create" : "modify",
        before: current === null ? null : stand(must(beforeHash, "the current hash"), current.length),
        after: stand(blob.sha256, blob.size),
        mode: blob.mode,
        reason: blob.reason,
        role: "kata",
        beforeHash,
        blob: { from: blob.from, sha256: blob.sha256, size: blob.size },
      });
    }
    for (const link of rendered.links) {
      wanted.add(link.path);
      const target = await host.readlink(link.path);
      const c = change(link.path, target, link.target, 0o777, link.reason, "kata");
      if (c) changes.push({ ...c, link: true, ...restore(link.path) });
      else if (takeover) changes.push(adopted(link.path, link.target, 0o777, "kata", true));
    }
  }
  // What an earlier install of nydus wrote and this one does not want: removed.
  for (const [path, link] of installed.files) {
    if (wanted.has(path) || !(path.startsWith(dir) || isNydusUnitPath(path))) continue;
    if (link) {
      const c = change(
        path,
        await host.readlink(path),
        null,
        0o777,
        "nydus is no longer set up here",
        "kata",
      );
      if (c) changes.push({ ...c, link: true });
      continue;
    }
    const text = await read(path);
    if (text !== null) {
      const c = change(path, text, null, 0o644, "nydus is no longer set up here", "kata");
      if (c) changes.push(c);
      continue;
    }
    const bytes = await bytesAt(host, path);
    if (bytes === null) continue;
    const sha = hash(bytes);
    changes.push({
      path,
      action: "delete",
      before: stand(sha, bytes.length),
      after: null,
      mode: 0o755,
      reason: "nydus is no longer set up here",
      role: "kata",
      beforeHash: sha,
      blob: { from: "", sha256: sha, size: bytes.length },
    });
  }
  // kata-deploy's own units this install does not write again (3.x's nydus-snapshotter; 4.x's where
  // nydus is not set up): their binaries go with the prefix the takeover moves aside, and a unit
  // left running on nothing would fail at every start — 3.x's RequiredBy= would then keep
  // containerd from starting. So the takeover ends them: stopped, their files and enable links
  // gone with the rest of kata-deploy's install (a run cut short puts them back).
  if (takeover)
    for (const path of deployed) {
      if (wanted.has(path) || !isNydusUnitPath(path)) continue;
      const target = await host.readlink(path);
      const text = target === null ? await read(path) : null;
      const c =
        target !== null
          ? change(path, target, null, 0o777, ENDED, "kata")
          : text !== null
            ? change(path, text, null, 0o644, ENDED, "kata")
            : null;
      // Ended for good: uninstall does not bring back kata-deploy's unit pointing at nothing.
      if (c) changes.push({ ...c, restore: null, ...(target !== null ? { link: true } : {}) });
    }
  const actions: PlanAction[] = [];
  const gone = changes.filter((c) => c.after === null && isNydusUnitPath(c.path) && !c.link);
  for (const c of gone)
    actions.push({
      kind: "stop-service",
      target: unitOf(c.path),
      reason: "its unit goes: stopped, and systemd reloaded",
    });
  if (rendered !== null && changes.some((c) => c.after !== null))
    actions.push({
      kind: "restart-service",
      target: rendered.unit,
      reason: `its files changed: systemd reloaded, ${rendered.unit} (re)started before containerd loads the proxy plugin`,
    });
  return { changes, actions };
}

/** A binary as a plan line says it: its hash and size. */
function stand(sha256: string, size: number): string {
  return `(binary: ${size} bytes, sha256:${sha256})\n`;
}

/**
 * kata-deploy's file as it is, made kata-install's: journalled (uninstall removes it) though its
 * bytes stay as they are.
 */
function adopted(path: string, before: string, mode: number, role: "kata", link: boolean): FileChange {
  return {
    path,
    action: "modify",
    before,
    after: before,
    mode,
    reason: TAKEN_OVER,
    role,
    beforeHash: hash(before),
    restore: null,
    ...(link ? { link: true } : {}),
  };
}

async function bytesAt(host: Host, path: string): Promise<Buffer | null> {
  try {
    return (await readFile(host, path))?.bytes ?? null;
  } catch {
    return null;
  }
}
