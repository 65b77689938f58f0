// Artifact sub-containers as a directory source (DIR/<artifact>/opt/kata/…): Kata's real release
// layout (every path and link of the 4.1.0 lists) with small stand-in bytes.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadArtifactCatalogue } from "../../src/artifacts/catalogue.js";
import type { ListedEntry } from "../../src/artifacts/listing.js";
import type { ArtifactSource } from "../../src/artifacts/source.js";
import { StagingDir } from "../../src/artifacts/staging.js";
import { GO_CONFIG_DIR, type Release, RUST_CONFIG_DIR, releaseFromFiles } from "../../src/release/release.js";
import { CONFIGS, type ListEntry, RELEASES, readList, releaseConfig } from "./release.js";

/**
 * Kata's real release (4.1.0 for x86_64, from test/fixtures/release/), each path given to its owner
 * by the catalogue: artifact → its files and links, relative to /opt/kata. The same paths, names
 * and links as a real release, so that tests install what a node would.
 */
export function releaseByArtifact(arch: keyof typeof RELEASES = "x86_64"): Map<string, ListEntry[]> {
  const catalogue = loadArtifactCatalogue();
  const out = new Map<string, ListEntry[]>();
  const seen = new Set<string>();
  for (const name of RELEASES[arch]) {
    for (const e of readList(name)) {
      if (e.type === "d" || seen.has(e.path)) continue;
      seen.add(e.path);
      const file = e.path.replace(/^opt\/kata\//, "");
      const own = catalogue.ownerOf(file);
      if (own.kind !== "artifact") continue;
      out.set(own.artifact, [...(out.get(own.artifact) ?? []), { ...e, path: file }]);
    }
  }
  return out;
}

/** The regular files of each artifact of the x86_64 release. */
export const SAMPLE_FILES: Record<string, string[]> = Object.fromEntries(
  [...releaseByArtifact()].map(([artifact, entries]) => [
    artifact,
    entries.filter((e) => e.type === "f").map((e) => e.path),
  ]),
);

const executable = (file: string) =>
  file.startsWith("bin/") || file.includes("/bin/") || file.startsWith("libexec/");

/**
 * A sample file's bytes: a binary is a script that answers `--version` with its line (as a real
 * one would, so detection reads a version from it); anything else is the line itself.
 */
export function sampleContent(artifact: string, file: string, version = "3.9.0"): string {
  if (file === "VERSION") return `${version}\n`; // as a release's: its version, and nothing else
  const line = `${artifact} ${file} ${version}`;
  return executable(file) ? `#!/bin/sh\necho "${line}"\n` : `${line}\n`;
}

/**
 * A directory source holding every artifact of a real release's layout (links as released);
 * `version` changes every file's bytes.
 */
export function artifactDir(version = "3.9.0", arch: keyof typeof RELEASES = "x86_64"): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-artifacts-"));
  for (const [artifact, entries] of releaseByArtifact(arch)) {
    for (const e of entries) {
      const full = path.join(dir, artifact, "opt/kata", e.path);
      fs.mkdirSync(path.dirname(full), { recursive: true });
      if (e.type === "l") fs.symlinkSync(e.target, full);
      else
        fs.writeFileSync(
          full,
          releaseConfig(e.path, arch === "aarch64" ? "arm64" : "amd64") ??
            sampleContent(artifact, e.path, version),
          { mode: executable(e.path) ? 0o755 : 0o644 },
        );
    }
  }
  return dir;
}

/**
 * The same artifacts as images in an OCI layout, each tagged by its name, built by the real umoci:
 * a layer per image holding <artifact>/opt/kata/… of `dir`.
 */
export function ociLayoutFrom(dir: string): string {
  const layout = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-layout-"));
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-bundle-"));
  const umoci = (...args: string[]) => execFileSync("umoci", args, { stdio: ["ignore", "ignore", "pipe"] });
  fs.rmdirSync(layout);
  umoci("init", "--layout", layout);
  for (const artifact of fs.readdirSync(dir)) {
    const bundle = path.join(work, artifact);
    umoci("new", "--image", `${layout}:${artifact}`);
    umoci("unpack", "--image", `${layout}:${artifact}`, bundle);
    fs.cpSync(path.join(dir, artifact), path.join(bundle, "rootfs"), {
      recursive: true,
      verbatimSymlinks: true,
    });
    umoci("repack", "--image", `${layout}:${artifact}`, bundle);
  }
  fs.rmSync(work, { recursive: true, force: true });
  return layout;
}

/** One artifact file as a comparable line: path, mode, and link target or content. */
export function fileKey(f: { path: string; mode: number; bytes: Buffer; link?: string }): string {
  return `${f.path} ${f.mode.toString(8)} ${f.link ?? f.bytes.toString()}`;
}

/**
 * Every file the source gives for the artifacts, streamed into a scratch staging directory and
 * read back: what an install would write, as data to compare.
 */
export async function collectFiles(
  source: ArtifactSource,
  artifacts: string[],
): Promise<Array<{ path: string; mode: number; bytes: Buffer; link?: string }>> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-collect-"));
  try {
    const into = new StagingDir(root);
    for (const artifact of [...artifacts].sort()) await source.extract(artifact, into);
    return fs
      .readdirSync(root, { recursive: true })
      .map(String)
      .sort()
      .flatMap((rel) => {
        const full = path.join(root, rel);
        const st = fs.lstatSync(full);
        const file = rel.split(path.sep).join("/");
        if (st.isSymbolicLink())
          return [{ path: file, mode: 0o777, bytes: Buffer.alloc(0), link: fs.readlinkSync(full) }];
        return st.isFile() ? [{ path: file, mode: st.mode & 0o7777, bytes: fs.readFileSync(full) }] : [];
      });
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

/**
 * Kata 4.1.0 as a plan reads it from an artifact source: each shim's configuration as the release
 * ships it (test/fixtures/release/configs/) and every image with its files (the release lists,
 * grouped by the catalogue).
 */
export function fixtureRelease(arch: keyof typeof RELEASES = "x86_64"): Release {
  const files = new Map<string, string>([["VERSION", "4.1.0\n"]]);
  for (const [runtime, dir] of [
    ["go", GO_CONFIG_DIR],
    ["rust", RUST_CONFIG_DIR],
  ] as const) {
    const from = path.join(CONFIGS, arch === "aarch64" ? "arm64" : "amd64", runtime);
    for (const name of fs.readdirSync(from))
      if (name !== "configuration.toml")
        files.set(`${dir}/${name}`, fs.readFileSync(path.join(from, name), "utf8"));
  }
  const images = new Map<string, ListedEntry[]>();
  for (const [artifact, entries] of releaseByArtifact(arch))
    images.set(
      artifact,
      entries.map((e) =>
        e.type === "l"
          ? { path: e.path, type: "link" as const, target: e.target }
          : { path: e.path, type: "file" as const, mode: executable(e.path) ? 0o755 : 0o644, size: e.size },
      ),
    );
  return releaseFromFiles(files, "the 4.1.0 fixture", images);
}
