// A worker thread of `report --facts-dir`: scans its share of the files (scan.ts) and posts back
// what it found, in its share's order.
import { parentPort, workerData } from "node:worker_threads";
import { type ScanContext, scanFile } from "./scan.js";

const { files, ctx } = workerData as { files: Array<[string, string]>; ctx: ScanContext };
parentPort?.postMessage(files.map(([name, file]) => scanFile(name, file, ctx)));
