import fs from "node:fs";
import path from "node:path";
import { loadArtifactCatalogue } from "../artifacts/catalogue.js";
import { must } from "../at.js";
import { UserError } from "../errors.js";
import { type MultiSplitReport, SplitError, type SplitReport, splitReleases } from "../install/split.js";

const ARCH_IN_NAME: Record<string, string> = {
  amd64: "x86_64",
  x86_64: "x86_64",
  arm64: "aarch64",
  aarch64: "aarch64",
  s390x: "s390x",
  ppc64le: "ppc64le",
};

/** The architecture each tarball's name says (undefined: its name says none). */
function archOfName(tarball: string): string | undefined {
  const found = /-(amd64|x86_64|arm64|aarch64|s390x|ppc64le)\.tar/.exec(path.basename(tarball))?.[1];
  return found === undefined ? undefined : must(ARCH_IN_NAME[found], found);
}

/**
 * The tarballs by architecture: their names' (one release per architecture, all given at once),
 * else --arch for all. A name that says none beside names that say several cannot be placed.
 */
function groupByArch(
  tarballs: string[],
  asked: string | undefined,
  askedText: string | undefined,
): Map<string, string[]> {
  const named = new Map(tarballs.map((t) => [t, archOfName(t)]));
  const arches = new Set([...named.values()].filter((a): a is string => a !== undefined));
  // The names are the release's word for what its binaries are built for: --arch may not relabel them.
  if (asked !== undefined && arches.size > 0 && (arches.size > 1 || !arches.has(asked)))
    throw new UserError(
      `--arch ${askedText}: the tarballs' names say ${[...arches].sort().join(", ")} (${tarballs.map((t) => path.basename(t)).join(", ")}), and an image labelled ${asked} would hold ${[...arches].join(" or ")} binaries`,
    );
  const unnamed = tarballs.filter((t) => named.get(t) === undefined);
  if (arches.size > 1 && unnamed.length > 0)
    throw new UserError(
      `${unnamed.map((t) => path.basename(t)).join(", ")}: the architecture is not in the name, beside tarballs of ${[...arches].sort().join(", ")}: name it as Kata does (kata-static-<version>-<arch>.tar.*)`,
    );
  const groups = new Map<string, string[]>();
  for (const t of tarballs) {
    const arch = named.get(t) ?? asked;
    if (arch === undefined)
      throw new UserError(
        `${tarballs.join(", ")}: the architecture is not in the names (kata-static-<version>-<arch>.tar.*): give --arch`,
      );
    groups.set(arch, [...(groups.get(arch) ?? []), t]);
  }
  return groups;
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
  // The files first (a missing one, one given twice), then what their names say.
  const asked = options.arch === undefined ? undefined : ARCH_IN_NAME[options.arch];
  if (options.arch !== undefined && asked === undefined)
    throw new UserError(`--arch ${options.arch}: expected one of x86_64, aarch64, s390x, ppc64le`);
  for (const t of tarballs) if (!fs.existsSync(t)) throw new UserError(`${t}: no such file`);
  const twice = tarballs.find((t, i) => tarballs.findIndex((u) => path.resolve(u) === path.resolve(t)) !== i);
  if (twice !== undefined)
    throw new UserError(`${twice}: given twice: name each tarball of the release once`);
  const groups = groupByArch(tarballs, asked, options.arch);
  const layers = options.layers ?? "gzip";
  if (layers !== "gzip" && layers !== "tar")
    throw new UserError(`--layers ${layers}: expected gzip (compressed, the default) or tar (uncompressed)`);
  const layout = target.slice("oci-layout:".length);
  let split: MultiSplitReport;
  try {
    split = await splitReleases(
      [...groups].map(([arch, list]) => ({ arch, tarballs: list })),
      layout,
      loadArtifactCatalogue(),
      layers,
    );
  } catch (error) {
    if (!(error instanceof SplitError) || !options.json) throw error;
    out(`${JSON.stringify({ problems: error.problems }, null, 2)}\n`);
    return 1;
  }
  const only = split.arches.length === 1 ? split.arches[0] : undefined;
  if (options.json) {
    out(`${JSON.stringify(only?.report ?? split, null, 2)}\n`);
    return 0;
  }
  if (only !== undefined) {
    out(
      `${reportLines(only.report, groups.get(only.arch)?.length ?? 0, layout, only.arch, layers).join("\n")}\n`,
    );
    return 0;
  }
  const width = Math.max(...split.indexes.map((i) => i.artifact.length));
  const lines = [
    `Kata ${split.version} for ${split.arches.map((a) => a.arch).join(", ")}: each artifact an image index under its name in ${layout}, one manifest per architecture that has it; digests in kata-release.json:`,
    ...split.indexes.map(
      (i) => `  ${i.artifact.padEnd(width)}  ${i.digest.slice(0, 19)}…  ${i.arches.join(", ")}`,
    ),
  ];
  for (const { arch, report } of split.arches)
    lines.push("", ...reportLines(report, groups.get(arch)?.length ?? 0, layout, arch, layers));
  out(`${lines.join("\n")}\n`);
  return 0;
}

/** What a split of one architecture made and left out, as text. */
function reportLines(
  report: SplitReport,
  tarballs: number,
  layout: string,
  arch: string,
  layers: string,
): string[] {
  const owned = report.images.reduce((n, i) => n + i.files, 0);
  const lines = [
    `Kata ${report.version}: ${report.entries} files and links in ${tarballs} tarball(s): ${owned} in ${report.images.length} images, ${report.ignored.length} ignored.`,
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
  return lines;
}
