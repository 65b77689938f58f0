// The README's bytes table: what a node of each kind pulls, against the whole release, from the
// sizes in Kata's real release lists (test/fixtures/release/) and what each shim's configuration
// in the release names (the images holding those files, through the links on the way). Print it
// with `npx tsx test/helpers/bytes-table.ts`.

import { ReleaseTree } from "../../src/install/listing.js";
import { releaseChains } from "../../src/release/needs.js";
import { fixtureRelease, releaseByArtifact } from "./artifacts.js";
import { RELEASES, readList } from "./release.js";

export const NODES: Array<{ node: string; arch: keyof typeof RELEASES; shims: string[] }> = [
  { node: "plain qemu", arch: "x86_64", shims: ["qemu"] },
  { node: "clh", arch: "x86_64", shims: ["clh"] },
  { node: "SEV-SNP", arch: "x86_64", shims: ["qemu-snp"] },
  { node: "NVIDIA GPU", arch: "x86_64", shims: ["qemu-nvidia-gpu"] },
  { node: "aarch64 qemu", arch: "aarch64", shims: ["qemu"] },
];

/** Bytes of regular files of a whole release (every tarball of the architecture, each path once). */
export function releaseBytes(arch: keyof typeof RELEASES): number {
  const sizes = new Map<string, number>();
  for (const name of RELEASES[arch])
    for (const e of readList(name)) if (e.type === "f") sizes.set(e.path, e.size);
  return [...sizes.values()].reduce((a, b) => a + b, 0);
}

export function artifactsFor(arch: keyof typeof RELEASES, shims: string[]): string[] {
  const release = fixtureRelease(arch);
  const images = release.images ?? new Map();
  const owner = new Map<string, string>();
  for (const [image, listing] of images) for (const e of listing) owner.set(e.path, image);
  const tree = new ReleaseTree(images.values());
  const out = new Set<string>(["meta"]);
  for (const shim of shims) {
    const shipped = release.shims.get(shim);
    if (shipped === undefined) throw new Error(`Kata 4.1.0 for ${arch} ships no ${shim}`);
    for (const chain of releaseChains(shipped, tree))
      for (const p of chain.reached.through) {
        const image = owner.get(p);
        if (image !== undefined) out.add(image);
      }
  }
  return [...out].sort();
}

const mib = (n: number) => (n / 1024 / 1024).toFixed(1);

export function bytesTable(): string {
  const rows = [
    "| node | shims | artifacts pulled | MiB pulled | whole release, MiB | share |",
    "|---|---|---|---:|---:|---:|",
  ];
  for (const { node, arch, shims } of NODES) {
    const byArtifact = releaseByArtifact(arch);
    const artifacts = artifactsFor(arch, shims);
    const bytes = artifacts.reduce(
      (n, a) => n + (byArtifact.get(a) ?? []).reduce((m, e) => m + (e.type === "f" ? e.size : 0), 0),
      0,
    );
    const whole = releaseBytes(arch);
    rows.push(
      `| ${node} (${arch}) | ${shims.join(", ")} | ${artifacts.join(", ")} | ${mib(bytes)} | ${mib(whole)} | ${((100 * bytes) / whole).toFixed(0)}% |`,
    );
  }
  return `${rows.join("\n")}\n`;
}

if (process.argv[1]?.endsWith("bytes-table.ts")) process.stdout.write(bytesTable());
