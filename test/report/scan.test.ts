// The scan's key: nodes that read alike at every path their decision and summary read share one
// kind, made once; a document that reads otherwise anywhere on those paths (a key missing, a null,
// a number where an object was) gets its own, or the main thread's full path.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type Kinds, keyOf, keyPaths, scanFile } from "../../src/report/scan.js";
import { scanContext } from "../../src/report/sources.js";
import { factsOf, rules } from "../helpers/decide.js";
import { intelContainerd16 } from "../helpers/nodes.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-scan-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("keyOf", () => {
  it("tells a missing key, a null and a value apart, at every step", () => {
    const keys = [{}, { a: null }, { a: {} }, { a: { b: null } }, { a: { b: 0 } }, { a: 0 }, { a: "0" }].map(
      (d) => keyOf(d, ["a.b"]),
    );
    expect(new Set(keys).size).toBe(keys.length);
    expect(keyOf({ a: { b: [1] }, c: 2 }, ["a.b"])).toBe(keyOf({ a: { b: [1] }, c: 3 }, ["a.b"]));
  });

  it("holds each path once, none inside another read whole", () => {
    expect(keyPaths(["b", "a.x"], ["a", "b.y", "c.z"], ["c.z"])).toEqual(["a", "b", "c.z"]);
  });
});

describe("scanFile", async () => {
  const facts = await factsOf(intelContainerd16());
  const ctx = scanContext(rules);
  const save = (name: string, change: (d: Record<string, unknown>) => void = () => {}) => {
    const document = structuredClone(facts) as unknown as Record<string, unknown>;
    change(document);
    const file = path.join(dir, `${name}.json`);
    fs.writeFileSync(file, JSON.stringify(document));
    return file;
  };
  const kinds: Kinds = { list: [], byKey: new Map() };
  const scan = (name: string, change?: (d: Record<string, unknown>) => void) =>
    scanFile(save(name, change), ctx, kinds);

  it("makes a kind once, for the nodes that differ only in what neither reads", () => {
    const first = scan("a");
    const second = scan("b", (d) => {
      (d.cpu as Record<string, unknown>).count = 99;
      d.problems = [{ source: "storage", reason: "unreadable", path: "/sys/block/sdb" }];
    });
    expect(first).toBe(0);
    expect(second).toBe(0);
    expect(kinds.list).toHaveLength(1);
  });

  it("makes another for a node its summary reads differently, with the same fingerprint", () => {
    const other = scan("c", (d) => {
      (d.kernel as Record<string, unknown>).release = "6.99.0";
    });
    expect(other).toBe(1);
    expect(kinds.list[1]?.fingerprint).toBe(kinds.list[0]?.fingerprint);
    expect(kinds.list[1]?.part.kernel).toBe("6.99.0");
  });

  it("leaves a node whose summary cannot be made to the main thread, however many share its key", () => {
    const broken = (d: Record<string, unknown>) => {
      d.kata = null;
    };
    expect(scan("d", broken)).toBeUndefined();
    expect(scan("e", broken)).toBeUndefined();
  });
});
