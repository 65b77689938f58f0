// The decide stage for one node, from the inputs src/inputs/ read and checked before any stage ran.

import type { Facts } from "../detect/facts.js";
import type { Release } from "../release/release.js";
import type { Catalog } from "./catalog.js";
import { decide } from "./decide.js";
import type { Decision } from "./decision.js";
import { type EnvSettings, parseEnv } from "./env.js";
import type { Flags } from "./input.js";
import type { NydusSource } from "./nydus-source.js";
import type { Overrides } from "./overrides.js";
import type { RuleSet } from "./rules.js";
import type { UserDropIn } from "./user-drop-in.js";

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
