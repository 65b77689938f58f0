// Artifacts from an OCI image layout built by the real umoci: the same files as from a directory,
// every blob checked against its digest, and malicious layers refused before anything is written.

import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadArtifactCatalogue } from "../../src/artifacts/catalogue.js";
import { ociLayoutSource } from "../../src/artifacts/oci-layout.js";
import { directorySource } from "../../src/artifacts/source.js";
import { journalFor } from "../../src/install/journal.js";
import { installArtifacts } from "../../src/install/switch.js";
import { artifactDir, collectFiles, fileKey, ociLayoutFrom } from "../helpers/artifacts.js";
import { intelContainerd16 } from "../helpers/nodes.js";
import { buildHost, removeTestHosts } from "../helpers/test-host.js";
import { snapshot, versionTree } from "../helpers/tree.js";

afterAll(removeTestHosts);
const catalogue = loadArtifactCatalogue();
const dir = artifactDir();
const layout = ociLayoutFrom(dir);
const made: string[] = [dir, layout];
afterAll(() => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});
const NAMES = ["base", "guest-kernel", "qemu", "virtiofsd"];

/** Installing from the layout fails with `message`, and the node is left exactly as it was. */
async function expectRefusedWithoutTrace(layoutDir: string, message: RegExp): Promise<void> {
  const host = buildHost(intelContainerd16());
  const before = snapshot(host.root);
  const source = ociLayoutSource(layoutDir, catalogue, "x86_64");
  await expect(
    installArtifacts(journalFor(host.host, "/opt/kata"), "/opt/kata", source, NAMES),
  ).rejects.toThrow(message);
  expect(snapshot(host.root)).toEqual(before);
}

/** A copy of the layout, for tests that break it. */
function copyLayout(): string {
  const copy = `${layout}-${made.length}`;
  fs.cpSync(layout, copy, { recursive: true });
  made.push(copy);
  return copy;
}

/** Add an image of one gzipped tar layer, tagged `tag`, built from raw tar bytes. */
function addImage(layoutDir: string, tag: string, tarGz: Buffer): void {
  const put = (bytes: Buffer) => {
    const hex = createHash("sha256").update(bytes).digest("hex");
    fs.writeFileSync(path.join(layoutDir, "blobs/sha256", hex), bytes);
    return { digest: `sha256:${hex}`, size: bytes.length };
  };
  const config = put(
    Buffer.from(
      JSON.stringify({ architecture: "amd64", os: "linux", rootfs: { type: "layers", diff_ids: [] } }),
    ),
  );
  const layer = put(tarGz);
  const manifest = put(
    Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: "application/vnd.oci.image.manifest.v1+json",
        config: { mediaType: "application/vnd.oci.image.config.v1+json", ...config },
        layers: [{ mediaType: "application/vnd.oci.image.layer.v1.tar+gzip", ...layer }],
      }),
    ),
  );
  const index = JSON.parse(fs.readFileSync(path.join(layoutDir, "index.json"), "utf8"));
  index.manifests = index.manifests.filter(
    (m: { annotations?: Record<string, string> }) =>
      m.annotations?.["org.opencontainers.image.ref.name"] !== tag,
  );
  index.manifests.push({
    mediaType: "application/vnd.oci.image.manifest.v1+json",
    ...manifest,
    annotations: { "org.opencontainers.image.ref.name": tag },
  });
  fs.writeFileSync(path.join(layoutDir, "index.json"), JSON.stringify(index));
}

/** A gzipped tar made by Python's tarfile, which writes whatever entries it is told to. */
function evilTar(script: string): Buffer {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-evil-")), "layer.tar.gz");
  execFileSync("python3", [
    "-c",
    `import io,tarfile\nt=tarfile.open(${JSON.stringify(out)},"w:gz")\ndef add(name, data=b"x", **kw):\n    i=tarfile.TarInfo(name); i.size=len(data) if kw.get("type",tarfile.REGTYPE)==tarfile.REGTYPE else 0\n    for k,v in kw.items(): setattr(i,k,v)\n    t.addfile(i, io.BytesIO(data) if i.size else None)\n${script}\nt.close()`,
  ]);
  made.push(path.dirname(out));
  return fs.readFileSync(out);
}

