// `--artifacts`: where the artifact sub-containers come from, and what the plan learns from it (a
// new release there, shown as pulls; the check of every path the configurations name). Shared by
// `plan`, `install --dry-run` and `install`.
import { loadArtifactCatalogue } from "../artifacts/catalogue.js";
import { UserError } from "../errors.js";
import { type ArtifactSource, directorySource } from "../install/artifacts.js";
import type { JournalStore } from "../install/journal.js";
import { prefixCheck } from "../install/prefix.js";
import { withArtifactUpgrade } from "../install/upgrade.js";
import { verifyPlanned } from "../install/verify.js";
import type { Planned } from "../pipeline.js";
import { handlerCheck } from "../render/handler-owners.js";
import { installDir } from "../render/layout.js";

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
    const { ociLayoutSource } = await import("../install/oci-layout.js");
    return ociLayoutSource(spec.where, catalogue, arch);
  }
  const { parseRegistry, registrySource } = await import("../install/registry.js");
  return registrySource(parseRegistry(spec.where, tag), catalogue, arch);
}

/**
 * What the plan learns beyond the decision: whether the prefix is kata-install's to write; the
 * source `--artifacts` names (with it, a new release there shows as pulls; null without); and
 * whether every file the configurations name will be there.
 */
export async function withArtifactSource(
  planned: Planned,
  specifier: ArtifactSpecifier | null,
  tag: string | undefined,
  store: JournalStore,
): Promise<ArtifactSource | null> {
  // The prefix first: what is there that is not ours would stop the install, so it stops the plan.
  if (planned.decision.shims.length > 0)
    planned.decision.checks.push(
      await prefixCheck(
        planned.host,
        installDir(planned.decision),
        await store.load(),
        planned.changeset.actions.some((a) => a.kind === "take-over"),
      ),
      // So is a handler of the node's own that the plan would replace.
      handlerCheck(planned.facts.runtime.handlers, planned.decision, planned.prepared.catalog),
    );
  const source =
    specifier === null ? null : await artifactSource(specifier, planned.facts.arch, tag ?? "latest");
  if (source !== null) planned.changeset = await withArtifactUpgrade(planned, source, store);
  // Pulls without a source: install would refuse, so the plan says it first.
  const pulls = planned.changeset.actions.filter((a) => a.kind === "pull-artifact").map((a) => a.target);
  if (pulls.length > 0 && source === null)
    planned.decision.checks.push({
      id: "artifact-source",
      severity: "error",
      status: "fail",
      message: `artifacts to install (${pulls.join(", ")}) but no source to pull them from`,
      hint: "say where from with --artifacts registry:HOST/REPOSITORY, oci-layout:DIR or dir:DIR (ARTIFACTS in the DaemonSet)",
      rule: "install",
    });
  // Every file the configurations name, checked before anything is pulled or written.
  await verifyPlanned({ ...planned, catalog: planned.prepared.catalog }, source, [
    ...loadArtifactCatalogue().keys(),
  ]);
  return source;
}
