// A new Kata release in the artifact source, under the same artifact names: the plan alone cannot
// see it (it reads only the node), so with a source at hand the installed version is compared with
// the source's — named from its image digests, without pulling a layer — and a differing one is
// added to the plan as pulls, to be shown before it is applied like every other change.

import type { ArtifactSource } from "../artifacts/source.js";
import type { Changeset } from "../changeset.js";
import type { Decision } from "../decide/decision.js";
import { installDir } from "../decide/layout.js";
import { versionId } from "./artifacts.js";
import type { ArtifactsRecord } from "./journal.js";

export async function withArtifactUpgrade(
  planned: { decision: Decision; changeset: Changeset },
  source: ArtifactSource,
  /** What the node's journal records as installed (null: nothing). */
  record: ArtifactsRecord | null,
  reused: { artifacts: ReadonlySet<string> } = { artifacts: new Set() },
  /** The Kata release the node has (its facts), to name beside the version ids; null: unknown. */
  installedRelease: string | null = null,
): Promise<Changeset> {
  const { decision, changeset } = planned;
  const installed = record?.version ?? null;
  const names = decision.artifacts.filter((a) => a.from === "bundled").map((a) => a.name);
  if (installed === null || names.length === 0) return changeset;
  if (changeset.actions.some((a) => a.kind === "pull-artifact")) return changeset; // pulled anyway
  const available = await versionId(source, names);
  if (available === installed) return changeset;
  // Only what changed is pulled: an artifact with the digest the installed version recorded is
  // taken from it (the plan's transfer line counts it as reused).
  const pulls = decision.artifacts
    .filter((a) => a.from === "bundled" && !reused.artifacts.has(a.name))
    .map((a) => ({
      kind: "pull-artifact" as const,
      target: a.name,
      reason: `${upgradeReason(source.description, decision, { available, installed, installedRelease })}${reused.artifacts.size > 0 ? ": this artifact changed" : ""}`,
    }));
  return { ...changeset, actions: [...pulls, ...changeset.actions] };
}

/**
 * Why the source's artifacts are pulled again: the two releases by their numbers where both are
 * known (what an admin rolls out), with the version ids that tell two builds of one number apart.
 */
function upgradeReason(
  where: string,
  decision: Decision,
  v: { available: string; installed: string; installedRelease: string | null },
): string {
  const dir = installDir(decision);
  const next = decision.release?.version;
  const known = (r: string | null | undefined): r is string =>
    r !== undefined && r !== null && r !== "unknown";
  if (!known(next) || !known(v.installedRelease))
    return `${where} holds another version (${v.available}) than the one under ${dir} (${v.installed})`;
  if (next === v.installedRelease)
    return `${where} holds another build of Kata ${next} (version ${v.available}) than the one under ${dir} (${v.installed})`;
  return `${where} holds Kata ${next} (version ${v.available}); ${dir} has Kata ${v.installedRelease} (version ${v.installed})`;
}