describe("artifacts from an OCI layout", () => {
  it("hold the same files as the directory they were built from, links kept", async () => {
    const fromLayout = await collectFiles(ociLayoutSource(layout, catalogue, "x86_64"), NAMES);
    const fromDir = await collectFiles(directorySource(dir, catalogue), NAMES);
    expect(fromLayout.map(fileKey).sort()).toEqual(fromDir.map(fileKey).sort());
    const host = buildHost(intelContainerd16());
    const result = await installArtifacts(
      journalFor(host.host, "/opt/kata"),
      "/opt/kata",
      ociLayoutSource(layout, catalogue, "x86_64"),
      NAMES,
    );
    expect(
      fs.readFileSync(path.join(host.root, "opt/kata/share/kata-containers/vmlinux.container"), "utf8"),
    ).toBe("guest-kernel share/kata-containers/vmlinux-6.18.35-202 3.9.0\n");
    const other = buildHost(intelContainerd16());
    const viaDir = await installArtifacts(
      journalFor(other.host, "/opt/kata"),
      "/opt/kata",
      directorySource(dir, catalogue),
      NAMES,
    );
    // Two sources name a version differently (image digests, a hash of files), not its files.
    expect(result.staged?.id).not.toBe(viaDir.staged?.id);
    // The file lists too, without the identities (inode, times) each copy's files have.
    const tree = (root: string, id?: string) => versionTree(path.join(root, "opt/kata/versions", id ?? ""));
    expect(tree(host.root, result.staged?.id)).toEqual(tree(other.root, viaDir.staged?.id));
  });

  it("weighs each image by its layers, skipping what the release does not hold", async () => {
    const sizes = await ociLayoutSource(layout, catalogue, "x86_64").sizes([
      "qemu",
      "base",
      "no-such-artifact",
    ]);
    expect([...sizes.keys()].sort()).toEqual(["base", "qemu"]);
    const index = JSON.parse(fs.readFileSync(path.join(layout, "index.json"), "utf8"));
    const qemu = index.manifests.find(
      (m: { annotations: Record<string, string> }) =>
        m.annotations["org.opencontainers.image.ref.name"] === "qemu",
    );
    const manifest = JSON.parse(
      fs.readFileSync(path.join(layout, "blobs/sha256", qemu.digest.slice(7)), "utf8"),
    );
    expect(sizes.get("qemu")).toBe(manifest.layers.reduce((n: number, l: { size: number }) => n + l.size, 0));
  });

  it("an image whose manifest cannot be read is an error, not an image the release lacks", async () => {
    const broken = copyLayout();
    const index = JSON.parse(fs.readFileSync(path.join(broken, "index.json"), "utf8"));
    const qemu = index.manifests.find(
      (m: { annotations: Record<string, string> }) =>
        m.annotations["org.opencontainers.image.ref.name"] === "qemu",
    );
    fs.rmSync(path.join(broken, "blobs/sha256", qemu.digest.slice(7)));
    await expect(ociLayoutSource(broken, catalogue, "x86_64").sizes(["qemu", "base"])).rejects.toThrow(
      /qemu: blob sha256:[0-9a-f]{64} is missing/,
    );
  });

  it("a release file beside the layout that cannot be read is an error, not digest pinning turned off", async () => {
    for (const [text, message] of [
      ["{ not json", /kata-release\.json is not JSON .*: its digest pins cannot be read/],
      [
        '{"artifacts": {"qemu": {"digest": "sha256:abc"}}}',
        /kata-release\.json: artifacts\.qemu\.digest is not a sha256 digest/,
      ],
      ['{"artifacts": []}', /kata-release\.json: "artifacts" is not an object of images/],
    ] as const) {
      const broken = copyLayout();
      fs.writeFileSync(path.join(broken, "kata-release.json"), text);
      await expectRefusedWithoutTrace(broken, message);
    }
  });

  it("a blob that does not match its digest is refused, and nothing is written", async () => {
    const broken = copyLayout();
    const index = JSON.parse(fs.readFileSync(path.join(broken, "index.json"), "utf8"));
    const manifestDigest = index.manifests
      .find(
        (m: { annotations: Record<string, string> }) =>
          m.annotations["org.opencontainers.image.ref.name"] === "qemu",
      )
      .digest.slice(7);
    const manifest = JSON.parse(fs.readFileSync(path.join(broken, "blobs/sha256", manifestDigest), "utf8"));
    const layerFile = path.join(broken, "blobs/sha256", manifest.layers[0].digest.slice(7));
    const bytes = fs.readFileSync(layerFile);
    bytes[bytes.length - 10] = (bytes[bytes.length - 10] as number) ^ 0xff;
    fs.writeFileSync(layerFile, bytes);
    await expectRefusedWithoutTrace(
      broken,
      new RegExp(
        `qemu layer ${manifest.layers[0].digest}: blob ${manifest.layers[0].digest} does not match its digest`,
      ),
    );
  });

  it.each([
    [
      "a path climbing out",
      'add("opt/kata/../../etc/shadow")',
      /entry "opt\/kata\/\.\.\/\.\.\/etc\/shadow": "\.\." would climb out of the image/,
    ],
    [
      "an absolute path",
      'add("/etc/shadow")',
      /entry "\/etc\/shadow": an absolute path is refused|entry "etc\/shadow": outside opt\/kata/,
    ],
    [
      "an absolute symlink out",
      'add("opt/kata/bin/qemu-system-x86_64", type=tarfile.SYMTYPE, linkname="/etc/shadow")',
      /an absolute link \(to \/etc\/shadow\) would point out of the prefix/,
    ],
    [
      "a relative symlink out",
      'add("opt/kata/bin/qemu-system-x86_64", type=tarfile.SYMTYPE, linkname="../../../etc/shadow")',
      /its link \(to \.\.\/\.\.\/\.\.\/etc\/shadow\) points out of the prefix/,
    ],
    [
      "a hard link to /etc/passwd",
      'add("opt/kata/bin/qemu-system-x86_64", type=tarfile.LNKTYPE, linkname="etc/passwd")',
      /a hard link to etc\/passwd, which is not a file of this artifact/,
    ],
    [
      "a file written through a link an earlier entry made",
      'add("opt/kata/share/kata-qemu/qemu", type=tarfile.SYMTYPE, linkname="../../bin")\nadd("opt/kata/share/kata-qemu/qemu/kata-runtime")',
      /entry "opt\/kata\/share\/kata-qemu\/qemu\/kata-runtime": share\/kata-qemu\/qemu\/kata-runtime: would be written through the link share\/kata-qemu\/qemu/,
    ],
    [
      "a device",
      'add("opt/kata/bin/qemu-system-x86_64", type=tarfile.CHRTYPE, devmajor=1, devminor=3)',
      /a CharacterDevice entry is refused/,
    ],
  ])("%s is refused, naming the entry, and nothing is written", async (_what, script, message) => {
    const evil = copyLayout();
    addImage(evil, "qemu", evilTar(script));
    await expectRefusedWithoutTrace(evil, message);
  });
});
