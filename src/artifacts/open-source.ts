// `--artifacts`: where the artifact sub-containers come from, checked before anything else runs,
// and opened (the image readers load only when asked for: a plain plan does without them).

import { UserError } from "../errors.js";
import { loadArtifactCatalogue } from "./catalogue.js";
import { type ArtifactSource, directorySource } from "./source.js";

export interface ArtifactSpecifier {
  kind: "dir" | "oci-layout" | "registry";
  where: string;
}

/** `--artifacts`, checked before anything else runs. */
export function parseArtifactSpecifier(spec: string | undefined): ArtifactSpecifier | null {
  if (spec === undefined) return null;
  const colon = spec.indexOf(":");
  const kind = colon < 0 ? "" : spec.slice(0, colon);
  const where = spec.slice(colon + 1);
  if ((kind === "dir" || kind === "oci-layout" || kind === "registry") && where !== "")
    return { kind, where };
  throw new UserError(
    `--artifacts ${spec}: expected registry:HOST/REPOSITORY (images <artifact>:<tag>), oci-layout:DIR (an OCI image layout, images tagged by artifact name) or dir:DIR (DIR/<artifact>/opt/kata/...)`,
  );
}

export async function artifactSource(
  spec: ArtifactSpecifier,
  arch: string | null,
  tag: string,
): Promise<ArtifactSource> {
  const catalogue = loadArtifactCatalogue();
  if (spec.kind === "dir") return directorySource(spec.where, catalogue);
  // The image readers load only when asked for: a plain plan does without them.
  if (spec.kind === "oci-layout") {
    const { ociLayoutSource } = await import("./oci-layout.js");
    return ociLayoutSource(spec.where, catalogue, arch);
  }
  const { parseRegistry, registrySource } = await import("./registry.js");
  return registrySource(parseRegistry(spec.where, tag), catalogue, arch);
}
