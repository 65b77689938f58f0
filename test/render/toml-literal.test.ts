import fc from "fast-check";
import { parse } from "smol-toml";
import { describe, expect, it } from "vitest";
import { TomlValueError, tomlComment, tomlKey, tomlLiteral } from "../../src/render/toml-literal.js";

const roundTrip = (value: unknown) => (parse(`v = ${tomlLiteral(value)}\n`) as { v: unknown }).v;

describe("the TOML literal filter", () => {
  it("keeps an injection attempt one string", () => {
    const evil = 'x"\n[evil]\ny = 1';
    const doc = parse(`[a]\nkey = ${tomlLiteral(evil)}\n`) as Record<string, unknown>;
    expect(doc).toEqual({ a: { key: evil } });
  });

  it("round-trips strings of any characters, numbers, booleans and lists", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 40 }), (s) => {
        expect(roundTrip(s)).toBe(s);
      }),
      { numRuns: 300 },
    );
    expect(roundTrip(2048)).toBe(2048);
    expect(roundTrip(1.5)).toBe(1.5);
    expect(tomlLiteral(2.0)).toBe("2");
    expect(tomlLiteral(1e21)).toBe("1e+21");
    expect(roundTrip(true)).toBe(true);
    expect(roundTrip(["--thread-pool-size=1", 'a"b'])).toEqual(["--thread-pool-size=1", 'a"b']);
    expect(roundTrip([])).toEqual([]);
  });

  it("refuses what is not a TOML value", () => {
    expect(() => tomlLiteral(null)).toThrow(TomlValueError);
    expect(() => tomlLiteral({ a: 1 })).toThrow(/not a TOML value: object/);
    expect(tomlLiteral(2 ** 60)).toBe("1152921504606847000.0");
  });

  it("quotes keys that need it and keeps comments on one line", () => {
    expect(tomlKey("kata-qemu")).toBe("kata-qemu");
    expect(tomlKey("io.containerd.grpc.v1.cri")).toBe('"io.containerd.grpc.v1.cri"');
    expect(tomlComment("a\nb = 1\r\n[x]")).toBe("a b = 1 [x]");
  });
});
