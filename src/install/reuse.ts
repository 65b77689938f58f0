// An upgrade pulls only what changed: an artifact of the new version whose digest in the source is
// the one the installed version recorded for it is taken from the node (its files linked or copied
// from the installed version), not fetched again. The plan counts only the rest as pulled.
import type { ArtifactSource } from "../artifacts/source.js";
import type { ArtifactsRecord } from "./journal.js";

/** The installed version's id and the artifacts of `names` it holds with the source's digest. */
export async function reusableArtifacts(
  installed: ArtifactsRecord | null,
  source: ArtifactSource,
  names: readonly string[],
): Promise<{ version: string | null; artifacts: Set<string> }> {
  const artifacts = new Set<string>();
  const identities = installed?.identities;
  if (installed === null || installed.version === null || identities === undefined)
    return { version: null, artifacts };
  for (const name of names) {
    const recorded = identities[name];
    if (
      recorded !== undefined &&
      installed.names.includes(name) &&
      recorded === (await source.identify(name))
    )
      artifacts.add(name);
  }
  return { version: installed.version, artifacts };
}

/** Each artifact's digest in the source, as the journal records them for the version installed. */
export async function identitiesOf(
  source: ArtifactSource,
  names: readonly string[],
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of [...names].sort()) out[name] = await source.identify(name);
  return out;
}
