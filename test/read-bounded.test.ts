// Reading an open file under a bound: its bytes, or null past the bound, whether into a buffer of
// the file's size or into a caller's scratch buffer (a view of it, then).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readBounded } from "../src/read-bounded.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-bounded-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const withFile = (bytes: string, read: (fd: number) => Buffer | null) => {
  const file = path.join(dir, "f");
  fs.writeFileSync(file, bytes);
  const fd = fs.openSync(file, "r");
  try {
    return read(fd)?.toString() ?? null;
  } finally {
    fs.closeSync(fd);
  }
};

describe("readBounded", () => {
  it("reads a file within the bound, and refuses one past it", () => {
    expect(withFile("hello", (fd) => readBounded(fd, 5))).toBe("hello");
    expect(withFile("hello!", (fd) => readBounded(fd, 5))).toBeNull();
  });

  it("reads into a scratch buffer that holds the file, as a view of it", () => {
    const scratch = Buffer.alloc(64);
    let view: Buffer | null = null;
    expect(
      withFile("hello", (fd) => {
        view = readBounded(fd, 100, undefined, scratch);
        return view;
      }),
    ).toBe("hello");
    expect((view as Buffer | null)?.buffer).toBe(scratch.buffer);
  });

  it("holds to the bound with a scratch buffer larger than it, and past a scratch buffer too small", () => {
    expect(withFile("hello!", (fd) => readBounded(fd, 5, undefined, Buffer.alloc(64)))).toBeNull();
    expect(withFile("hello", (fd) => readBounded(fd, 5, undefined, Buffer.alloc(64)))).toBe("hello");
    expect(withFile("a".repeat(100), (fd) => readBounded(fd, 200, undefined, Buffer.alloc(8)))).toBe(
      "a".repeat(100),
    );
  });

  it("refuses a file that grew past the bound after its size was taken", () => {
    expect(withFile("hello world", (fd) => readBounded(fd, 8, 3))).toBeNull();
    expect(withFile("hello world", (fd) => readBounded(fd, 8, 3, Buffer.alloc(64)))).toBeNull();
  });
});
