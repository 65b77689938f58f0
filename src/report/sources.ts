// Where a report's nodes come from: saved `facts --json` documents (one `<node>.json` per node),
// decided here once per distinct set of decision facts; or the summaries nodes published in their
// annotation. A file or node that cannot be read is reported and left out, never fatal: one broken
// node must not hide the other 4,999.

import fs from "node:fs";
import { decideFor, type Prepared } from "../decide/decide-for.js";
import type { Decision } from "../decide/decision.js";
import type { RuleSet } from "../decide/rules.js";
import { type Facts, SCHEMA_VERSION } from "../detect/facts.js";
import { MAX_FACTS_BYTES, parseFacts } from "../detect/load.js";
import { SOURCES } from "../detect/sources.js";
import { upgradeFacts } from "../detect/upgrade.js";
import { UserError } from "../errors.js";
import { failure } from "../host/host.js";
import { readInputText } from "../input-file.js";
import { fromJson, jsonErrorText, toJson } from "../json-text.js";
import type { KubeApi } from "../kube/api.js";
import { summaryAnnotation } from "../kube/node-labels.js";
import { assembleSummary, decidedPart, NodeSummary, publishedFactPaths } from "../kube/summary.js";
import { SUMMARY_READS, type SummaryFacts, summaryFacts } from "../kube/summary-facts.js";
import { defaultSharedFs } from "../render/kata-config.js";
import type { NodeEntry } from "./entry.js";
import { decisionFacts } from "./fingerprint.js";
import type { ClusterReport } from "./report.js";
import { fingerprint, keyPaths, listFacts, type ScanContext, scanAll } from "./scan.js";

export interface Loaded {
  nodes: NodeEntry[];
  skipped: ClusterReport["skipped"];
  /** Files read with a source missing, taken as unknown: the report says so beside the left-out ones. */
  partial: ClusterReport["partial"];
  /** How many decisions were made (one per distinct set of decision facts). */
  decisions: number;
}

export async function fromFactsDir(dir: string, prepared: Prepared): Promise<Loaded> {
  let files: Array<[string, string]>;
  try {
    files = listFacts(dir);
  } catch (error) {
    throw new UserError(`--facts-dir ${dir}: ${failure(error).reason}`);
  }
  const ctx = scanContext(prepared.rules);
  const { paths, factPaths } = ctx;
  const scanned = scanAll(files, ctx);
  const decided = new Map<string, Decision>();
  const sharedFs = (shim: string) => defaultSharedFs(prepared.catalog, shim);
  // One summary per part and decision: nodes of one kind share it, and buildReport reads it once.
  const summaries = new Map<SummaryFacts, Map<Decision, NodeSummary>>();
  const summaryOf = (part: SummaryFacts, decision: Decision) => {
    let byDecision = summaries.get(part);
    if (byDecision === undefined) {
      byDecision = new Map();
      summaries.set(part, byDecision);
    }
    let summary = byDecision.get(decision);
    if (summary === undefined) {
      summary = assembleSummary(part, decidedPart(decision, sharedFs));
      byDecision.set(decision, summary);
    }
    return summary;
  };
  const nodes: NodeEntry[] = [];
  const skipped: Loaded["skipped"] = [];
  const partial: Loaded["partial"] = [];
  for (const s of scanned) {
    const { name, file: full } = s;
    let facts: Facts | null = null;
    let key: string;
    const kind = s.kind;
    try {
      if (kind !== undefined) key = kind.fingerprint;
      else {
        // Brought to this schema before its fingerprint (a source an earlier kata-install did not
        // read is taken as unknown): only the first node of a kind is validated, every one is summarised.
        const read = readFacts(full);
        facts = read.facts;
        key = fingerprint(facts, paths);
        if (read.missing.length > 0)
          partial.push({
            source: full,
            reason: `no ${read.missing.join(", ")} facts in it (saved by an earlier kata-install, or cut): taken as unknown`,
          });
      }
    } catch (error) {
      skipped.push({ source: full, reason: reasonOf(error, full) });
      continue;
    }
    try {
      let decision = decided.get(key);
      if (decision === undefined) {
        // The first node of its kind is checked whole against the schema, then decided for all.
        const checked = parseFacts(full, toJson(facts ?? readFacts(full).facts));
        decision = decideFor(prepared, checked).decision;
        decided.set(key, decision);
        const part = summaryFacts(checked, factPaths);
        nodes.push({ name, summary: assembleSummary(part, decidedPart(decision, sharedFs)) });
        continue;
      }
      nodes.push({
        name,
        summary:
          kind !== undefined
            ? summaryOf(kind.part, decision)
            : assembleSummary(summaryFacts(facts as Facts, factPaths), decidedPart(decision, sharedFs)),
      });
    } catch (error) {
      skipped.push({ source: full, reason: reasonOf(error, full) });
    }
  }
  // A file left out is not also said to be read in part.
  const left = new Set(skipped.map((s) => s.source));
  return { nodes, skipped, partial: partial.filter((p) => !left.has(p.source)), decisions: decided.size };
}

