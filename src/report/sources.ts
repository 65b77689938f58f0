// Where a report's nodes come from: saved `facts --json` documents (one `<node>.json` per node),
// decided here once per distinct set of decision facts; or the summaries nodes published in their
// annotation. A file or node that cannot be read is reported and left out, never fatal: one broken
// node must not hide the other 4,999.
import fs from "node:fs";
import path from "node:path";
import { decideFor, type Prepared } from "../decide/prepare.js";
import { type Facts, SCHEMA_VERSION } from "../detect/facts.js";
import { MAX_FACTS_BYTES, parseFacts } from "../detect/load.js";
import { upgradeFacts } from "../detect/upgrade.js";
import { UserError } from "../errors.js";
import { failure } from "../host/host.js";
import { readInputText } from "../input-file.js";
import type { KubeApi } from "../kube/api.js";
import { summaryAnnotation } from "../kube/node-labels.js";
import { NodeSummary, publishedFactPaths, summarize } from "../kube/summary.js";
import { defaultSharedFs } from "../render/kata-config.js";
import { decisionFacts, fingerprint } from "./fingerprint.js";
import type { ClusterReport, NodeEntry } from "./report.js";

export interface Loaded {
  nodes: NodeEntry[];
  skipped: ClusterReport["skipped"];
  /** How many decisions were made (one per distinct set of decision facts). */
  decisions: number;
}

export function fromFactsDir(dir: string, prepared: Prepared): Loaded {
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((f) => f.endsWith(".json"));
  } catch (error) {
    throw new UserError(`--facts-dir ${dir}: ${failure(error).reason}`);
  }
  const paths = decisionFacts(prepared.rules);
  const factPaths = publishedFactPaths(prepared.rules);
  const decided = new Map<string, ReturnType<typeof decideFor>["decision"]>();
  const nodes: NodeEntry[] = [];
  const skipped: Loaded["skipped"] = [];
  for (const file of names.sort()) {
    const full = path.join(dir, file);
    const name = file.slice(0, -".json".length);
    let facts: Facts;
    try {
      // Brought to this schema before its fingerprint (a source an earlier kata-install did not
      // read is taken as unknown): only the first node of a kind is validated, every one is summarised.
      const read = readInputText(full, MAX_FACTS_BYTES);
      if (!read.ok) throw new Error(read.reason);
      facts = upgradeFacts(JSON.parse(read.text)) as Facts;
      if (facts?.schemaVersion !== SCHEMA_VERSION)
        throw new Error(`not a facts document of schema version ${SCHEMA_VERSION}`);
    } catch (error) {
      skipped.push({ source: full, reason: (error as Error).message });
      continue;
    }
    const key = fingerprint(facts, paths);
    let decision = decided.get(key);
    try {
      if (decision === undefined) {
        // The first node of its kind is checked whole against the schema, then decided for all.
        facts = parseFacts(full, JSON.stringify(facts));
        decision = decideFor(prepared, facts).decision;
        decided.set(key, decision);
      }
      nodes.push({
        name,
        summary: summarize(facts, decision, (shim) => defaultSharedFs(prepared.catalog, shim), factPaths),
      });
    } catch (error) {
      skipped.push({ source: full, reason: (error as Error).message.split("\n").join(" ") });
    }
  }
  return { nodes, skipped, decisions: decided.size };
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
  return { nodes, skipped, decisions: 0 };
}
