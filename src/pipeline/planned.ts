// A plan as the pipeline makes it: what each stage found and decided, for the commands to print,
// save or apply (its own module: the pipeline and its last stage both speak of it).
import type { ArtifactSource } from "../artifacts/source.js";
import type { Changeset } from "../changeset.js";
import type { Catalog } from "../decide/catalog.js";
import type { Prepared } from "../decide/decide-for.js";
import type { Decision } from "../decide/decision.js";
import type { Facts } from "../detect/facts.js";
import type { Host } from "../host/host.js";
import type { Release } from "../release/release.js";
import type { Templates } from "../render/templates.js";

export interface Planned {
  prepared: Prepared;
  templates: Templates;
  host: Host;
  facts: Facts;
  /** The Kata release being installed (its configuration files, its images); null if none was read. */
  release: Release | null;
  /** Where the artifacts come from (--artifacts); null without one. */
  source: ArtifactSource | null;
  /** The catalogue as this release has it: its shims, their keys. */
  catalog: Catalog;
  decision: Decision;
  changeset: Changeset;
}
