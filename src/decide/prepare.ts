// Everything the decide stage needs, loaded and validated in one place, before any stage acts:
// the catalogue and rules (kata-install's own files), kata-deploy's environment, the overrides
// file and the command-line flags. Any invalid input stops here with every problem listed.

import path from "node:path";
import type { Facts } from "../detect/facts.js";
import { UserError } from "../errors.js";
import { Host } from "../host/host.js";
import { dataPath, packageRoot } from "../package-root.js";
import type { Release } from "../release/release.js";
import { type Catalog, loadCatalog, shimNameProblem } from "./catalog.js";
import { decide, type Flags } from "./decide.js";
import type { Decision } from "./decision.js";
import { ENGINE_CHECKS } from "./engine-checks.js";
import { type EnvSettings, parseEnv } from "./env.js";
import { loadNydusSource, type NydusSource } from "./nydus-source.js";
import {
  DEFAULT_OVERRIDES,
  emptyOverrides,
  loadOverrides,
  type Overrides,
  unknownCheck,
} from "./overrides.js";
import { loadRules, type RuleSet, ruleFilesIn } from "./rules.js";
import { loadUserDropIn, type UserDropIn } from "./user-drop-in.js";

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
  /** The admin's containerd drop-in (CONTAINERD_USER_DROP_IN_SOURCE_FILE), read and checked. */
  userDropIn: UserDropIn | null;
  /** nydus-snapshotter's binaries (EXPERIMENTAL_SETUP_SNAPSHOTTER=nydus), read and hashed; null when not asked. */
  nydusSource: NydusSource | null;
}

/** Load and check every input that does not need the node. */
export function prepare(options: DecideOptions): Prepared {
  const dir = options.rulesDir ?? dataPath("rules");
  const catalog = loadCatalog(dir);
  const rules = loadRules(ruleFilesIn(dir), catalog, (file) => relativeToPackage(file));
  const env = options.env ?? process.env;
  parseEnv(env, null); // the plain variables, now; the arch-specific ones once the arch is known
  const checkIds = new Set([...rules.checkIds, ...ENGINE_CHECKS]);
  // The node's own overrides file is the host's: its links are followed inside the host root.
  const overridesFile =
    options.overrides ?? new Host({ root: options.hostRoot }).resolveSync(DEFAULT_OVERRIDES);
  const overrides =
    options.overrides === null
      ? emptyOverrides()
      : loadOverrides(overridesFile, options.overrides !== undefined, catalog, checkIds);
  const userDropIn = loadUserDropIn(env);
  const nydusSource = loadNydusSource(env);
  return { catalog, rules, overrides, flags: parseFlags(options, checkIds), env, userDropIn, nydusSource };
}

/**
 * Decide for a node, with the release being installed (null: none read). The catalogue returned
 * is the release's view of the shims, which render, verify and install read too.
 */
export function decideFor(
  prepared: Prepared,
  facts: Facts,
  release: Release | null = null,
): { decision: Decision; env: EnvSettings; catalog: Catalog } {
  const catalog = prepared.catalog.withRelease(release);
  const env = parseEnv(prepared.env, facts.arch);
  const decision = decide({
    facts,
    catalog,
    rules: prepared.rules,
    overrides: prepared.overrides,
    env,
    flags: prepared.flags,
    userDropIn: prepared.userDropIn,
    nydusSource: prepared.nydusSource,
  });
  return { decision, env, catalog };
}

function parseFlags(options: DecideOptions, checkIds: Set<string>): Flags {
  const list = (text: string | undefined) => (text ?? "").split(/[\s,]+/).filter(Boolean);
  const shims = options.shims === undefined ? undefined : list(options.shims);
  // Names by their form: whether the release ships each is known once it is read (decide).
  for (const name of [
    ...(shims ?? []),
    ...(options.defaultShim === undefined ? [] : [options.defaultShim]),
  ]) {
    const problem = shimNameProblem(name);
    if (problem !== null)
      throw new UserError(`${shims?.includes(name) ? "--shims" : "--default-shim"}: ${problem}`);
  }
  if (shims !== undefined && shims.length === 0) throw new UserError("--shims: name at least one shim");
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
