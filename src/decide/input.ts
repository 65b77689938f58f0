// What a decision is made from: the node's facts, the rules and catalogue, the admin's overrides,
// environment and flags, and the inputs read before deciding. Each step of decide.ts takes it.
import type { Facts } from "../detect/facts.js";
import type { Catalog } from "./catalog.js";
import type { EnvSettings } from "./env.js";
import type { NydusSource } from "./nydus-source.js";
import type { Overrides } from "./overrides.js";
import type { RuleSet } from "./rules.js";
import type { UserDropIn } from "./user-drop-in.js";

export interface Flags {
  shims?: string[];
  defaultShim?: string;
  ignorePreflightErrors: string[];
}

export interface DecideInput {
  facts: Facts;
  catalog: Catalog;
  rules: RuleSet;
  overrides: Overrides;
  env: EnvSettings;
  flags: Flags;
  /** The admin's containerd drop-in, read before deciding (user-drop-in.ts); none when absent. */
  userDropIn?: UserDropIn | null;
  /** nydus-snapshotter's binaries, read before deciding when EXPERIMENTAL_SETUP_SNAPSHOTTER names nydus (nydus-source.ts). */
  nydusSource?: NydusSource | null;
}
