// A worker thread of `report --facts-dir`: started with the files (scan-start.ts), told what to look
// for once the main thread has loaded the rules, then scans the chunks it claims and posts back
// what it found, by chunk.
import { parentPort, workerData } from "node:worker_threads";
import { type ScanContext, type Scanned, scanClaimed } from "./scan.js";
import type { Found } from "./scan-run.js";

const { files, next } = workerData as { files: Array<[string, string]>; next: Int32Array };
parentPort?.once("message", (ctx: ScanContext) => {
  const chunks: Array<[number, Scanned[]]> = [];
  const kinds = scanClaimed(files, ctx, next, (index, scanned) => chunks.push([index, scanned]));
  parentPort?.postMessage({ chunks, kinds } satisfies Found);
});
