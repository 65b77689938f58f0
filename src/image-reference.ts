// An image reference as the container world parses it (distribution's reference grammar,
// github.com/distribution/reference regexp.go): a value that is not one is said at once, naming the
// key, rather than written into a manifest that every node then fails to pull (or, with a newline,
// written at all).
const DOMAIN_PART = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
const DOMAIN = `(?:${DOMAIN_PART}(?:\\.${DOMAIN_PART})*|\\[[a-fA-F0-9:]+\\])(?::[0-9]+)?`;
const PATH_PART = "[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*";
const NAME = `(?:${DOMAIN}/)?${PATH_PART}(?:/${PATH_PART})*`;
const TAG = "[\\w][\\w.-]{0,127}";
const DIGEST = "[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}";

const PATTERNS = {
  reference: new RegExp(`^${NAME}(?::${TAG})?(?:@${DIGEST})?$`),
  repository: new RegExp(`^${NAME}$`),
  tag: new RegExp(`^${TAG}$`),
};

const WHAT = {
  reference: "an image reference (HOST/REPOSITORY[:TAG][@DIGEST], lower-case repository)",
  repository: "an image repository (HOST/REPOSITORY, lower-case, no tag)",
  tag: "an image tag (letters, digits, _ . -; at most 128)",
};

export type ReferenceKind = keyof typeof PATTERNS;

/** Why `text` is not an image reference of `kind`; null when it is one. */
export function referenceProblem(text: string, kind: ReferenceKind): string | null {
  if (PATTERNS[kind].test(text) && text.length <= 255) return null;
  return `${JSON.stringify(text)} is not ${WHAT[kind]}`;
}

/** A reference's repository and tag (null: none); a digest, if any, is left out of both. */
export function splitReference(text: string): { repository: string; tag: string | null } {
  const name = text.split("@")[0] ?? "";
  const colon = name.lastIndexOf(":");
  // A colon before the last "/" is a registry's port, not a tag.
  if (colon === -1 || colon < name.lastIndexOf("/")) return { repository: name, tag: null };
  return { repository: name.slice(0, colon), tag: name.slice(colon + 1) };
}
