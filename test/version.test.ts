import { describe, expect, it } from "vitest";
import { compareVersions, versionIn, versionParts } from "../src/version.js";

describe("versions", () => {
  it("are found in a program's output", () => {
    expect(versionIn("QEMU emulator version 8.2.2 (Debian 1:8.2.2+ds-0ubuntu1)")).toBe("8.2.2");
    expect(versionIn("containerd github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1")).toBe("1.6.20");
    expect(versionIn("k3s version v1.31.2+k3s1 (6da2fe5d)")).toBe("1.31.2");
    expect(versionIn("no version here")).toBeNull();
  });

  it("split into numbers and compared, missing parts as 0", () => {
    expect(versionParts("v1.6.20~ds1")).toEqual([1, 6, 20]);
    expect(versionParts("unknown")).toBeNull();
    expect(compareVersions([2, 0], [2, 0, 0])).toBe(0);
    expect(compareVersions([1, 7], [1, 6, 99])).toBe(1);
    expect(compareVersions([1, 6, 20], [1, 7])).toBe(-1);
  });
});
