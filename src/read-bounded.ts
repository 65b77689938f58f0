// Reading an open file under a size bound, in one module of its own: input-file.ts, install's
// reads and report's worker threads (which load no more than they need) share it.
import fs from "node:fs";

/**
 * The bytes of the open file `fd`, at most `maxBytes` (null past them: a file that grew as it was
 * read, or one whose size procfs does not say). One buffer of the size the file says it has, so
 * that reading a small file allocates no more than it holds — or `scratch` when it holds that: the
 * bytes are then a view of it, good until it is read into again (report's scan reads thousands of
 * files into one, and allocating a buffer for each costs it more in collecting them).
 */
export function readBounded(
  fd: number,
  maxBytes: number,
  size = fs.fstatSync(fd).size,
  scratch?: Buffer,
): Buffer | null {
  const wanted = Math.min(maxBytes, size) + 1;
  let buffer = scratch !== undefined && scratch.length >= wanted ? scratch : Buffer.allocUnsafe(wanted);
  let total = 0;
  for (;;) {
    if (total === buffer.length) {
      if (total > maxBytes) return null;
      const bigger = Buffer.allocUnsafe(Math.min(maxBytes + 1, buffer.length * 2));
      buffer.copy(bigger, 0, 0, total);
      buffer = bigger;
    }
    const n = fs.readSync(fd, buffer, total, buffer.length - total, null);
    // (A scratch buffer larger than the bound is not stopped at it.)
    if (n === 0) return total > maxBytes ? null : buffer.subarray(0, total);
    total += n;
  }
}
