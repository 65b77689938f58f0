// The value at a dotted fact path ("kernel.modules.vhost_vsock.state") of a plain document. Kept
// apart from fact-paths.ts and its schema: report's worker threads read thousands of documents
// with this alone.

/** A path's segments, split once: a report asks the same few dozen paths of thousands of nodes. */
const SEGMENTS = new Map<string, readonly string[]>();
export function segmentsOf(path: string): readonly string[] {
  let segments = SEGMENTS.get(path);
  if (segments === undefined) {
    segments = path.split(".");
    SEGMENTS.set(path, segments);
  }
  return segments;
}

/** The value at a dotted path of a plain object; undefined when any step is missing. */
export function valueAt(document: unknown, path: string): unknown {
  let current = document;
  for (const segment of segmentsOf(path)) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}
