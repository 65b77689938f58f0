// The first pass over a directory of saved facts, one file at a time and nothing shared: read it,
// parse it, and — for a document of this kata-install's own schema — its fingerprint (fingerprint.ts)
// and the half of its summary its facts alone give. No schema and no rules are loaded for it, so
// that thousands of files are read on several threads (scan-worker.ts); the main thread then
// decides once per fingerprint. Anything else (an older document to upgrade, a file that does not
// read cleanly) is left to the main thread's full path, which says what is wrong with it.
import { isUtf8 } from "node:buffer";
import fs from "node:fs";
import { valueAt } from "../detect/value-at.js";
import { type SummaryFacts, summaryFacts } from "../kube/summary-facts.js";
import { readBounded } from "../read-bounded.js";

/** What a scan needs of the main thread's world, as plain data (it crosses to worker threads). */
export interface ScanContext {
  /** The decision facts' paths (fingerprint.ts decisionFacts). */
  paths: string[];
  /** The fact paths a summary publishes (summary.ts publishedFactPaths). */
  factPaths: string[];
  schemaVersion: number;
  /** Every fact source's key: a document without one of them is an older one, upgraded by the main thread. */
  sourceKeys: string[];
  maxBytes: number;
}

export type Scanned =
  | { name: string; file: string; kind: "summary"; fingerprint: string; part: SummaryFacts }
  /** For the main thread's full path: upgraded, checked, or refused with its reason. */
  | { name: string; file: string; kind: "main" };

/** The values of the decision facts on a node, as one comparable string. */
export function fingerprint(facts: unknown, paths: readonly string[]): string {
  return JSON.stringify(paths.map((p) => valueAt(facts, p) ?? null));
}

export function scanFile(name: string, file: string, ctx: ScanContext): Scanned {
  const main = { name, file, kind: "main" } as const;
  const text = readRegular(file, ctx.maxBytes);
  if (text === null) return main;
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    return main;
  }
  if (!isCurrent(document, ctx)) return main;
  try {
    return {
      name,
      file,
      kind: "summary",
      fingerprint: fingerprint(document, ctx.paths),
      // Only the first node of a kind is checked against the schema (by the main thread), as before.
      part: summaryFacts(document as Parameters<typeof summaryFacts>[0], ctx.factPaths),
    };
  } catch {
    return main;
  }
}

/** A document of this schema that upgrading would not change (upgrade.ts): every source, the runtime's family. */
function isCurrent(document: unknown, ctx: ScanContext): document is Record<string, unknown> {
  if (document === null || typeof document !== "object" || Array.isArray(document)) return false;
  const d = document as Record<string, unknown>;
  if (d.schemaVersion !== ctx.schemaVersion) return false;
  if (!ctx.sourceKeys.every((key) => key in d)) return false;
  const runtime = d.runtime;
  return (
    runtime !== null &&
    typeof runtime === "object" &&
    !Array.isArray(runtime) &&
    "family" in runtime &&
    "placement" in runtime
  );
}

/**
 * The file's UTF-8 text when it is a regular file within `maxBytes`; null for anything else (the
 * main thread's read then says what). Opened without blocking and checked on what was opened: one
 * stat fewer than input-file.ts's path-first check, for files a directory listing said are files.
 */
function readRegular(file: string, maxBytes: number): string | null {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile() || st.size > maxBytes) return null;
    // Grown past the bound as it was read: the main thread's read decides.
    const buffer = readBounded(fd, maxBytes, st.size);
    if (buffer === null) return null;
    return isUtf8(buffer) ? buffer.toString("utf8") : null;
  } catch {
    return null;
  } finally {
    fs.closeSync(fd);
  }
}
