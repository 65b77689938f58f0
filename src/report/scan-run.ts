// The scan itself, on every thread at once: the workers scan-start.ts started are told what to look
// for, and the main thread claims chunks beside them until none is left.
import { type Kind, MAX_THREADS, type ScanContext, scanClaimed } from "./scan.js";
import type { Scanners } from "./scan-start.js";

/** A node as scanned: its kind (one object for every node of its key, whichever thread met it), if it has one. */
export interface ScannedNode {
  name: string;
  file: string;
  kind?: Kind;
}

/** Every file scanned, in the scanners' order of files. */
export async function scanWith(scanners: Scanners, ctx: ScanContext): Promise<ScannedNode[]> {
  const { files, next, found, workers } = scanners;
  for (const { worker } of workers) {
    worker.ref();
    worker.postMessage(ctx);
  }
  // This thread is thread 0; worker i is i + 1 (scan-start.ts).
  const threads = [scanClaimed(files, ctx, next, found, 0)];
  for (const { done } of workers) threads.push((await done) as Kind[]);
  // One object per key, whichever threads met it.
  const byKey = new Map<string, Kind>();
  const kinds = threads.map((list) =>
    list.map((kind) => {
      const known = byKey.get(kind.key) ?? kind;
      byKey.set(kind.key, known);
      return known;
    }),
  );
  return files.map(([name, file], i) => {
    const n = Atomics.load(found, i) - 1;
    return n < 0
      ? { name, file }
      : { name, file, kind: kinds[n % MAX_THREADS]?.[Math.floor(n / MAX_THREADS)] };
  });
}
