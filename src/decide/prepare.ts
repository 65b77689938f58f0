// Everything the decide stage needs, loaded and validated in one place, before any stage acts:
// the catalogue and rules (kata-install's own files), kata-deploy's environment, the overrides
// file and the command-line flags. Any invalid input stops here with every problem listed.

import path from "node:path";
import type { Facts } from "../detect/facts.js";
import { UserError } from "../errors.js";
import { Host } from "../host/host.js";
import { dataPath, packageRoot } from "../package-root.js";
import { type Catalog, loadCatalog, unknownShim } from "./catalog.js";
import { decide, type Flags } from "./decide.js";
import type { Decision } from "./decision.js";
import { ENGINE_CHECKS } from "./engine-checks.js";
import { type EnvSettings, parseEnv } from "./env.js";
import {
  DEFAULT_OVERRIDES,
  emptyOverrides,
  loadOverrides,
  type Overrides,
  unknownCheck,
} from "./overrides.js";
import { loadRules, type RuleSet, ruleFilesIn } from "./rules.js";

export interface DecideOptions {
  /** The node's root: the default overrides file is read under it. */
  hostRoot: string;
  /** An overrides file; null for none at all (not even the node's default one). */
  overrides?: string | null;
  shims?: string;
  defaultShim?: string;
  ignorePreflightErrors?: string;
  env?: Readonly<Record<string, string | undefined>>;
  /** Rule directory; kata-install's own rules/ by default. */
  rulesDir?: string;
}

export interface Prepared {
  catalog: Catalog;
  rules: RuleSet;
  overrides: Overrides;
  flags: Flags;
  env: Readonly<Record<string, string | undefined>>;
}

/** Load and check every input that does not need the node. */
export function prepare(options: DecideOptions): Prepared {
  const dir = options.rulesDir ?? dataPath("rules");
  const catalog = loadCatalog(dir);
  const rules = loadRules(ruleFilesIn(dir), catalog, (file) => relativeToPackage(file));
  const env = options.env ?? process.env;
  parseEnv(env, null, catalog); // the plain variables, now; the arch-specific ones once the arch is known
  const checkIds = new Set([...rules.checkIds, ...ENGINE_CHECKS]);
  // The node's own overrides file is the host's: its links are followed inside the host root.
  const overridesFile =
    options.overrides ?? new Host({ root: options.hostRoot }).resolveSync(DEFAULT_OVERRIDES);
  const overrides =
    options.overrides === null
      ? emptyOverrides()
      : loadOverrides(overridesFile, options.overrides !== undefined, catalog, checkIds);
  return { catalog, rules, overrides, flags: parseFlags(options, catalog, checkIds), env };
}

export function decideFor(prepared: Prepared, facts: Facts): { decision: Decision; env: EnvSettings } {
  const env = parseEnv(prepared.env, facts.arch, prepared.catalog);
  const decision = decide({
    facts,
    catalog: prepared.catalog,
    rules: prepared.rules,
    overrides: prepared.overrides,
    env,
    flags: prepared.flags,
  });
  return { decision, env };
}

function parseFlags(options: DecideOptions, catalog: Catalog, checkIds: Set<string>): Flags {
  const list = (text: string | undefined) => (text ?? "").split(/[\s,]+/).filter(Boolean);
  const shims = options.shims === undefined ? undefined : list(options.shims);
  for (const name of shims ?? [])
    if (!catalog.isKnownShim(name)) throw new UserError(`--shims: ${unknownShim(name, catalog)}`);
  if (shims !== undefined && shims.length === 0) throw new UserError("--shims: name at least one shim");
  if (options.defaultShim !== undefined && !catalog.shims.has(options.defaultShim)) {
    throw new UserError(`--default-shim: ${unknownShim(options.defaultShim, catalog)}`);
  }
  const ignore = list(options.ignorePreflightErrors).map((id) => id.toLowerCase());
  for (const id of ignore)
    if (id !== "all" && !checkIds.has(id))
      throw new UserError(`--ignore-preflight-errors: ${unknownCheck(id, checkIds)}`);
  return { shims, defaultShim: options.defaultShim, ignorePreflightErrors: ignore };
}

function relativeToPackage(file: string): string {
  const relative = path.relative(packageRoot(), file);
  return relative.startsWith("..") ? file : relative;
}
