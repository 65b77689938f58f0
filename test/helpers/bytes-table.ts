// The README's bytes table: what a node of each kind pulls, against the whole release, from the
// sizes in Kata's real release lists (test/fixtures/release/) and the catalogue's artifacts for
// each shim (their dependencies included). Print it with `npx tsx test/helpers/bytes-table.ts`.

import { releaseByArtifact } from "./artifacts.js";
import { catalog } from "./decide.js";
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

export function artifactsFor(arch: string, shims: string[]): string[] {
  const out = new Set<string>();
  for (const shim of shims)
    for (const direct of catalog.directArtifacts(shim, arch))
      for (const a of catalog.dependencies(direct)) out.add(a);
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
