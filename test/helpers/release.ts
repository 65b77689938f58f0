// Stand-in Kata releases built from the real releases' file lists (test/fixtures/release/): every
// path and link as listed, small stand-in bytes, packed as Kata packs them (./opt/kata/…, zstd).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export const FIXTURES = path.resolve("test/fixtures/release");

export interface ListEntry {
  type: "d" | "f" | "l";
  path: string;
  size: number;
  target: string;
}

/** The release lists of one architecture's 4.1.0, by tarball name (without .list). */
export const RELEASES: Record<"x86_64" | "aarch64", string[]> = {
  x86_64: ["kata-static-4.1.0-amd64", "kata-go-static-4.1.0-amd64", "kata-tools-static-4.1.0-amd64"],
  aarch64: ["kata-static-4.1.0-arm64", "kata-go-static-4.1.0-arm64"],
};

export function readList(name: string): ListEntry[] {
  return fs
    .readFileSync(path.join(FIXTURES, `${name}.list`), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "" && !l.startsWith("#"))
    .map((line) => {
      const [type, file, size, target] = line.split("\t");
      return {
        type: type as ListEntry["type"],
        path: file as string,
        size: Number(size),
        target: target ?? "",
      };
    });
}

const executable = (file: string) =>
  /^opt\/kata\/(bin|libexec|runtime-rs\/bin)\//.test(file) && !file.endsWith(".toml");

/** The configuration files Kata 4.1.0 ships, as its build generates them (test/fixtures/release/configs/). */
export const CONFIGS = path.join(FIXTURES, "configs", "4.1.0");

/** The release's own configuration file at `file` (opt/kata/share/defaults/…), for `arch`; null if none. */
export function releaseConfig(file: string, arch: "amd64" | "arm64"): string | null {
  const m =
    /^(?:opt\/kata\/)?share\/defaults\/kata-containers\/(runtime-rs\/)?(configuration-[^/]+\.toml)$/.exec(
      file,
    );
  if (!m) return null;
  const full = path.join(CONFIGS, arch, m[1] ? "rust" : "go", m[2] as string);
  return fs.existsSync(full) ? fs.readFileSync(full, "utf8") : null;
}

/** The architecture of a release list's name (kata-static-4.1.0-arm64 → arm64). */
export function archOfList(name: string): "amd64" | "arm64" {
  return name.endsWith("-arm64") ? "arm64" : "amd64";
}

/**
 * A file's stand-in bytes: the same for the same path in every tarball (as the real releases'
 * shared files are). A program answers --version with its name, as a real one would. The
 * configuration files are the release's own, byte for byte.
 */
export function standIn(file: string, size: number, arch: "amd64" | "arm64" = "amd64"): string {
  if (file === "opt/kata/VERSION") return "4.1.0\n";
  const config = releaseConfig(file, arch);
  if (config !== null) return config;
  return executable(file)
    ? `#!/bin/sh\necho "${path.basename(file)} 4.1.0 (stand-in for ${size} bytes)"\n`
    : `stand-in for ${file}: ${size} bytes in the release\n`;
}

/** The tree of one list, under `root` (root/opt/kata/…). */
export function buildTree(entries: ListEntry[], root: string, arch: "amd64" | "arm64" = "amd64"): void {
  for (const e of entries) {
    const full = path.join(root, e.path);
    if (e.type === "d") fs.mkdirSync(full, { recursive: true });
    else {
      fs.mkdirSync(path.dirname(full), { recursive: true });
      if (e.type === "l") fs.symlinkSync(e.target, full);
      else
        fs.writeFileSync(full, standIn(e.path, e.size, arch), { mode: executable(e.path) ? 0o755 : 0o644 });
    }
  }
}

/** One tarball of the list `name` (kata-static-4.1.0-amd64 → …/kata-static-4.1.0-amd64.tar.zst), edited by `edit`. */
export function buildTarball(name: string, dir: string, edit?: (tree: string) => void): string {
  const tree = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-release-tree-"));
  try {
    buildTree(readList(name), tree, archOfList(name));
    edit?.(tree);
    const tar = path.join(dir, `${name}.tar`);
    // As Kata's release: members named ./opt/kata/…, compressed with zstd.
    execFileSync("tar", ["-C", tree, "--sort=name", "--owner=0", "--group=0", "-cf", tar, "./opt"]);
    execFileSync("zstd", ["-q", "--rm", "-f", tar]);
    return `${tar}.zst`;
  } finally {
    fs.rmSync(tree, { recursive: true, force: true });
  }
}

/**
 * Kata 3.x's shape: one kata-static tarball holding both runtimes (every list of `arch` merged),
 * named `name` (kata-static-3.24.0-arm64.tar.zst), edited by `edit`.
 */
export function buildSingleTarball(
  arch: keyof typeof RELEASES,
  name: string,
  edit?: (tree: string) => void,
): { dir: string; tarball: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-release-"));
  const tree = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-release-tree-"));
  try {
    const seen = new Set<string>();
    for (const list of RELEASES[arch]) {
      const entries = readList(list).filter((e) => !seen.has(e.path));
      for (const e of entries) seen.add(e.path);
      buildTree(entries, tree, archOfList(list));
    }
    edit?.(tree);
    const tar = path.join(dir, name.replace(/\.zst$/, ""));
    execFileSync("tar", ["-C", tree, "--sort=name", "--owner=0", "--group=0", "-cf", tar, "./opt"]);
    execFileSync("zstd", ["-q", "--rm", "-f", tar]);
    return { dir, tarball: `${tar}.zst` };
  } finally {
    fs.rmSync(tree, { recursive: true, force: true });
  }
}

/** All the tarballs of one architecture's release, in a new directory. */
export function buildRelease(
  arch: keyof typeof RELEASES,
  edit?: (name: string, tree: string) => void,
): { dir: string; tarballs: string[] } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-release-"));
  const tarballs = RELEASES[arch].map((name) =>
    buildTarball(name, dir, edit && ((tree) => edit(name, tree))),
  );
  return { dir, tarballs };
}
