// Decide on a test host: the built-in rules and catalogue, an overrides file given as text, an
// environment and flags, as the commands would.
import path from "node:path";
import { decide } from "../../src/decide/decide.js";
import type { Decision } from "../../src/decide/decision.js";
import { ENGINE_CHECKS } from "../../src/decide/engine-checks.js";
import { parseEnv } from "../../src/decide/env.js";
import type { Flags } from "../../src/decide/input.js";
import { emptyOverrides, parseOverrides } from "../../src/decide/overrides.js";
import { detectOptionsFromEnv } from "../../src/detect/context.js";
import { detectFacts, type Facts } from "../../src/detect/facts.js";
import { loadCatalog } from "../../src/inputs/catalog.js";
import { loadNydusSource } from "../../src/inputs/nydus-source.js";
import { loadRules, ruleFilesIn } from "../../src/inputs/rules.js";
import { loadUserDropIn } from "../../src/inputs/user-drop-in.js";
import type { Release } from "../../src/release/release.js";
import { fixtureRelease } from "./artifacts.js";
import { buildHost, type NodeSpec } from "./test-host.js";

export const RULES = path.resolve("rules");
export const catalog = loadCatalog(RULES);
export const rules = loadRules(ruleFilesIn(RULES), catalog, (f) => path.relative(process.cwd(), f));
export const checkIds = new Set([...rules.checkIds, ...ENGINE_CHECKS]);

export interface DecideOn {
  overrides?: string;
  env?: Record<string, string>;
  flags?: Partial<Flags>;
  /** The release decided for: Kata 4.1.0 of the node's architecture by default; null for none. */
  release?: Release | null;
}

/** Kata 4.1.0 of `arch` (x86_64 when unknown), read once. */
const releases = new Map<string, Release>();
export function releaseFor(arch: string | null): Release {
  const key = arch === "aarch64" ? "aarch64" : "x86_64";
  let release = releases.get(key);
  if (release === undefined) {
    release = fixtureRelease(key);
    releases.set(key, release);
  }
  return release;
}

export function decideFacts(facts: Facts, options: DecideOn = {}): Decision {
  const overrides =
    options.overrides === undefined
      ? emptyOverrides()
      : parseOverrides("/etc/kata-containers/kata-install.toml", options.overrides, catalog, checkIds);
  const env = parseEnv(options.env ?? {}, facts.arch);
  const release = options.release === undefined ? releaseFor(facts.arch) : options.release;
  return decide({
    facts,
    catalog: catalog.withRelease(release),
    rules,
    overrides,
    env,
    flags: { ignorePreflightErrors: [], ...options.flags },
    userDropIn: loadUserDropIn(options.env ?? {}),
    nydusSource: loadNydusSource(options.env ?? {}),
  });
}

/** The node's facts, detected as the pipeline detects them with kata-deploy's environment `env`. */
export async function factsOf(spec: NodeSpec, env: Readonly<Record<string, string>> = {}): Promise<Facts> {
  return detectFacts(buildHost(spec).host, detectOptionsFromEnv(env));
}

export async function decideOn(spec: NodeSpec, options: DecideOn = {}): Promise<Decision> {
  return decideFacts(await factsOf(spec, options.env), options);
}

export const check = (decision: Decision, id: string) => decision.checks.find((c) => c.id === id);
export const shimNames = (decision: Decision) => decision.shims.map((s) => s.name);
export const droppedReason = (decision: Decision, name: string) =>
  decision.dropped.find((d) => d.name === name);
