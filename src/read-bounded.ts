// Reading an open file under a size bound, in one module of its own: input-file.ts, install's
// reads and report's worker threads (which load no more than they need) share it.
import fs from "node:fs";

/**
 * The bytes of the open file `fd`, at most `maxBytes` (null past them: a file that grew as it was
 * read, or one whose size procfs does not say). One buffer of the size the file says it has, so
 * that reading a small file allocates no more than it holds.
 */
export function readBounded(fd: number, maxBytes: number, size = fs.fstatSync(fd).size): Buffer | null {
  let buffer = Buffer.allocUnsafe(Math.min(maxBytes, size) + 1);
  let total = 0;
  for (;;) {
    if (total === buffer.length) {
      if (total > maxBytes) return null;
      const bigger = Buffer.allocUnsafe(Math.min(maxBytes + 1, buffer.length * 2));
      buffer.copy(bigger, 0, 0, total);
      buffer = bigger;
    }
    const n = fs.readSync(fd, buffer, total, buffer.length - total, null);
    if (n === 0) return buffer.subarray(0, total);
    total += n;
  }
}
