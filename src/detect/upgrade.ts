// A saved Facts document made by an earlier kata-install, brought to this one's schema before it is
// validated: the migrations from its schemaVersion up, then every source it predates taken as
// unknown (with a problem saying so). A document from a newer kata-install is refused: its facts may
// mean what this one cannot know.
import { SCHEMA_VERSION } from "./facts.js";
import { type Problem, sortProblems } from "./problems.js";
import { layoutFacts } from "./runtime/layouts.js";
import { RuntimeKind } from "./runtime/schema.js";
import { SOURCES } from "./sources.js";

type Document = Record<string, unknown>;

/** Turns a document of the schema version it is keyed by into one of the next version. */
export type Migration = (document: Document) => Document;

/** Version 1 is the first: no migration yet. A bump adds the step from the version before it here. */
export const MIGRATIONS: Readonly<Record<number, Migration>> = {};

/** A document made by a newer kata-install than this one. */
export class NewerSchemaError extends Error {}

/**
 * `document` at schema `current`, each step's migration applied in turn. A version with no way up
 * (not a version, or older than the first) is returned as it is, for validation to name.
 */
export function migrate(
  document: Document,
  migrations: Readonly<Record<number, Migration>> = MIGRATIONS,
  current: number = SCHEMA_VERSION,
): Document {
  let version = document.schemaVersion;
  if (typeof version !== "number" || !Number.isInteger(version)) return document;
  if (version > current)
    throw new NewerSchemaError(
      `made by a newer kata-install (schema ${version}); this one reads up to ${current}`,
    );
  let migrated = document;
  for (; version < current; version++) {
    const step = migrations[version];
    if (step === undefined) return migrated;
    migrated = { ...step(migrated), schemaVersion: version + 1 };
  }
  return migrated;
}

/** The sources `document` has no key for, each given its unknown value and a problem saying why. */
export function withUnknownSources(document: Document): Document {
  const missing = SOURCES.filter((source) => !(source.key in document));
  if (missing.length === 0) return document;
  const added: Problem[] = missing.map((source) => ({
    source: source.key,
    reason: `saved by an earlier kata-install, before it read ${source.key}: taken as unknown`,
  }));
  const filled: Document = { ...document };
  for (const source of missing) filled[source.key] = structuredClone(source.unknown);
  // A document without its problems list is not made whole here: validation names it.
  if (Array.isArray(document.problems)) filled.problems = sortProblems([...document.problems, ...added]);
  return filled;
}

/**
 * A runtime's family and placement, which documents saved before they were recorded lack, from its
 * kind (layouts.ts): rules match them, and a rule on the family must not miss a saved containerd.
 */
export function withRuntimeLayout(document: Document): Document {
  const runtime = document.runtime;
  if (runtime === null || typeof runtime !== "object" || Array.isArray(runtime)) return document;
  const { kind } = runtime as Record<string, unknown>;
  if ("family" in runtime && "placement" in runtime) return document;
  const parsed = RuntimeKind.safeParse(kind);
  const derived = layoutFacts(parsed.success ? parsed.data : null);
  if (!parsed.success && kind !== null) return document; // validation names it
  return { ...document, runtime: { ...derived, ...runtime } };
}

/** `json` brought to this kata-install's schema where it can be; anything else is returned as it is. */
export function upgradeFacts(json: unknown): unknown {
  if (json === null || typeof json !== "object" || Array.isArray(json)) return json;
  const migrated = migrate(json as Document);
  return migrated.schemaVersion === SCHEMA_VERSION
    ? withRuntimeLayout(withUnknownSources(migrated))
    : migrated;
}
