// The README's bytes table: what a node of each kind pulls, against the whole release, from the
// sizes in Kata's real release lists (test/fixtures/release/) and what each shim's configuration
// in the release names (the images holding those files, through the links on the way). Print it
// with `npx tsx test/helpers/bytes-table.ts`.

import { ReleaseTree } from "../../src/artifacts/listing.js";
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

/**
 * Bytes of regular files of a whole release (every tarball of the architecture, each path once);
 * with `landing`, only the tarballs that land on a node (kata-static and kata-go-static, not
 * kata-tools-static): the 3,472 MiB for x86_64.
 */
export function releaseBytes(arch: keyof typeof RELEASES, landing = false): number {
  const sizes = new Map<string, number>();
  for (const name of RELEASES[arch])
    if (!landing || !name.startsWith("kata-tools-static"))
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

/** Bytes of the artifacts `artifacts` of `arch`'s release. */
export function artifactBytes(arch: keyof typeof RELEASES, artifacts: string[]): number {
  const byArtifact = releaseByArtifact(arch);
  return artifacts.reduce(
    (n, a) => n + (byArtifact.get(a) ?? []).reduce((m, e) => m + (e.type === "f" ? e.size : 0), 0),
    0,
  );
}

/**
 * A node's floor: the regular files its shims' configurations reach (the shim binary, the
 * hypervisor, kernel, image, firmware, virtiofsd, through the links), the data directory of the
 * QEMU it runs (share/kata-qemu*: the ROMs and firmware QEMU loads itself) and the shims' own
 * configuration files. Nothing less runs its pods.
 */
export function floorBytes(arch: keyof typeof RELEASES, shims: string[]): number {
  const release = fixtureRelease(arch);
  const images = release.images ?? new Map();
  const size = new Map<string, number>();
  for (const listing of images.values())
    for (const e of listing) if (e.type === "file") size.set(e.path, e.size);
  const tree = new ReleaseTree(images.values());
  const needed = new Set<string>();
  for (const shim of shims) {
    const shipped = release.shims.get(shim);
    if (shipped === undefined) throw new Error(`Kata 4.1.0 for ${arch} ships no ${shim}`);
    needed.add(shipped.file);
    for (const chain of releaseChains(shipped, tree))
      for (const p of chain.reached.through) {
        needed.add(p);
        const data = /^bin\/qemu-system-[a-z0-9_]+(-.*)?$/.exec(p);
        if (data)
          for (const f of size.keys()) if (f.startsWith(`share/kata-qemu${data[1] ?? ""}/`)) needed.add(f);
      }
  }
  return [...needed].reduce((n, p) => n + (size.get(p) ?? 0), 0);
}

const mib = (n: number) => (n / 1024 / 1024).toFixed(1);

export function bytesTable(): string {
  const rows = [
    "| node | shims | artifacts pulled | MiB pulled | whole release, MiB | share |",
    "|---|---|---|---:|---:|---:|",
  ];
  for (const { node, arch, shims } of NODES) {
    const artifacts = artifactsFor(arch, shims);
    const bytes = artifactBytes(arch, artifacts);
    const whole = releaseBytes(arch);
    rows.push(
      `| ${node} (${arch}) | ${shims.join(", ")} | ${artifacts.join(", ")} | ${mib(bytes)} | ${mib(whole)} | ${((100 * bytes) / whole).toFixed(0)}% |`,
    );
  }
  return `${rows.join("\n")}\n`;
}

/** Each node's share of the release as it lands on a node, and of its floor (`--shares`). */
export function sharesText(): string {
  const lines: string[] = [];
  for (const { node, arch, shims } of NODES) {
    const whole = releaseBytes(arch, true);
    const pulled = artifactBytes(arch, artifactsFor(arch, shims));
    const floor = floorBytes(arch, shims);
    const pct = (n: number) => ((100 * n) / whole).toFixed(2);
    lines.push(
      `${node} (${arch}): ${mib(pulled)} of ${mib(whole)} MiB = ${pct(pulled)} %, floor ${mib(floor)} MiB = ${pct(floor)} %`,
    );
  }
  return `${lines.join("\n")}\n`;
}

if (process.argv[1]?.endsWith("bytes-table.ts"))
  process.stdout.write(process.argv.includes("--shares") ? sharesText() : bytesTable());
