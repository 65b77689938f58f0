// The first pass over a directory of saved facts, one file at a time and nothing shared: read it,
// parse it, and — for a document of this kata-install's own schema — its key: the values of every
// fact its decision and its summary read. Nodes of one key share one decision and one summary, so
// the decision's fingerprint (fingerprint.ts) and the half of the summary its facts alone give are
// made once per key, not once per node, and decided once per fingerprint. Anything else (an older
// document to upgrade, a file that does not read cleanly) is left to the full path, which says
// what is wrong with it.
import { isUtf8 } from "node:buffer";
import fs from "node:fs";
import path from "node:path";
import { segmentsOf, valueAt } from "../detect/value-at.js";
import { fromJson, toJson } from "../json-text.js";
import { type SummaryFacts, summaryFacts } from "../kube/summary-facts.js";
import { readBounded } from "../read-bounded.js";

/** What a scan looks for, as plain data. */
export interface ScanContext {
  /** The decision facts' paths (fingerprint.ts decisionFacts). */
  paths: string[];
  /** The fact paths a summary publishes (summary.ts publishedFactPaths). */
  factPaths: string[];
  /** Every path the decision and the summary read (keyPaths): what a key is made of. */
  keyPaths: string[];
  schemaVersion: number;
  /** Every fact source's key: a document without one of them is an older one, upgraded on the full path. */
  sourceKeys: string[];
  maxBytes: number;
}

/** What the nodes of one key share, made from the first of them scanned. */
export interface Kind {
  key: string;
  fingerprint: string;
  part: SummaryFacts;
}

/** The kinds met, in the order met, and each one's index by key. */
export interface Kinds {
  list: Kind[];
  byKey: Map<string, number>;
}

/** The values of the decision facts on a node, as one comparable string. */
export function fingerprint(facts: unknown, paths: readonly string[]): string {
  return toJson(paths.map((p) => valueAt(facts, p) ?? null));
}

/**
 * What a node's decision and summary depend on, as one string: at each path its value, or where
 * and on what the path stopped (a missing key, a null, a number) — two documents of one key read
 * alike at every step summaryFacts or a fingerprint takes, so they fail alike too.
 */
export function keyOf(document: unknown, paths: readonly string[]): string {
  return toJson(paths.map((p) => traceAt(document, p)));
}

function traceAt(document: unknown, path: string): unknown {
  let current = document;
  const segments = segmentsOf(path);
  for (let i = 0; i < segments.length; i++) {
    if (current === null || typeof current !== "object") return { at: i, stop: current };
    current = (current as Record<string, unknown>)[segments[i] as string];
    if (current === undefined) return { at: i, missing: true };
  }
  return { value: current };
}

/**
 * Which of the decision's and the summary's paths a key holds: each once, and none inside another
 * (a whole source read holds its parts).
 */
export function keyPaths(...lists: Array<readonly string[]>): string[] {
  const all = [...new Set(lists.flat())];
  return all.filter((p) => !all.some((q) => q !== p && p.startsWith(`${q}.`))).sort();
}

/**
 * The file's kind, as its index in `kinds` (the kinds met so far, so that each one is made
 * once); undefined for the full path: upgraded, checked, or refused with its reason.
 */
export function scanFile(file: string, ctx: ScanContext, kinds: Kinds): number | undefined {
  const text = readRegular(file, ctx.maxBytes);
  if (text === null) return undefined;
  let document: unknown;
  try {
    document = fromJson(text);
  } catch {
    return undefined;
  }
  if (!isCurrent(document, ctx)) return undefined;
  const key = keyOf(document, ctx.keyPaths);
  const known = kinds.byKey.get(key);
  if (known !== undefined) return known;
  try {
    const kind: Kind = {
      key,
      fingerprint: fingerprint(document, ctx.paths),
      // Only the first node of a fingerprint is checked against the schema (on the full path), as before.
      part: summaryFacts(document as Parameters<typeof summaryFacts>[0], ctx.factPaths),
    };
    const index = kinds.list.push(kind) - 1;
    kinds.byKey.set(key, index);
    return index;
  } catch {
    // Every document of this key fails alike (keyOf): each goes to the full path.
    return undefined;
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

/** What each file is read into: facts documents are a few kB, and most fit. */
const scratch = Buffer.allocUnsafeSlow(64 * 1024);

/**
 * The file's UTF-8 text when it is a regular file within `maxBytes`; null for anything else (the
 * full path's read then says what). Opened without blocking and checked on what was opened: one
 * stat fewer than input-file.ts's path-first check, for files a directory listing said are files.
 */
function readRegular(file: string, maxBytes: number): string | null {
  let fd: number;
  try {
    // Not through a link: the full path's read refuses it, saying so.
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW);
  } catch {
    return null;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile() || st.size > maxBytes) return null;
    // Grown past the bound as it was read: the full path's read decides.
    const buffer = readBounded(fd, maxBytes, st.size, scratch);
    if (buffer === null) return null;
    return isUtf8(buffer) ? buffer.toString("utf8") : null;
  } catch {
    return null;
  } finally {
    fs.closeSync(fd);
  }
}

/** A node as scanned: its kind (one object for every node of its key), if it has one. */
export interface ScannedNode {
  name: string;
  file: string;
  kind?: Kind;
}

/**
 * Every file, scanned in order on this thread. (Threads beside it were measured at 50,000 nodes:
 * 1.6× faster on two cores, under the 2× that would pay for a pool and its shared memory; so one.)
 */
export function scanAll(files: ReadonlyArray<readonly [string, string]>, ctx: ScanContext): ScannedNode[] {
  const kinds: Kinds = { list: [], byKey: new Map() };
  return files.map(([name, file]) => {
    const kind = scanFile(file, ctx, kinds);
    return kind === undefined ? { name, file } : { name, file, kind: kinds.list[kind] };
  });
}

/** The directory's saved facts, as [node, path] in the order of node names: throws the file system's error when it cannot be listed. */
export function listFacts(dir: string): Array<[string, string]> {
  // path.join(dir, file) for every file, joined once: a file name is one plain segment (no "/",
  // not "." or ".."), so each joins as any other would.
  const prefix = path.join(dir, "_").slice(0, -1);
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((file): [string, string] => [file.slice(0, -".json".length), prefix + file]);
}
