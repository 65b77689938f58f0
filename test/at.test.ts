import { describe, expect, it } from "vitest";
import { itemAt, must } from "../src/at.js";

describe("itemAt", () => {
  it("returns the element, counting from the end for a negative index", () => {
    expect(itemAt(["a", "b", "c"], 1, "x")).toBe("b");
    expect(itemAt(["a", "b", "c"], -1, "x")).toBe("c");
    expect(itemAt(/^(\w+)=(.*)$/.exec("k=") as RegExpExecArray, 2, "x")).toBe("");
  });

  it("throws, naming what was missing, outside the array or on an unmatched group", () => {
    expect(() => itemAt(["a"], 1, "the second part")).toThrow(
      "internal error: the second part is missing (index 1 of 1)",
    );
    expect(() => itemAt(/(a)|(b)/.exec("a") as RegExpExecArray, 2, "group b")).toThrow(/group b is missing/);
  });
});

describe("must", () => {
  it("returns a set value, falsy ones included", () => {
    expect(must(0, "n")).toBe(0);
    expect(must("", "s")).toBe("");
    expect(must(false, "b")).toBe(false);
  });

  it("throws, naming what was missing, on undefined and null", () => {
    expect(() => must(undefined, "the link's target")).toThrow(
      "internal error: the link's target is missing",
    );
    expect(() => must(null, "the digest")).toThrow(/the digest is missing/);
  });
});