/** Why a file was left out, without its name (the report names it) and with each problem on its line. */
function reasonOf(error: unknown, file: string): string {
  const message = (error as Error).message;
  return message.startsWith(`${file}: `) ? message.slice(file.length + 2) : message;
}

/** What the scan looks for, under `rules`. */
export function scanContext(rules: RuleSet): ScanContext {
  const paths = decisionFacts(rules);
  const factPaths = publishedFactPaths(rules);
  return {
    paths,
    factPaths,
    keyPaths: keyPaths(paths, factPaths, SUMMARY_READS),
    schemaVersion: SCHEMA_VERSION,
    sourceKeys: SOURCES.map((s) => s.key),
    maxBytes: MAX_FACTS_BYTES,
  };
}

/**
 * A saved document, read and brought to this schema, with the sources it lacked (taken as unknown);
 * throws with why it cannot be.
 */
function readFacts(full: string): { facts: Facts; missing: string[] } {
  // The directory's own files only: a link there may lead anywhere kata-install can read.
  if (fs.lstatSync(full, { throwIfNoEntry: false })?.isSymbolicLink())
    throw new Error("a symbolic link: only the directory's regular files are read");
  const read = readInputText(full, MAX_FACTS_BYTES);
  if (!read.ok) throw new Error(read.reason);
  let document: unknown;
  try {
    document = fromJson(read.text);
  } catch (error) {
    throw new Error(`not JSON (${jsonErrorText(error)}): not a saved \`facts --json\` document`);
  }
  const facts = upgradeFacts(document) as Facts;
  if (facts?.schemaVersion !== SCHEMA_VERSION) {
    const version = (document as { schemaVersion?: unknown } | null)?.schemaVersion;
    throw new Error(
      version === undefined
        ? "no schemaVersion: not a saved `facts --json` document"
        : `schemaVersion ${JSON.stringify(version)}: not a facts document of schema version ${SCHEMA_VERSION}`,
    );
  }
  const missing = SOURCES.map((source) => source.key).filter(
    (key) => !(key in (document as Record<string, unknown>)),
  );
  return { facts, missing };
}

/** The summaries one install (its MULTI_INSTALL_SUFFIX, or none) published on the nodes. */
export async function fromCluster(api: KubeApi, suffix: string | null = null): Promise<Loaded> {
  const nodes: NodeEntry[] = [];
  const skipped: Loaded["skipped"] = [];
  const annotation = summaryAnnotation(suffix);
  for (const node of await api.listNodes()) {
    const source = `node ${node.name}`;
    const text = node.meta.annotations?.[annotation];
    if (text === undefined) {
      skipped.push({
        source,
        reason: `no ${annotation} annotation: kata-install${suffix ? ` (install ${suffix})` : ""} has not installed it (yet)`,
      });
      continue;
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      skipped.push({ source, reason: `its annotation is not JSON: ${(error as Error).message}` });
      continue;
    }
    const parsed = NodeSummary.safeParse(json);
    if (parsed.success) nodes.push({ name: node.name, summary: parsed.data });
    else
      skipped.push({
        source,
        reason: `its annotation is not a summary this kata-install reads: ${parsed.error.issues[0]?.message}`,
      });
  }
  return { nodes, skipped, partial: [], decisions: 0 };
}
