// `artifacts split`: a Kata release tarball (zstd, xz or gzip) becomes one image per artifact in an
// OCI layout; installing from it gives the release's files; what no artifact claims is reported.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { WORKER_THRESHOLD } from "../../src/artifacts/blob-file.js";
import { loadArtifactCatalogue, parseArtifactCatalogue } from "../../src/artifacts/catalogue.js";
import { ociLayoutSource } from "../../src/artifacts/oci-layout.js";
import { directorySource } from "../../src/artifacts/source.js";
import { RELEASE_MANIFEST, SplitError, splitRelease } from "../../src/install/split.js";
import { artifactDir, collectFiles, fileKey } from "../helpers/artifacts.js";
import { buildRelease, RELEASES, readList } from "../helpers/release.js";

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

/** A release tarball as Kata publishes one (from a dir: source): everything under opt/kata/, compressed by `tool`. */
function release(dir: string, tool: "zstd" | "xz" | "gzip"): string {
  const tree = tmp("kata-install-release-");
  for (const artifact of fs.readdirSync(dir))
    fs.cpSync(path.join(dir, artifact), tree, { recursive: true, verbatimSymlinks: true });
  const tar = path.join(tmp("kata-install-tarball-"), "kata-static-3.9.0-amd64.tar");
  execFileSync("tar", ["-C", tree, "-cf", tar, "opt"]);
  const suffix = { zstd: "zst", xz: "xz", gzip: "gz" }[tool];
  execFileSync(tool, tool === "zstd" ? ["-q", "--rm", tar] : [tar]);
  return `${tar}.${suffix}`;
}

