import { describe, expect, it } from "vitest";
import { fromJson, toJson } from "../src/json-text.js";

describe("JSON with TOML's integers whole", () => {
  it("an int64 past 2^53 is written as its digits and read back exact, as a bigint", () => {
    const value = { compact_force_times: 9223372036854775807n, memory: 2048, name: "qemu" };
    const text = toJson(value, 2);
    expect(text).toContain('"compact_force_times": 9223372036854775807,');
    expect(fromJson(text)).toEqual(value);
    // JSON.parse would have rounded it.
    expect(BigInt(JSON.parse(text).compact_force_times)).not.toBe(9223372036854775807n);
  });

  it("safe numbers stay numbers, floats floats; a string of digits stays a string", () => {
    expect(
      fromJson('{"a": 9007199254740991, "b": 1.5, "c": "12345678901234567890", "d": -9223372036854775808}'),
    ).toEqual({
      a: 9007199254740991,
      b: 1.5,
      c: "12345678901234567890",
      d: -9223372036854775808n,
    });
  });

  it("bad JSON is a SyntaxError either way", () => {
    expect(() => fromJson("{")).toThrow(SyntaxError);
    expect(() => fromJson('{"a": 12345678901234567890')).toThrow();
  });
});
