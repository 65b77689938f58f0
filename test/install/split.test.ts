// `artifacts split`: a Kata release tarball (zstd, xz or gzip) becomes one image per artifact in an
// OCI layout; installing from it gives the release's files; what no artifact claims is reported.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { directorySource } from "../../src/install/artifacts.js";
import { WORKER_THRESHOLD } from "../../src/install/blob-file.js";
import { loadArtifactCatalogue } from "../../src/artifacts/catalogue.js";
import { ociLayoutSource } from "../../src/install/oci-layout.js";
import { RELEASE_MANIFEST, splitRelease } from "../../src/install/split.js";
import { artifactDir, collectFiles, fileKey, linkKernelAsReleased } from "../helpers/artifacts.js";

const catalogue = loadArtifactCatalogue();
const made: string[] = [];
afterAll(() => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});
const tmp = (prefix: string) => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(d);
  return d;
};

/** A release tarball as Kata publishes one: everything under opt/kata/, compressed by `tool`. */
function release(dir: string, tool: "zstd" | "xz" | "gzip"): string {
  const tree = tmp("kata-install-release-");
  for (const artifact of fs.readdirSync(dir))
    fs.cpSync(path.join(dir, artifact), tree, { recursive: true, verbatimSymlinks: true });
  fs.mkdirSync(path.join(tree, "opt/kata/share/doc"), { recursive: true });
  fs.writeFileSync(path.join(tree, "opt/kata/share/doc/README"), "not an artifact's\n");
  const tar = path.join(tmp("kata-install-tarball-"), "kata-static-3.9.0-amd64.tar");
  execFileSync("tar", ["-C", tree, "-cf", tar, "opt"]);
  const suffix = { zstd: "zst", xz: "xz", gzip: "gz" }[tool];
  execFileSync(tool, tool === "zstd" ? ["-q", "--rm", tar] : [tar]);
  return `${tar}.${suffix}`;
}

describe("artifacts split", () => {
  const dir = artifactDir();
  made.push(dir);
  linkKernelAsReleased(dir);

  it.each(["zstd", "xz", "gzip"] as const)(
    "splits a %s tarball into images that install the release's files",
    async (tool) => {
      const layout = tmp("kata-install-split-layout-");
      const report = await splitRelease(release(dir, tool), layout, catalogue, "x86_64");
      expect(report.images.map((i) => i.artifact)).toEqual([...catalogue.keys()].sort());
      expect(report.unclaimed).toEqual(["opt/kata/share/doc/README"]);
      const names = [...catalogue.keys()];
      const fromLayout = await collectFiles(ociLayoutSource(layout, catalogue, "x86_64"), names);
      const fromDir = await collectFiles(directorySource(dir, catalogue), names);
      expect(fromLayout.map(fileKey).sort()).toEqual(fromDir.map(fileKey).sort());
      const manifest = JSON.parse(fs.readFileSync(path.join(layout, RELEASE_MANIFEST), "utf8"));
      const index = JSON.parse(fs.readFileSync(path.join(layout, "index.json"), "utf8"));
      for (const image of report.images) {
        expect(manifest.artifacts[image.artifact].digest).toBe(image.digest);
        expect(
          index.manifests.find(
            (m: { annotations: Record<string, string> }) =>
              m.annotations["org.opencontainers.image.ref.name"] === image.artifact,
          ).digest,
        ).toBe(image.digest);
      }
    },
  );

  it("with --layers tar, writes uncompressed layers; large ones stream in whole, and a flipped byte is refused", async () => {
    // Megabytes of random bytes in files of odd sizes: past the size where the blob is hashed on a
    // second thread, and many read chunks long, so a reused chunk would show as changed bytes.
    const big = tmp("kata-install-big-");
    fs.cpSync(dir, big, { recursive: true, verbatimSymlinks: true });
    const bin = path.join(big, "qemu/opt/kata/share/kata-qemu/qemu");
    for (let i = 0; i < 12; i++)
      fs.writeFileSync(path.join(bin, `rom-${i}.bin`), randomBytes((1 << 20) * 2 + i * 4099));
    const layout = tmp("kata-install-split-tar-");
    const report = await splitRelease(release(big, "gzip"), layout, catalogue, "x86_64", "tar");
    const qemu = report.images.find((i) => i.artifact === "qemu");
    expect(qemu?.layerBytes).toBeGreaterThan(WORKER_THRESHOLD);
    const manifestOf = (artifact: string) => {
      const index = JSON.parse(fs.readFileSync(path.join(layout, "index.json"), "utf8"));
      const digest = index.manifests.find(
        (m: { annotations: Record<string, string> }) =>
          m.annotations["org.opencontainers.image.ref.name"] === artifact,
      ).digest;
      return JSON.parse(fs.readFileSync(path.join(layout, "blobs/sha256", digest.slice(7)), "utf8"));
    };
    expect(manifestOf("qemu").layers[0].mediaType).toBe("application/vnd.oci.image.layer.v1.tar");
    const fromLayout = await collectFiles(ociLayoutSource(layout, catalogue, "x86_64"), ["qemu"]);
    const fromDir = await collectFiles(directorySource(big, catalogue), ["qemu"]);
    expect(fromLayout.map(fileKey).sort()).toEqual(fromDir.map(fileKey).sort());

    const layer = manifestOf("qemu").layers[0].digest as string;
    const blob = path.join(layout, "blobs/sha256", layer.slice(7));
    const bytes = fs.readFileSync(blob);
    bytes[bytes.length >> 1] = (bytes[bytes.length >> 1] as number) ^ 1;
    fs.writeFileSync(blob, bytes);
    await expect(collectFiles(ociLayoutSource(layout, catalogue, "x86_64"), ["qemu"])).rejects.toThrow(
      `qemu layer ${layer}: blob ${layer} does not match its digest`,
    );
  });

  it("is reproducible: the same tarball gives the same digests", async () => {
    const tarball = release(dir, "gzip");
    const a = await splitRelease(tarball, tmp("kata-install-split-a-"), catalogue, "x86_64");
    const b = await splitRelease(tarball, tmp("kata-install-split-b-"), catalogue, "x86_64");
    expect(a.images.map((i) => i.digest)).toEqual(b.images.map((i) => i.digest));
  });

  it("installs refuse an image the release manifest does not pin", async () => {
    const layout = tmp("kata-install-split-pin-");
    const report = await splitRelease(release(dir, "gzip"), layout, catalogue, "x86_64");
    const index = JSON.parse(fs.readFileSync(path.join(layout, "index.json"), "utf8"));
    const qemu = index.manifests.find(
      (m: { annotations: Record<string, string> }) =>
        m.annotations["org.opencontainers.image.ref.name"] === "qemu",
    );
    const base = report.images.find((i) => i.artifact === "base")?.digest;
    qemu.digest = base;
    qemu.size = fs.statSync(path.join(layout, "blobs/sha256", (base as string).slice(7))).size;
    fs.writeFileSync(path.join(layout, "index.json"), JSON.stringify(index));
    await expect(collectFiles(ociLayoutSource(layout, catalogue, "x86_64"), ["qemu"])).rejects.toThrow(
      /the image tagged "qemu" is sha256:[0-9a-f]+, but kata-release\.json pins sha256:/,
    );
  });
});
