// Artifacts pulled from a real registry (Debian's docker-registry, images pushed by skopeo): the same
// files as the layout they came from, through the anonymous bearer-token flow, and refused when a
// blob does not match its digest.
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadArtifactCatalogue } from "../../src/artifacts/catalogue.js";
import { ociLayoutSource } from "../../src/artifacts/oci-layout.js";
import { parseRegistry, registrySource } from "../../src/artifacts/registry.js";
import { journalFor } from "../../src/install/journal.js";
import { installArtifacts } from "../../src/install/switch.js";
import { artifactDir, collectFiles, fileKey, ociLayoutFrom } from "../helpers/artifacts.js";
import { intelContainerd16 } from "../helpers/nodes.js";
import { pushLayout, type Registry, startRegistry, tokenFront } from "../helpers/registry.js";
import { buildHost, removeTestHosts } from "../helpers/test-host.js";
import { snapshot } from "../helpers/tree.js";

afterAll(removeTestHosts);
const catalogue = loadArtifactCatalogue();
const NAMES = ["base", "qemu", "virtiofsd"];
const dir = artifactDir();
const layout = ociLayoutFrom(dir);
let registry: Registry;
beforeAll(async () => {
  registry = await startRegistry();
  pushLayout(layout, registry.host, "kata-containers", "3.9.0");
});
afterAll(async () => {
  await registry?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(layout, { recursive: true, force: true });
});

describe("artifacts from a registry", () => {
  it("are the files of the layout they were pushed from", async () => {
    const source = registrySource(
      parseRegistry(`${registry.host}/kata-containers`, "3.9.0"),
      catalogue,
      "x86_64",
    );
    const pulled = await collectFiles(source, NAMES);
    const local = await collectFiles(ociLayoutSource(layout, catalogue, "x86_64"), NAMES);
    expect(pulled.map(fileKey).sort()).toEqual(local.map(fileKey).sort());
  });

  it("follow the anonymous bearer-token flow, once per repository", async () => {
    const front = await tokenFront(registry.host);
    try {
      const host = buildHost(intelContainerd16());
      const source = registrySource(
        parseRegistry(`${front.host}/kata-containers`, "3.9.0"),
        catalogue,
        "x86_64",
      );
      const result = await installArtifacts(journalFor(host.host, "/opt/kata"), "/opt/kata", source, NAMES);
      expect(result.switched).toBe(true);
      expect(front.tokensIssued()).toBe(NAMES.length);
    } finally {
      await front.stop();
    }
  });

  it("a blob that does not match its digest is refused, and nothing is written", async () => {
    const front = await tokenFront(registry.host, { corruptBlobs: true });
    try {
      const host = buildHost(intelContainerd16());
      const before = snapshot(host.root);
      const source = registrySource(
        parseRegistry(`${front.host}/kata-containers`, "3.9.0"),
        catalogue,
        "x86_64",
      );
      await expect(
        installArtifacts(journalFor(host.host, "/opt/kata"), "/opt/kata", source, NAMES),
      ).rejects.toThrow(/does not match its digest/);
      expect(snapshot(host.root)).toEqual(before);
    } finally {
      await front.stop();
    }
  });

  it("a missing tag is named", async () => {
    const source = registrySource(
      parseRegistry(`${registry.host}/kata-containers`, "9.9.9"),
      catalogue,
      "x86_64",
    );
    await expect(collectFiles(source, ["qemu"])).rejects.toThrow(
      /qemu:9\.9\.9: http:\/\/127\.0\.0\.1:\d+\/v2\/kata-containers\/qemu\/manifests\/9\.9\.9: not found/,
    );
  });

  it("a port Node's fetch will not connect to is said so (it refuses before any connection)", async () => {
    const source = registrySource(
      parseRegistry("127.0.0.1:6000/kata-containers", "3.9.0"),
      catalogue,
      "x86_64",
    );
    await expect(collectFiles(source, ["qemu"])).rejects.toThrow(
      /bad port: Node's fetch refuses to connect to port 6000 \(one the Fetch standard blocks\): serve the registry on another port/,
    );
  });
});
