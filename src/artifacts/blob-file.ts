// Reading a blob of an OCI layout on the node's disk: the bytes for the tar reader, and their
// digest computed at the same time on a second thread. Hashing is the largest part of an install
// from a local layout (sha256 runs at ~1.6 GB/s here, slower than reading and writing the same
// bytes), so it runs beside the extraction rather than in line with it; bench/artifacts.bench.ts
// measures the whole against `cp -a`.
import fs from "node:fs";
import { Readable } from "node:stream";
import { Worker } from "node:worker_threads";

// Reads of 1 MB into buffers that are reused: a fresh buffer per read costs more than the read
// (its page faults; measured with fresh 4 MB buffers: 300 MB in 250 ms, against 25 ms reused).
const CHUNK = 1 << 20;
/** Below this, a thread costs more than it saves: the caller hashes in line. */
export const WORKER_THRESHOLD = 16 << 20;

/**
 * The file as a stream of synchronous reads: from the page cache these take less time than a
 * round trip through libuv's thread pool, and the tar reader and the writes are synchronous too.
 */
export function fileStream(file: string): Readable {
  let fd: number | null = null;
  // Chunks come from a ring of buffers, reused: a fresh buffer per read costs more than the read.
  // The reader of this stream consumes each chunk before it asks for more (the tar reader writes
  // entries synchronously; this stream buffers at most one chunk ahead), so a chunk is done with
  // long before the ring comes round to it; test/install/split.test.ts fails with a ring of one.
  const ring = Array.from({ length: 16 }, () => Buffer.allocUnsafe(CHUNK));
  let next = 0;
  return new Readable({
    highWaterMark: CHUNK,
    read() {
      try {
        fd ??= fs.openSync(file, "r");
        const chunk = ring[next++ % ring.length] as Buffer;
        const n = fs.readSync(fd, chunk, 0, CHUNK, null);
        this.push(n > 0 ? chunk.subarray(0, n) : null);
      } catch (error) {
        this.destroy(error as Error);
      }
    },
    destroy(error, callback) {
      if (fd !== null) fs.closeSync(fd);
      fd = null;
      callback(error);
    },
  });
}

// Plain CommonJS for an eval'd worker: the bundle needs no second entry point.
const HASHER = `
const { parentPort, workerData } = require("node:worker_threads");
const fs = require("node:fs");
const { createHash } = require("node:crypto");
const fd = fs.openSync(workerData.file, "r");
const hash = createHash("sha256");
const buffer = Buffer.allocUnsafe(${CHUNK});
let size = 0;
for (let n = fs.readSync(fd, buffer); n > 0; n = fs.readSync(fd, buffer)) {
  hash.update(buffer.subarray(0, n));
  size += n;
}
fs.closeSync(fd);
parentPort.postMessage({ hex: hash.digest("hex"), size });
`;

/** sha256 and size of a file, read and hashed on a worker thread (which never holds the process). */
export function hashFileOnWorker(file: string): Promise<{ hex: string; size: number }> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(HASHER, { eval: true, workerData: { file } });
    worker.unref();
    worker.once("message", resolve);
    worker.once("error", reject);
    worker.once("exit", (code) => {
      if (code !== 0) reject(new Error(`the hashing thread exited with ${code}`));
    });
  });
}
