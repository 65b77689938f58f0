// The scan itself, on every thread at once: the workers scan-start.ts started are told what to look
// for, and the main thread claims chunks beside them until none is left.
import { type Kind, type ScanContext, type Scanned, scanClaimed } from "./scan.js";
import type { Scanners } from "./scan-start.js";

/** What one thread found: its chunks' nodes, by chunk index, and the kinds they name. */
export interface Found {
  chunks: Array<[number, Scanned[]]>;
  kinds: Kind[];
}

/** A node as scanned: its kind (one object for every node of its key, whichever thread met it), if it has one. */
export interface ScannedNode {
  name: string;
  file: string;
  kind?: Kind;
}

/** Every file scanned, in the scanners' order of files. */
export async function scanWith(scanners: Scanners, ctx: ScanContext): Promise<ScannedNode[]> {
  for (const { worker } of scanners.workers) {
    worker.ref();
    worker.postMessage(ctx);
  }
  const mine: Found = { chunks: [], kinds: [] };
  mine.kinds = scanClaimed(scanners.files, ctx, scanners.next, (index, scanned) => {
    mine.chunks.push([index, scanned]);
  });
  const found = [mine];
  for (const { done } of scanners.workers) found.push((await done) as Found);
  const byKey = new Map<string, Kind>();
  const chunks: ScannedNode[][] = [];
  for (const { chunks: theirs, kinds } of found) {
    const shared = kinds.map((kind) => {
      const known = byKey.get(kind.key) ?? kind;
      byKey.set(kind.key, known);
      return known;
    });
    for (const [index, scanned] of theirs)
      chunks[index] = scanned.map(({ name, file, kind }) =>
        kind === undefined ? { name, file } : { name, file, kind: shared[kind] },
      );
  }
  return chunks.flat();
}
