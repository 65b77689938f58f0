import path from "node:path";
import { UserError } from "../errors.js";
import { loadArtifactCatalogue } from "../install/catalogue.js";
import { splitRelease } from "../install/split.js";

const ARCH_IN_NAME: Record<string, string> = {
  amd64: "x86_64",
  x86_64: "x86_64",
  arm64: "aarch64",
  aarch64: "aarch64",
  s390x: "s390x",
  ppc64le: "ppc64le",
};

export async function runSplit(
  tarball: string,
  options: { out?: string; arch?: string; layers?: string; json?: boolean },
  out: (text: string) => void,
): Promise<number> {
  const target = options.out ?? "";
  if (!target.startsWith("oci-layout:") || target.length === "oci-layout:".length) {
    throw new UserError(`--out ${target || "(missing)"}: expected oci-layout:DIR`);
  }
  const named = /-(amd64|x86_64|arm64|aarch64|s390x|ppc64le)\.tar/.exec(path.basename(tarball))?.[1];
  const arch = options.arch ?? (named ? ARCH_IN_NAME[named] : undefined);
  if (!arch)
    throw new UserError(
      `${tarball}: the architecture is not in its name (kata-static-<version>-<arch>.tar.*): give --arch`,
    );
  const layers = options.layers ?? "gzip";
  if (layers !== "gzip" && layers !== "tar")
    throw new UserError(`--layers ${layers}: expected gzip (compressed, the default) or tar (uncompressed)`);
  const layout = target.slice("oci-layout:".length);
  const report = await splitRelease(tarball, layout, loadArtifactCatalogue(), arch, layers);
  if (options.json) {
    out(`${JSON.stringify(report, null, 2)}\n`);
    return 0;
  }
  const lines = [`Images in ${layout} (${arch}), tagged by artifact name; digests in kata-release.json:`];
  const width = Math.max(...report.images.map((i) => i.artifact.length));
  for (const i of report.images)
    lines.push(
      `  ${i.artifact.padEnd(width)}  ${i.digest.slice(0, 19)}…  ${i.files} files, ${i.layerBytes} bytes${layers === "gzip" ? " compressed" : ""}`,
    );
  if (report.unclaimed.length > 0) {
    lines.push(`Not in any artifact (${report.unclaimed.length}), left out:`);
    for (const file of report.unclaimed) lines.push(`  ${file}`);
  }
  out(`${lines.join("\n")}\n`);
  return 0;
}
