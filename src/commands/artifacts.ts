import fs from "node:fs";
import path from "node:path";
import { loadArtifactCatalogue } from "../artifacts/catalogue.js";
import { must } from "../at.js";
import { UserError } from "../errors.js";
import { SplitError, splitRelease } from "../install/split.js";

const ARCH_IN_NAME: Record<string, string> = {
  amd64: "x86_64",
  x86_64: "x86_64",
  arm64: "aarch64",
  aarch64: "aarch64",
  s390x: "s390x",
  ppc64le: "ppc64le",
};

/** The architecture a release's tarball names say, or undefined; two different ones are an error. */
function archOfNames(tarballs: string[]): string | undefined {
  const named = new Map<string, string>();
  for (const t of tarballs) {
    const found = /-(amd64|x86_64|arm64|aarch64|s390x|ppc64le)\.tar/.exec(path.basename(t))?.[1];
    if (found) named.set(t, must(ARCH_IN_NAME[found], found));
  }
  const arches = new Set(named.values());
  if (arches.size > 1)
    throw new UserError(
      `the tarballs are of different architectures (${[...named].map(([t, a]) => `${path.basename(t)}: ${a}`).join(", ")}): split one release of one architecture at a time`,
    );
  return [...arches][0];
}

export async function runSplit(
  tarballs: string[],
  options: { out?: string; arch?: string; layers?: string; json?: boolean },
  out: (text: string) => void,
): Promise<number> {
  const target = options.out ?? "";
  if (!target.startsWith("oci-layout:") || target.length === "oci-layout:".length) {
    throw new UserError(`--out ${target || "(missing)"}: expected oci-layout:DIR`);
  }
  // The names first (two architectures), then the files: a missing one, one given twice.
  const named = archOfNames(tarballs);
  for (const t of tarballs) if (!fs.existsSync(t)) throw new UserError(`${t}: no such file`);
  const twice = tarballs.find((t, i) => tarballs.findIndex((u) => path.resolve(u) === path.resolve(t)) !== i);
  if (twice !== undefined)
    throw new UserError(`${twice}: given twice: name each tarball of the release once`);
  const asked = options.arch === undefined ? undefined : ARCH_IN_NAME[options.arch];
  if (options.arch !== undefined && asked === undefined)
    throw new UserError(`--arch ${options.arch}: expected one of x86_64, aarch64, s390x, ppc64le`);
  // The names are the release's word for what its binaries are built for: --arch may not relabel them.
  if (asked !== undefined && named !== undefined && asked !== named)
    throw new UserError(
      `--arch ${options.arch}: the tarballs' names say ${named} (${tarballs.map((t) => path.basename(t)).join(", ")}), and an image labelled ${asked} would hold ${named} binaries`,
    );
  const arch = asked ?? named;
  if (!arch)
    throw new UserError(
      `${tarballs.join(", ")}: the architecture is not in the names (kata-static-<version>-<arch>.tar.*): give --arch`,
    );
  const layers = options.layers ?? "gzip";
  if (layers !== "gzip" && layers !== "tar")
    throw new UserError(`--layers ${layers}: expected gzip (compressed, the default) or tar (uncompressed)`);
  const layout = target.slice("oci-layout:".length);
  let report: Awaited<ReturnType<typeof splitRelease>>;
  try {
    report = await splitRelease(tarballs, layout, loadArtifactCatalogue(), arch, layers);
  } catch (error) {
    if (!(error instanceof SplitError) || !options.json) throw error;
    out(`${JSON.stringify({ problems: error.problems }, null, 2)}\n`);
    return 1;
  }
  if (options.json) {
    out(`${JSON.stringify(report, null, 2)}\n`);
    return 0;
  }
  const owned = report.images.reduce((n, i) => n + i.files, 0);
  const lines = [
    `Kata ${report.version}: ${report.entries} files and links in ${tarballs.length} tarball(s): ${owned} in ${report.images.length} images, ${report.ignored.length} ignored.`,
    `Images in ${layout} (${arch}), tagged by artifact name; digests in kata-release.json:`,
  ];
  const width = Math.max(...report.images.map((i) => i.artifact.length));
  for (const i of report.images)
    lines.push(
      `  ${i.artifact.padEnd(width)}  ${i.digest.slice(0, 19)}…  ${i.files} entr${i.files === 1 ? "y" : "ies"}, ${i.bytes} bytes (layer ${i.layerBytes}${layers === "gzip" ? " compressed" : ""})`,
    );
  if (report.extra.length > 0)
    lines.push(
      "New in this release (artifacts/catalogue.toml does not know them), given to the shims that need them:",
    );
  for (const e of report.extra)
    lines.push(`  ${e.image}: ${e.files.join(", ")} (for ${e.neededBy.join(", ")})`);
  if (report.unclaimed.length > 0)
    lines.push(
      `Unclaimed: ${report.unclaimed.length} entr${report.unclaimed.length === 1 ? "y" : "ies"} the catalogue does not know and no shim's configuration needs, in the image "unclaimed" (no shim pulls it):`,
      ...report.unclaimed.map((p) => `  ${p}`),
    );
  const byReason = new Map<string, string[]>();
  // An artifact's links left out for dangling are named one by one; the catalogue's, by reason.
  for (const i of report.ignored)
    if (i.from === undefined) byReason.set(i.reason, [...(byReason.get(i.reason) ?? []), i.path]);
  if (report.ignored.length > 0) lines.push("Ignored (artifacts/catalogue.toml says why):");
  for (const [reason, paths] of byReason)
    lines.push(`  ${paths.length} entr${paths.length === 1 ? "y" : "ies"}: ${reason}`);
  for (const i of report.ignored.filter((e) => e.from !== undefined))
    lines.push(`  ${i.path} (in ${i.from}): ${i.reason}`);
  for (const i of report.ignored.filter((e) => e.dangling && e.from === undefined))
    lines.push(`  ${i.path}: a link that dangles in these tarballs, not installed`);
  const incomplete = report.shims.filter((s) => s.missing.length > 0);
  if (incomplete.length > 0)
    lines.push("Shims this release cannot install (their configuration names files it lacks):");
  for (const s of incomplete)
    lines.push(`  ${s.shim}: ${s.missing.map((m) => `${m.key} = ${m.path}`).join("; ")}`);
  out(`${lines.join("\n")}\n`);
  return 0;
}