describe("artifacts split", () => {
  const dir = artifactDir();
  made.push(dir);

  it.each(["zstd", "xz", "gzip"] as const)(
    "splits a %s tarball into images that install the release's files",
    async (tool) => {
      const layout = tmp("kata-install-split-layout-");
      const report = await splitRelease(release(dir, tool), layout, catalogue, "x86_64");
      const names = fs.readdirSync(dir).sort();
      expect(report.images.map((i) => i.artifact)).toEqual(names);
      expect(report.ignored).toEqual([]);
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

describe("artifacts split of Kata's real release (4.1.0, every tarball at once)", () => {
  const entriesOf = (arch: keyof typeof RELEASES) => {
    const unique = new Map<string, ReturnType<typeof readList>[number]>();
    for (const name of RELEASES[arch])
      for (const e of readList(name)) if (e.type !== "d") unique.set(e.path, e);
    return unique;
  };

  it.each(["x86_64", "aarch64"] as const)(
    "%s: every file and link goes to one artifact or is ignored with a reason",
    async (arch) => {
      const { dir, tarballs } = buildRelease(arch);
      made.push(dir);
      const layout = tmp("kata-install-split-real-");
      const report = await splitRelease(tarballs, layout, catalogue, arch, "tar");
      const entries = entriesOf(arch);
      expect(report.entries).toBe(entries.size);
      const owned = report.images.reduce((n, i) => n + i.files, 0);
      expect(owned + report.ignored.length).toBe(entries.size);
      for (const i of report.ignored) expect(i.reason.length, i.path).toBeGreaterThan(20);
      // The guest image goes with the link that names it: the bug that left Kata unbootable.
      const image = await ociLayoutSource(layout, catalogue, arch).list("guest-image");
      expect(image.map((e) => e.path).sort()).toEqual([
        "share/kata-containers/kata-containers.img",
        "share/kata-containers/kata-ubuntu-noble.image",
        "share/kata-containers/root_hash_base.txt",
      ]);
      // The release manifest records what the README's bytes table is made of.
      const release = JSON.parse(fs.readFileSync(path.join(layout, RELEASE_MANIFEST), "utf8"));
      expect(release.version).toBe("4.1.0");
      expect(release.artifacts["guest-image"].files).toBe(3);
      // Nothing of the Go configurations is dangling once kata-go-static is given too.
      expect(report.ignored.filter((i) => i.dangling)).toEqual([]);
    },
  );

  it("kata-static alone: its configuration.toml link dangles, no shim needs it: said, and not installed", async () => {
    const { dir, tarballs } = buildRelease("x86_64");
    made.push(dir);
    const layout = tmp("kata-install-split-static-");
    const report = await splitRelease([tarballs[0] as string], layout, catalogue, "x86_64", "tar");
    expect(report.ignored.filter((i) => i.dangling).map((i) => i.path)).toEqual([
      "share/defaults/kata-containers/configuration.toml",
    ]);
    const meta = await ociLayoutSource(layout, catalogue, "x86_64").list("meta");
    expect(meta.map((e) => e.path)).not.toContain("share/defaults/kata-containers/configuration.toml");
    // The Rust runtime's configurations are all there, and so its shims.
    expect(report.shims.map((s) => s.shim)).toContain("qemu-runtime-rs");
    expect(report.shims.every((s) => s.runtime === "rust")).toBe(true);
  });

  /** The split of an edited release fails naming each of `problems`, and writes no layout. */
  async function refused(edit: (name: string, tree: string) => void, problems: RegExp[], cat = catalogue) {
    const { dir, tarballs } = buildRelease("x86_64", edit);
    made.push(dir);
    const layout = path.join(tmp("kata-install-split-refused-"), "layout");
    const error = await splitRelease(tarballs, layout, cat, "x86_64").then(
      () => null,
      (e: Error) => e,
    );
    expect(error).toBeInstanceOf(SplitError);
    for (const p of problems)
      expect(
        (error as SplitError).problems.some((x) => p.test(x)),
        `${p}\n${error?.message}`,
      ).toBe(true);
    expect(fs.existsSync(layout)).toBe(false);
  }

  it("a link that dangles where a shim needs it, a path two tarballs disagree on: each named, nothing written", async () => {
    await refused(
      (name, tree) => {
        const share = path.join(tree, "opt/kata/share/kata-containers");
        // Gone from every tarball: kata-containers.img, which qemu's configuration names, dangles.
        fs.rmSync(path.join(share, "kata-ubuntu-noble.image"), { force: true });
        if (name.startsWith("kata-static-")) {
          fs.rmSync(path.join(share, "vmlinuz-6.18.35-202"));
          fs.writeFileSync(path.join(share, "vmlinuz-6.18.35-202"), "other bytes\n");
        }
      },
      [
        /share\/defaults\/kata-containers\/configuration-qemu\.toml: hypervisor\.qemu\.image = \/opt\/kata\/share\/kata-containers\/kata-containers\.img: the link share\/kata-containers\/kata-containers\.img dangles/,
        /share\/kata-containers\/vmlinuz-6\.18\.35-202: other bytes in kata-go-static-4\.1\.0-amd64\.tar\.zst than in kata-static-4\.1\.0-amd64\.tar\.zst/,
      ],
    );
  });

  it("files the catalogue does not know never stop it: a needed one goes with its shim, the rest into the unclaimed image", async () => {
    // The catalogue forgets the guest image's versioned file (the mistake that once left Kata
    // unbootable): the release's own links decide where it goes, with the link that names it.
    const text = fs
      .readFileSync(path.resolve("artifacts/catalogue.toml"), "utf8")
      .replace('  "share/kata-containers/kata-{os}.image",\n', "");
    const { dir, tarballs } = buildRelease("x86_64", (name, tree) => {
      if (!name.startsWith("kata-static-")) return;
      fs.writeFileSync(path.join(tree, "opt/kata/bin/kata-surprise"), "#!/bin/sh\n");
      fs.symlinkSync("nowhere", path.join(tree, "opt/kata/share/kata-containers/dangling-news"));
    });
    made.push(dir);
    const layout = tmp("kata-install-split-unknown-");
    const report = await splitRelease(
      tarballs,
      layout,
      parseArtifactCatalogue("catalogue.toml", text),
      "x86_64",
    );
    const source = ociLayoutSource(layout, catalogue, "x86_64");
    expect((await source.list("guest-image")).map((e) => e.path).sort()).toEqual([
      "share/kata-containers/kata-containers.img",
      "share/kata-containers/kata-ubuntu-noble.image",
      "share/kata-containers/root_hash_base.txt",
    ]);
    expect(report.unclaimed).toEqual(["bin/kata-surprise", "share/kata-containers/dangling-news"]);
    expect((await source.list("unclaimed")).map((e) => e.path).sort()).toEqual(report.unclaimed);
    expect(report.shims.find((s) => s.shim === "qemu")?.images).toEqual([
      "base",
      "guest-image",
      "guest-kernel",
      "meta",
      "qemu",
      "virtiofsd",
    ]);
    expect(report.shims.some((s) => s.images.includes("unclaimed"))).toBe(false);
    // The Go runtime's admin tools and the kernel files beside the one a configuration boots are
    // images of their own, which the plain qemu shim does not need.
    expect((await source.list("base")).map((e) => e.path)).toEqual(["bin/containerd-shim-kata-v2"]);
    expect((await source.list("go-tools")).map((e) => e.path).sort()).toEqual([
      "bin/kata-collect-data.sh",
      "bin/kata-monitor",
      "bin/kata-runtime",
    ]);
    expect((await source.list("guest-kernel")).map((e) => e.path).sort()).toEqual([
      "share/kata-containers/vmlinux-6.18.35-202",
      "share/kata-containers/vmlinux.container",
    ]);
    expect((await source.list("guest-kernel-vmlinuz")).map((e) => e.path).sort()).toEqual([
      "share/kata-containers/vmlinuz-6.18.35-202",
      "share/kata-containers/vmlinuz.container",
    ]);
    expect((await source.list("guest-kernel-extras")).map((e) => e.path).sort()).toEqual([
      "share/kata-containers/System.map-6.18.35-202",
      "share/kata-containers/config-6.18.35-202",
    ]);
    expect((await source.list("nvidia-gpu-kernel-extras")).map((e) => e.path).sort()).toEqual([
      "share/kata-containers/System.map-6.18.35-202-nvidia-gpu",
      "share/kata-containers/config-6.18.35-202-nvidia-gpu",
    ]);
    // The SEV-SNP shim boots the vmlinuz: it gets it through its configuration's path.
    expect(report.shims.find((s) => s.shim === "qemu-snp")?.images).toContain("guest-kernel-vmlinuz");
    expect(report.shims.find((s) => s.shim === "qemu-snp")?.images).not.toContain("guest-kernel");
    expect(report.shims.some((s) => s.images.some((i) => i.endsWith("-extras") || i === "go-tools"))).toBe(
      false,
    );
    // The meta image names every image, so a registry's images can be found without a catalogue.
    expect(await source.images()).toEqual(report.images.map((i) => i.artifact).sort());
  });

  it("a link whose target is in another artifact, and an entry claimed twice", async () => {
    const text = fs
      .readFileSync(path.resolve("artifacts/catalogue.toml"), "utf8")
      .replace(
        '"share/kata-containers/vmlinux.container", "share/kata-containers/vmlinux-{kver}"]',
        '"share/kata-containers/vmlinux.container"]',
      )
      .replace(
        'paths = ["bin/openvmm"]',
        'paths = ["bin/openvmm", "share/kata-containers/vmlinux-{kver}", "bin/jailer"]',
      );
    await refused(
      () => {},
      [
        /share\/kata-containers\/vmlinux\.container \(artifact guest-kernel, .*\): links to share\/kata-containers\/vmlinux-6\.18\.35-202, which is in artifact openvmm; give it to guest-kernel, or make guest-kernel depend on openvmm/,
        /opt\/kata\/bin\/jailer: claimed twice, by artifact firecracker and by artifact openvmm/,
      ],
      parseArtifactCatalogue("catalogue.toml", text),
    );
  });
});
