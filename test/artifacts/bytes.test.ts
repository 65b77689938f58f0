// What a node pulls of Kata 4.1.0 (the real sizes of test/fixtures/release/*.list), against the
// release as it lands on a node (kata-static and kata-go-static, a path in both counted once) and
// against the node's floor (what its configurations reach: test/helpers/bytes-table.ts floorBytes).
// Print the figures with `npx tsx test/helpers/bytes-table.ts --shares`. Measured (h-bytes):
//   plain qemu (x86_64): 390.9 of 3472.1 MiB = 11.26 %, floor 390.1 MiB = 11.24 % (before: 489.7 MiB = 14.11 %)
//   NVIDIA GPU (x86_64): 584.0 of 3472.1 MiB = 16.82 %, floor 583.2 MiB = 16.80 % (before: 721.1 MiB = 20.77 %)
import { describe, expect, it } from "vitest";
import { artifactBytes, artifactsFor, floorBytes, releaseBytes } from "../helpers/bytes-table.js";

const MiB = 1024 * 1024;
const share = (arch: "x86_64" | "aarch64", shims: string[]) => {
  const whole = releaseBytes(arch, true);
  const pulled = artifactBytes(arch, artifactsFor(arch, shims));
  return { pulled: (100 * pulled) / whole, floor: (100 * floorBytes(arch, shims)) / whole, whole };
};

describe("the bytes a node pulls of Kata 4.1.0", () => {
  it("counts the release as it lands on a node: 3,472 MiB for x86_64", () => {
    expect(Math.round(releaseBytes("x86_64", true) / MiB)).toBe(3472);
  });

  it("a plain qemu node pulls at most 12 % of the release (11.3 %: its floor)", () => {
    const qemu = share("x86_64", ["qemu"]);
    expect(qemu.pulled).toBeLessThanOrEqual(12);
    expect(qemu.floor).toBeGreaterThan(11);
    // Neither the admin tools nor the kernel's vmlinuz, config and System.map.
    expect(artifactsFor("x86_64", ["qemu"])).toEqual([
      "base",
      "guest-image",
      "guest-kernel",
      "meta",
      "qemu",
      "virtiofsd",
    ]);
  });

  it("a GPU node pulls within the same margin of its floor (16.8 %, its floor)", () => {
    const qemu = share("x86_64", ["qemu"]);
    const gpu = share("x86_64", ["qemu-nvidia-gpu"]);
    expect(gpu.pulled - gpu.floor).toBeLessThanOrEqual(12 - qemu.floor);
    // It boots the compressed kernel its configuration names, not the vmlinux beside it.
    expect(artifactsFor("x86_64", ["qemu-nvidia-gpu"])).toContain("nvidia-gpu-kernel-vmlinuz");
    expect(artifactsFor("x86_64", ["qemu-nvidia-gpu"])).not.toContain("nvidia-gpu-kernel");
  });

  it.each([
    ["x86_64", "qemu-snp"],
    ["x86_64", "clh"],
    ["aarch64", "qemu"],
  ] as const)("%s %s pulls within that margin of its floor too", (arch, shim) => {
    const s = share(arch, [shim]);
    expect(s.pulled - s.floor).toBeLessThanOrEqual(12 - share("x86_64", ["qemu"]).floor);
  });
});
