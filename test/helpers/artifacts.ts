// Artifact sub-containers as a directory source (DIR/<artifact>/opt/kata/…), with a few small files
// each at the paths Kata's release uses.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { ArtifactSource } from "../../src/install/artifacts.js";
import { StagingDir } from "../../src/install/staging.js";

export const SAMPLE_FILES: Record<string, string[]> = {
  base: [
    "bin/containerd-shim-kata-v2",
    "bin/kata-runtime",
    "share/kata-containers/vmlinux.container",
    "share/kata-containers/kata-containers.img",
  ],
  "base-rust": ["runtime-rs/bin/containerd-shim-kata-v2"],
  qemu: ["bin/qemu-system-x86_64", "share/kata-qemu/qemu/bios-256k.bin"],
  virtiofsd: ["libexec/virtiofsd"],
  "cloud-hypervisor": ["bin/cloud-hypervisor"],
  firecracker: ["bin/firecracker", "bin/jailer"],
  "dragonball-kernel": ["share/kata-containers/vmlinux-dragonball-experimental.container"],
  "coco-guest": [
    "share/kata-containers/vmlinuz-confidential.container",
    "share/kata-containers/kata-containers-confidential.img",
  ],
  "ovmf-sev": ["share/ovmf/AMDSEV.fd"],
  "ovmf-tdx": ["share/ovmf/OVMF.inteltdx.fd"],
  "nvidia-gpu-guest": [
    "share/kata-containers/vmlinux-nvidia-gpu.container",
    "share/kata-containers/kata-containers-nvidia-gpu.img",
    "share/ovmf/OVMF.fd",
  ],
  "se-boot-image": ["share/kata-containers/kata-containers-se.img"],
};

const executable = (file: string) =>
  file.startsWith("bin/") || file.includes("/bin/") || file.startsWith("libexec/");

/**
 * A sample file's bytes: a binary is a script that answers `--version` with its line (as a real
 * one would, so detection reads a version from it); anything else is the line itself.
 */
export function sampleContent(artifact: string, file: string, version = "3.9.0"): string {
  const line = `${artifact} ${file} ${version}`;
  return executable(file) ? `#!/bin/sh\necho "${line}"\n` : `${line}\n`;
}

/** A directory source holding every artifact; `version` changes every file's bytes. */
export function artifactDir(version = "3.9.0"): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-artifacts-"));
  for (const [artifact, files] of Object.entries(SAMPLE_FILES)) {
    for (const file of files) {
      const full = path.join(dir, artifact, "opt/kata", file);
      fs.mkdirSync(path.dirname(full), { recursive: true });
      fs.writeFileSync(full, sampleContent(artifact, file, version), {
        mode: executable(file) ? 0o755 : 0o644,
      });
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

/** As Kata's release does: the kernel under a versioned name, with vmlinux.container a link to it. */
export function linkKernelAsReleased(dir: string): void {
  const share = path.join(dir, "base/opt/kata/share/kata-containers");
  fs.renameSync(path.join(share, "vmlinux.container"), path.join(share, "vmlinux-6.12.8-146"));
  fs.symlinkSync("vmlinux-6.12.8-146", path.join(share, "vmlinux.container"));
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
