// Report's scanning threads, started as early as a run can: src/cli/cluster.ts starts them before
// the command's own modules load, so that the threads' start (~50 ms each) overlaps that and the
// rules' loading; they wait for what to look for (scan-run.ts). Nothing here loads the scan itself.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Worker } from "node:worker_threads";
import { dataPath } from "../package-root.js";

/** How many threads scan the files: KATA_INSTALL_REPORT_THREADS, else one per core up to four for many files. */
export const THREADS_VARIABLE = "KATA_INSTALL_REPORT_THREADS";
/** Fewer files than this are scanned on the main thread: starting a worker costs more than they take. */
const WORKERS_FROM = 1000;

export interface Scanners {
  /** Every `<node>.json` of the directory, as [node, path], in the order of node names. */
  files: Array<[string, string]>;
  /** The index of the next chunk of files to scan, shared by every thread (scan.ts scanClaimed). */
  next: Int32Array;
  /** Each file's kind, as the thread that scanned it wrote it (scanClaimed). */
  found: Int32Array;
  /** Each worker, and the kinds it met once it has scanned (scan-worker.ts). */
  workers: Array<{ worker: Worker; done: Promise<unknown> }>;
}

/** The directory's saved facts: throws the file system's error when it cannot be listed. */
export function listFacts(dir: string): Array<[string, string]> {
  // path.join(dir, file) for every file, joined once: a file name is one plain segment (no "/",
  // not "." or ".."), so each joins as any other would. 5,000 joins cost ~5 ms before the scan starts.
  const prefix = path.join(dir, "_").slice(0, -1);
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((file): [string, string] => [file.slice(0, -".json".length), prefix + file]);
}

/** How many threads to scan `files` files on; null when the variable says something else than a number of them. */
export function threadsFor(files: number, env: Readonly<Record<string, string | undefined>>): number | null {
  const given = env[THREADS_VARIABLE]?.trim();
  if (given) {
    const n = Number(given);
    return Number.isInteger(n) && n >= 1 && n <= 64 ? n : null;
  }
  return files < WORKERS_FROM ? 1 : Math.min(os.availableParallelism(), 4);
}

/**
 * Where the worker's bundle is (dist/commands/, beside the command groups); null when not built.
 * Found from the package's root: this module is bundled into another file.
 */
function workerFile(): string | null {
  const file = dataPath("dist", "commands", "report-scan.cjs");
  return fs.existsSync(file) ? file : null;
}

/** `files`' scanners: `threads` - 1 workers beside the main thread (none unless built). */
export function startScanners(files: Array<[string, string]>, threads: number): Scanners {
  const next = new Int32Array(new SharedArrayBuffer(4));
  const found = new Int32Array(new SharedArrayBuffer(4 * files.length));
  const url = threads > 1 ? workerFile() : null;
  if (url === null) return { files, next, found, workers: [] };
  // Required here rather than imported: every other command's start would load it.
  const { Worker } = process.getBuiltinModule("node:worker_threads");
  const workers = Array.from({ length: threads - 1 }, (_, i) => {
    const worker = new Worker(url, { workerData: { files, next, found, thread: i + 1 } });
    const done = new Promise<unknown>((resolve, reject) => {
      worker.once("message", resolve);
      worker.once("error", reject);
      worker.once("exit", (code) => reject(new Error(`report: a scanning thread exited with ${code}`)));
    });
    // Waiting for its work keeps no run alive (one that fails before the scan ends at once). After
    // the listeners: listening for its messages refs it again.
    worker.unref();
    // Awaited by the scan; a run that ends before it must not fail on it.
    done.catch(() => {});
    return { worker, done };
  });
  return { files, next, found, workers };
}

/** The scanners for `dir` when it can be listed and the variable is valid; else undefined (the run then says why). */
export function startEarly(
  dir: string,
  env: Readonly<Record<string, string | undefined>>,
): Scanners | undefined {
  try {
    const files = listFacts(dir);
    const threads = threadsFor(files.length, env);
    return threads === null ? undefined : startScanners(files, threads);
  } catch {
    return undefined;
  }
}
