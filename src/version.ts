// Versions, read one way everywhere: found in a program's output ("QEMU emulator version 8.2.2",
// "containerd github.com/containerd/containerd 1.6.20~ds1"), split into numbers, and compared.
import { itemAt } from "./at.js";

/** The first version number in a program's output ("v1.31.2+k3s1" → "1.31.2"), or null. */
export function versionIn(output: string): string | null {
  return /\bv?(\d+\.\d+(?:\.\d+)?)/.exec(output)?.[1] ?? null;
}

/** A version's numbers ("v1.6.20~ds1" → [1, 6, 20]), or null when it does not start with one. */
export function versionParts(text: string): number[] | null {
  const match = /^v?(\d+(?:\.\d+)*)/.exec(text.trim());
  return match ? itemAt(match, 1, "the version").split(".").map(Number) : null;
}

/** -1, 0 or 1; missing parts count as 0 (2.0 equals 2.0.0). */
export function compareVersions(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return 0;
}
