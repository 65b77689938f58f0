import { describe, expect, it } from "vitest";
import { closest } from "../src/closest.js";

describe("closest", () => {
  it("suggests the one name a typo is near: a letter missing, extra, wrong or swapped", () => {
    const keys = [
      "shims",
      "default_shim",
      "runtime",
      "artifacts",
      "config",
      "custom_runtimes",
      "handlers",
      "ignore",
    ];
    expect(closest("artifact", keys)).toBe("artifacts");
    expect(closest("defualt_shim", keys)).toBe("default_shim");
    expect(closest("confg", keys)).toBe("config");
    expect(closest("Handlers", keys)).toBe("handlers");
  });

  it("suggests nothing when nothing is near, when two are as near, or for a name that is there", () => {
    expect(closest("kernel", ["shims", "config"])).toBeNull();
    expect(closest("qemu", ["qemu-snp", "qemu-tdx"])).toBeNull();
    expect(closest("ab", ["ac", "ad"])).toBeNull();
    expect(closest("shims", ["shims", "shim"])).toBeNull();
  });
});
