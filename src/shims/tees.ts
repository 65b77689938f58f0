// The trusted execution environments kata-install knows, one record each, keyed by the security
// facts (detect/security.ts): a security fact without its record, or a record without its fact,
// does not compile. Everything kata-install says of a TEE elsewhere is read off this table: the
// facts summary's name, the node's feature label, the NodeFeatureRule that labels TEE nodes and
// advertises their keys, the RuntimeClass's node selector and key request, and the feature variable
// that a shim running on it requires (rules/features.toml sets it from the fact).
import type { SecurityFacts } from "../detect/security.js";

/** What NFD's own rule reads for a TEE: the label it sets, the resource it advertises from which feature. */
export interface NfdTeeRule {
  /** The rule's name in kata-install's NodeFeatureRule. */
  name: string;
  /** cpu.security's expression that holds on a node with it. */
  matches: string;
  /** The value of the extended resource (an NFD feature attribute). */
  resourceFrom: string;
}

export interface Tee {
  /** Its name in the facts summary, the node's labels (confidential.<label>) and the `shims` table. */
  label: string;
  /** The extended resource counting its keys, one of which each sandbox takes; "none": not counted. */
  nfdResource: string | "none";
  /** The label NFD puts on nodes that have it: what a RuntimeClass of a shim on it selects; "none": none. */
  runtimeClassSelector: string | "none";
  /** kata-install's NodeFeatureRule for it (its label is runtimeClassSelector, its resource nfdResource). */
  nfdRule: NfdTeeRule | "none";
  /** The feature variable a shim on it requires (rules/features.toml); "none": no shim runs on it. */
  feature: string | "none";
}

export type TeeKey = keyof SecurityFacts;

/** In the order of the security facts (the order the summary shows them). */
export const TEES = {
  sev: { label: "sev", nfdResource: "none", runtimeClassSelector: "none", nfdRule: "none", feature: "none" },
  sevEs: {
    label: "sev-es",
    nfdResource: "none",
    runtimeClassSelector: "none",
    nfdRule: "none",
    feature: "none",
  },
  sevSnp: {
    label: "sev-snp",
    nfdResource: "sev-snp.amd.com/esids",
    runtimeClassSelector: "amd.feature.node.kubernetes.io/snp",
    nfdRule: {
      name: "amd.sev-snp",
      matches: "sev.snp.enabled",
      resourceFrom: "@cpu.security.sev.encrypted_state_ids",
    },
    feature: "sev-snp",
  },
  tdx: {
    label: "tdx",
    nfdResource: "tdx.intel.com/keys",
    runtimeClassSelector: "intel.feature.node.kubernetes.io/tdx",
    nfdRule: { name: "intel.tdx", matches: "tdx.enabled", resourceFrom: "@cpu.security.tdx.total_keys" },
    feature: "tdx",
  },
  sgx: { label: "sgx", nfdResource: "none", runtimeClassSelector: "none", nfdRule: "none", feature: "none" },
  s390xSe: {
    label: "se",
    nfdResource: "none",
    runtimeClassSelector: "feature.node.kubernetes.io/cpu-security.se.enabled",
    nfdRule: "none",
    feature: "se",
  },
} as const satisfies { readonly [Key in TeeKey]: Tee };

export const TEE_KEYS = Object.keys(TEES) as TeeKey[];

/** A TEE's record by its key (the keys are the security facts'; a string from a saved document may be none). */
export function teeOf(key: string): Tee | undefined {
  return Object.hasOwn(TEES, key) ? TEES[key as TeeKey] : undefined;
}

/** The TEEs shims run on: those with a feature variable. */
export type ShimTee = { [Key in TeeKey]: (typeof TEES)[Key]["feature"] extends "none" ? never : Key }[TeeKey];

/** "tdx", "sev-snp", "se": the `confidential` of a shim, as `shims` shows it. */
export const SHIM_TEE_LABELS = TEE_KEYS.filter((k) => TEES[k].feature !== "none").map((k) => TEES[k].label);
