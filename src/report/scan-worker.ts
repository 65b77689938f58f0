// A worker thread of `report --facts-dir`: started with the files (scan-start.ts), told what to look
// for once the main thread has loaded the rules, then scans the chunks it claims (each file's kind
// into the array every thread shares) and posts back the kinds it met.
import { parentPort, workerData } from "node:worker_threads";
import { type ScanContext, scanClaimed } from "./scan.js";

const { files, next, found, thread } = workerData as {
  files: Array<[string, string]>;
  next: Int32Array;
  found: Int32Array;
  thread: number;
};
parentPort?.once("message", (ctx: ScanContext) => {
  parentPort?.postMessage(scanClaimed(files, ctx, next, found, thread));
});
