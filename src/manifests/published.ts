// The images kata-install's release workflow publishes (.github/workflows/release.yml): the
// kata-install image tagged with its version, and the artifact images of one Kata release. The
// values' defaults name exactly those (held to the workflow by test/workflows.test.ts); a value
// that names the same repositories with another tag names something no release published, and a
// node would fail to pull it, so `manifests` says so in one line.
import { splitReference } from "../image-reference.js";
import type { InputIssue } from "../input-error.js";
import type { Values } from "./values-type.js";

const REGISTRY = "registry:";

/** What of `v` names a published repository with a tag its release did not publish. */
export function unpublishedNotes(defaults: Values, v: Values, file: string): InputIssue[] {
  const notes: InputIssue[] = [];
  const image = splitReference(String(v.image ?? ""));
  const published = splitReference(String(defaults.image ?? ""));
  if (image.repository === published.repository && image.tag !== published.tag)
    notes.push({
      file,
      key: "image",
      message: `${v.image} was not published by kata-install's release workflow (it publishes ${defaults.image} with this version): build and push it (docs/image.md), or name that image`,
    });
  const artifacts = String(v.artifacts ?? "");
  const tag = String(v.artifacts_tag ?? "") || String(v.kata_version ?? "");
  const publishedTag = String(defaults.artifacts_tag ?? "") || String(defaults.kata_version ?? "");
  if (artifacts === String(defaults.artifacts) && artifacts.startsWith(REGISTRY) && tag !== publishedTag)
    notes.push({
      file,
      key: v.artifacts_tag ? "artifacts_tag" : "kata_version",
      message: `${artifacts.slice(REGISTRY.length)}/<artifact>:${tag} were not published by kata-install's release workflow (it publishes Kata ${publishedTag}'s): split and push Kata ${tag}'s artifacts (kata-install artifacts split) and set artifacts to where they are`,
    });
  return notes;
}
