// The release a plan is made for: the one in the artifact source (--artifacts, ARTIFACTS), else
// the one kata-install installed on the node. Without either, the shims' configurations cannot be
// written, and the plan says so (the "release" check).

import { artifactSource, parseArtifactSpecifier } from "./artifacts/open-source.js";
import type { ArtifactSource } from "./artifacts/source.js";
import { installDirFromEnv } from "./decide/layout.js";
import type { Facts } from "./detect/facts.js";
import type { Host } from "./host/host.js";
import { journalFor } from "./install/journal.js";
import { releaseFromSource, releaseOnNode, sameReleaseOnNode } from "./release/load.js";
import type { Release } from "./release/release.js";

export interface ReleaseOptions {
  artifacts?: string;
  artifactsTag?: string;
}

export async function readRelease(
  options: ReleaseOptions,
  facts: Facts,
  /** The node, when the plan is made on one (not from a saved facts file). */
  host: Host | null,
  env: Readonly<Record<string, string | undefined>>,
): Promise<{ release: Release | null; source: ArtifactSource | null }> {
  const dir = installDirFromEnv(env);
  const journal = host === null ? null : await journalFor(host, dir).load();
  if (options.artifacts !== undefined) {
    const spec = parseArtifactSpecifier(options.artifacts);
    if (spec !== null) {
      const source = await artifactSource(spec, facts.arch, options.artifactsTag ?? "latest");
      // The node installed from this very meta image: its configuration files are read there.
      const same =
        host === null ? null : await sameReleaseOnNode(host, dir, journal?.artifacts ?? null, source);
      return { release: same ?? (await releaseFromSource(source)), source };
    }
  }
  if (host === null) return { release: null, source: null };
  return { release: await releaseOnNode(host, dir, journal?.artifacts.names ?? []), source: null };
}
