// Where a report's nodes come from: saved `facts --json` documents (one `<node>.json` per node),
// decided here once per distinct set of decision facts; or the summaries nodes published in their
// annotation. A file or node that cannot be read is reported and left out, never fatal: one broken
// node must not hide the other 4,999.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { decideFor, type Prepared } from "../decide/decide-for.js";
import { type Facts, SCHEMA_VERSION } from "../detect/facts.js";
import { MAX_FACTS_BYTES, parseFacts } from "../detect/load.js";
import { SOURCES } from "../detect/sources.js";
import { upgradeFacts } from "../detect/upgrade.js";
import { UserError } from "../errors.js";
import { failure } from "../host/host.js";
import { readInputText } from "../input-file.js";
import type { KubeApi } from "../kube/api.js";
import { summaryAnnotation } from "../kube/node-labels.js";
import { assembleSummary, decidedPart, NodeSummary, publishedFactPaths } from "../kube/summary.js";
import { summaryFacts } from "../kube/summary-facts.js";
import { dataPath } from "../package-root.js";
import { defaultSharedFs } from "../render/kata-config.js";
import { decisionFacts } from "./fingerprint.js";
import type { ClusterReport, NodeEntry } from "./report.js";
import { fingerprint, type ScanContext, type Scanned, scanFile } from "./scan.js";

export interface Loaded {
  nodes: NodeEntry[];
  skipped: ClusterReport["skipped"];
  /** How many decisions were made (one per distinct set of decision facts). */
  decisions: number;
}

/** How many threads scan the files: KATA_INSTALL_REPORT_THREADS, else one per core up to four for many files. */
export const THREADS_VARIABLE = "KATA_INSTALL_REPORT_THREADS";
/** Fewer files than this are scanned on the main thread: starting a worker costs more than they take. */
const WORKERS_FROM = 1000;

export async function fromFactsDir(
  dir: string,
  prepared: Prepared,
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<Loaded> {
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((f) => f.endsWith(".json"));
  } catch (error) {
    throw new UserError(`--facts-dir ${dir}: ${failure(error).reason}`);
  }
  const ctx: ScanContext = {
    paths: decisionFacts(prepared.rules),
    factPaths: publishedFactPaths(prepared.rules),
    schemaVersion: SCHEMA_VERSION,
    sourceKeys: SOURCES.map((s) => s.key),
    maxBytes: MAX_FACTS_BYTES,
  };
  const files = names
    .sort()
    .map((file): [string, string] => [file.slice(0, -".json".length), path.join(dir, file)]);
  const scanned = await scan(files, ctx, threadsFor(files.length, env));
  const decided = new Map<string, ReturnType<typeof decideFor>["decision"]>();
  const sharedFs = (shim: string) => defaultSharedFs(prepared.catalog, shim);
  const nodes: NodeEntry[] = [];
  const skipped: Loaded["skipped"] = [];
  for (const s of scanned) {
    const { name, file: full } = s;
    let facts: Facts | null = null;
    let key: string;
    try {
      if (s.kind === "summary") key = s.fingerprint;
      else {
        // Brought to this schema before its fingerprint (a source an earlier kata-install did not
        // read is taken as unknown): only the first node of a kind is validated, every one is summarised.
        facts = readFacts(full);
        key = fingerprint(facts, ctx.paths);
      }
    } catch (error) {
      skipped.push({ source: full, reason: (error as Error).message });
      continue;
    }
    try {
      let decision = decided.get(key);
      let part = s.kind === "summary" ? s.part : null;
      if (decision === undefined) {
        // The first node of its kind is checked whole against the schema, then decided for all.
        const checked = parseFacts(full, JSON.stringify(facts ?? readFacts(full)));
        decision = decideFor(prepared, checked).decision;
        decided.set(key, decision);
        part = summaryFacts(checked, ctx.factPaths);
      }
      nodes.push({
        name,
        summary: assembleSummary(
          part ?? summaryFacts(facts as Facts, ctx.factPaths),
          decidedPart(decision, sharedFs),
        ),
      });
    } catch (error) {
      skipped.push({ source: full, reason: (error as Error).message.split("\n").join(" ") });
    }
  }
  return { nodes, skipped, decisions: decided.size };
}

/** A saved document, read and brought to this schema; throws with why it cannot be. */
function readFacts(full: string): Facts {
  const read = readInputText(full, MAX_FACTS_BYTES);
  if (!read.ok) throw new Error(read.reason);
  const facts = upgradeFacts(JSON.parse(read.text)) as Facts;
  if (facts?.schemaVersion !== SCHEMA_VERSION)
    throw new Error(`not a facts document of schema version ${SCHEMA_VERSION}`);
  return facts;
}

function threadsFor(files: number, env: Readonly<Record<string, string | undefined>>): number {
  const given = env[THREADS_VARIABLE]?.trim();
  if (given) {
    const n = Number(given);
    if (!Number.isInteger(n) || n < 1 || n > 64)
      throw new UserError(`${THREADS_VARIABLE}: expected a number of threads from 1 to 64, got "${given}"`);
    return n;
  }
  return files < WORKERS_FROM ? 1 : Math.min(os.availableParallelism(), 4);
}

/**
 * Where the worker's bundle is (dist/commands/, beside the command groups); null when not built.
 * Found from the package's root, not this module's URL: a start-up snapshot's code has none.
 */
function workerFile(): string | null {
  const file = dataPath("dist", "commands", "report-scan.js");
  return fs.existsSync(file) ? file : null;
}

/**
 * Every file scanned, in `files`' order: on this thread, or split into `threads` contiguous shares,
 * this thread scanning the first while workers scan the rest.
 */
async function scan(files: Array<[string, string]>, ctx: ScanContext, threads: number): Promise<Scanned[]> {
  const url = threads > 1 ? workerFile() : null;
  if (url === null) return files.map(([name, file]) => scanFile(name, file, ctx));
  const { Worker } = await import("node:worker_threads");
  const size = Math.ceil(files.length / threads);
  const shares = Array.from({ length: threads }, (_, i) => files.slice(i * size, (i + 1) * size));
  const theirs = shares.slice(1).map(
    (share) =>
      new Promise<Scanned[]>((resolve, reject) => {
        const worker = new Worker(url, { workerData: { files: share, ctx } });
        worker.once("message", resolve);
        worker.once("error", reject);
        worker.once("exit", (code) => {
          if (code !== 0) reject(new Error(`report: a scanning thread exited with ${code}`));
        });
      }),
  );
  const mine = (shares[0] ?? []).map(([name, file]) => scanFile(name, file, ctx));
  return [...mine, ...(await Promise.all(theirs)).flat()];
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
