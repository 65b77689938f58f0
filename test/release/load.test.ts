// Where a plan reads the release: the artifact source's meta image (read in memory),
// or the node, when the version in place was installed from that very image — never from a node
// whose version was rolled back, or installed from another image.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadArtifactCatalogue } from "../../src/artifacts/catalogue.js";
import { directorySource } from "../../src/artifacts/source.js";
import { Host } from "../../src/host/host.js";
import type { ArtifactsRecord } from "../../src/install/journal.js";
import { releaseFromSource, releaseOnNode, sameReleaseOnNode } from "../../src/release/load.js";
import { artifactDir } from "../helpers/artifacts.js";

const dir = artifactDir("4.1.0");
const roots: string[] = [];
afterAll(() => {
  for (const d of [dir, ...roots]) fs.rmSync(d, { recursive: true, force: true });
});

/** A node whose /opt/kata/current is version `id`, holding the meta image's files. */
function installedNode(id: string): Host {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-release-node-"));
  roots.push(root);
  fs.cpSync(path.join(dir, "meta"), path.join(root, "opt/kata/versions", id), { recursive: true });
  fs.renameSync(
    path.join(root, "opt/kata/versions", id, "opt/kata"),
    path.join(root, "opt/kata/versions", `${id}.x`),
  );
  fs.rmSync(path.join(root, "opt/kata/versions", id), { recursive: true });
  fs.renameSync(path.join(root, "opt/kata/versions", `${id}.x`), path.join(root, "opt/kata/versions", id));
  fs.symlinkSync(`versions/${id}`, path.join(root, "opt/kata/current"));
  return new Host({ root });
}

describe("the release of an artifact source", () => {
  const source = directorySource(dir, loadArtifactCatalogue());

  it("is its meta image's version and configurations, with every image's files", async () => {
    const release = await releaseFromSource(source);
    expect(release.version).toBe("4.1.0");
    expect(release.where).toBe(`dir:${dir}`);
    expect(release.shims.get("qemu")?.text).toContain("[hypervisor.qemu]");
    expect([...(release.images?.keys() ?? [])]).toEqual(fs.readdirSync(dir).sort());
  });

  it("a source without a meta image holds no release kata-install can read: said so", async () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-empty-source-"));
    roots.push(empty);
    fs.mkdirSync(path.join(empty, "qemu/opt/kata/bin"), { recursive: true });
    await expect(releaseFromSource(directorySource(empty, loadArtifactCatalogue()))).rejects.toThrow(
      /has no "meta" image: it holds no Kata release kata-install can read \(split one with kata-install artifacts split\)/,
    );
  });
});

describe("the node's release", () => {
  const source = directorySource(dir, loadArtifactCatalogue());

  it("is read from the node when its version came from the same meta image", async () => {
    const host = installedNode("v1");
    const digest = await source.identify("meta");
    const record: ArtifactsRecord = {
      version: "v1",
      names: ["meta"],
      links: [],
      meta: { version: "v1", digest },
    };
    const release = await sameReleaseOnNode(host, "/opt/kata", record, source);
    expect(release?.version).toBe("4.1.0");
    expect(release?.where).toBe(`dir:${dir}`);
    expect(release?.images?.has("qemu")).toBe(true);
    expect(release?.shims.get("clh")?.text).toBe((await releaseFromSource(source)).shims.get("clh")?.text);
  });

  it("is not, when the version was rolled back, is another, or came from another image", async () => {
    const host = installedNode("v1");
    const digest = await source.identify("meta");
    const rolledBack: ArtifactsRecord = {
      version: "v0",
      names: [],
      links: [],
      meta: { version: "v1", digest },
    };
    expect(await sameReleaseOnNode(host, "/opt/kata", rolledBack, source)).toBeNull();
    const other: ArtifactsRecord = {
      version: "v1",
      names: [],
      links: [],
      meta: { version: "v1", digest: "sha256:0" },
    };
    expect(await sameReleaseOnNode(host, "/opt/kata", other, source)).toBeNull();
    const current: ArtifactsRecord = { version: "v2", names: [], links: [], meta: { version: "v2", digest } };
    expect(await sameReleaseOnNode(host, "/opt/kata", current, source)).toBeNull();
    expect(await sameReleaseOnNode(host, "/opt/kata", null, source)).toBeNull();
  });

  it("without a source: the version in place, with the images its journal records", async () => {
    const host = installedNode("v1");
    const release = await releaseOnNode(host, "/opt/kata", ["base", "meta", "qemu"]);
    expect(release?.images).toBeNull();
    expect(release?.installed).toEqual(["base", "meta", "qemu"]);
    expect(release?.shims.has("qemu-runtime-rs")).toBe(true);
    expect(await releaseOnNode(new Host({ root: os.tmpdir() }), "/nowhere", [])).toBeNull();
  });
});
