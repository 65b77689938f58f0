// The artifact catalogue against Kata's real releases (test/fixtures/release/): every file and link
// has exactly one owner, versioned names go where their kind does, and the loader refuses a
// catalogue that is wrong, naming the key.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  admits,
  globToRegExp,
  loadArtifactCatalogue,
  parseArtifactCatalogue,
} from "../../src/artifacts/catalogue.js";
import { dataPath } from "../../src/package-root.js";
import { catalog } from "../helpers/decide.js";
import { readList } from "../helpers/release.js";

const catalogue = loadArtifactCatalogue();
const LISTS = fs
  .readdirSync(path.resolve("test/fixtures/release"))
  .filter((f) => f.endsWith(".list"))
  .map((f) => f.replace(/\.list$/, ""));

describe("the artifact catalogue", () => {
  it("knows every artifact a shim needs", () => {
    for (const artifact of catalog.artifacts) expect(catalogue.has(artifact), artifact).toBe(true);
  });

  it.each(LISTS)("gives every file and link of %s exactly one owner", (list) => {
    const problems: string[] = [];
    for (const e of readList(list)) {
      if (e.type === "d") continue;
      const own = catalogue.ownerOf(e.path.replace(/^opt\/kata\//, ""));
      if (own.kind === "unowned" || own.kind === "conflict")
        problems.push(`${e.path}: ${JSON.stringify(own)}`);
    }
    expect(problems).toEqual([]);
  });

  it("puts versioned kernels and images with their kind, never with another kernel's", () => {
    const owner = (f: string) => {
      const own = catalogue.ownerOf(f);
      return own.kind === "artifact" ? own.artifact : own.kind;
    };
    const share = "share/kata-containers";
    expect(owner(`${share}/vmlinux-6.18.35-202`)).toBe("guest-kernel");
    expect(owner(`${share}/vmlinux-6.18.35-202-dragonball-experimental`)).toBe("dragonball-kernel");
    // The compressed kernel, and the build config and System.map no configuration names, apart:
    // a node pulls the kernel file its configuration boots, not the others beside it.
    expect(owner(`${share}/vmlinuz-6.18.35-202-nvidia-gpu`)).toBe("nvidia-gpu-kernel-vmlinuz");
    expect(owner(`${share}/vmlinuz.container`)).toBe("guest-kernel-vmlinuz");
    expect(owner(`${share}/System.map-6.18.35-202-debug`)).toBe("guest-kernel-debug-extras");
    expect(owner(`${share}/config-6.18.35-202`)).toBe("guest-kernel-extras");
    expect(owner(`${share}/config-6.18.35-202-dragonball-experimental`)).toBe("dragonball-kernel-extras");
    // The Go runtime's admin tools are not the shim's: pulled when asked, or with DEBUG.
    expect(owner("bin/containerd-shim-kata-v2")).toBe("base");
    expect(owner("bin/kata-runtime")).toBe("go-tools");
    expect(owner("bin/kata-monitor")).toBe("go-tools");
    expect(owner("bin/kata-collect-data.sh")).toBe("go-tools");
    expect(owner(`${share}/kata-ubuntu-noble.image`)).toBe("guest-image");
    expect(owner(`${share}/kata-ubuntu-resolute.image`)).toBe("guest-image");
    expect(owner(`${share}/kata-alpine-3.18.initrd`)).toBe("guest-initrd");
    expect(owner(`${share}/kata-cbl-mariner-3.0-mariner.image`)).toBe("guest-image-mariner");
    expect(owner(`${share}/kata-ubuntu-noble-nvidia-gpu-595.58.03.image`)).toBe("guest-image-nvidia-gpu");
    expect(owner(`${share}/kata-ubuntu-noble-nvidia-gpu-confidential-595.58.03.image`)).toBe(
      "guest-image-nvidia-gpu-confidential",
    );
    expect(owner("bin/qemu-system-aarch64-no-shared-fs")).toBe("qemu-no-shared-fs");
    // The release's configuration files are its own: they travel with its version, in meta.
    expect(owner("share/defaults/kata-containers/configuration.toml")).toBe("meta");
    expect(owner("share/defaults/kata-containers/runtime-rs/configuration-dragonball.toml")).toBe("meta");
    expect(owner("bin/kata-ctl")).toBe("ignored");
    // A guest OS the catalogue does not know is nobody's here: the split gives it to the shim that needs it.
    expect(owner(`${share}/kata-plan9-4.image`)).toBe("unowned");
    expect(owner("bin/unknown-tool")).toBe("unowned");
  });

  it("lets a layout split before go-tools and the kernel extras were carved out still hold them where they were", () => {
    expect(admits(catalogue, "base", "bin/kata-runtime")).toBeNull();
    expect(admits(catalogue, "guest-kernel", "share/kata-containers/vmlinuz-6.18.35-202")).toBeNull();
    expect(admits(catalogue, "guest-kernel", "share/kata-containers/System.map-6.18.35-202")).toBeNull();
    expect(admits(catalogue, "go-tools", "bin/kata-runtime")).toBeNull();
    // Only where they were: not in another image, and not the other way round.
    expect(admits(catalogue, "qemu", "bin/kata-runtime")).toMatch(/artifact "go-tools"'s/);
    expect(admits(catalogue, "guest-kernel", "share/kata-containers/vmlinuz-6.18.35-202-nvidia-gpu")).toMatch(
      /artifact "nvidia-gpu-kernel-vmlinuz"'s/,
    );
    expect(admits(catalogue, "go-tools", "bin/containerd-shim-kata-v2")).toMatch(/artifact "base"'s/);
    expect(catalogue.get("go-tools")?.withDebug).toBe(true);
  });

  it("closes over dependencies", () => {
    expect([...catalogue.dependencies("guest-extension-coco")].sort()).toEqual([
      "guest-extension-coco",
      "guest-image",
    ]);
    expect(catalogue.dependencies("base").has("meta")).toBe(true);
  });

  it("globs: * within a name, ** across directories, {token} from [tokens]", () => {
    expect(globToRegExp("share/*.img").test("share/a.img")).toBe(true);
    expect(globToRegExp("share/*.img").test("share/x/a.img")).toBe(false);
    expect(globToRegExp("runtime-rs/**").test("runtime-rs/bin/x")).toBe(true);
    expect(globToRegExp("vmlinux-{k}", { k: "[0-9]+" }).test("vmlinux-12")).toBe(true);
    expect(globToRegExp("vmlinux-{k}", { k: "[0-9]+" }).test("vmlinux-12-debug")).toBe(false);
  });

  it("refuses a catalogue with an unknown token, a missing dependency or an unknown key, naming each", () => {
    const file = path.join(os.tmpdir(), "kata-install-bad-catalogue.toml");
    const text = [
      "[artifact.a]",
      'description = "a"',
      'paths = ["x-{nope}"]',
      'depends = ["missing"]',
      'formerly = ["gone"]',
      "[artifact.b]",
      'description = "b"',
      "paths = []",
      "colour = 1",
    ].join("\n");
    expect(() => parseArtifactCatalogue(file, text)).toThrow(/artifact\.b: Unrecognized key.*colour/s);
    const fixed = text.replace("colour = 1", "");
    let message = "";
    try {
      parseArtifactCatalogue(file, fixed);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('artifact.a.paths: x-{nope}: no token "{nope}" in [tokens]');
    expect(message).toContain('artifact.a.depends: no artifact "missing"');
    expect(message).toContain('artifact.a.formerly: no other artifact "gone"');
  });
});

describe("the bytes table in docs/commands.md", () => {
  it("is the one computed from the release lists and the catalogue", async () => {
    const { bytesTable } = await import("../helpers/bytes-table.js");
    // Compared cell by cell: the formatter may pad the table's columns.
    const cells = (text: string) => text.replace(/ *\| */g, "|").replace(/-{3,}/g, "---");
    expect(cells(fs.readFileSync(path.resolve("docs/commands.md"), "utf8"))).toContain(cells(bytesTable()));
  });
});

describe("loadArtifactCatalogue", () => {
  it("checks each text once, wherever the file is (the blob is built in one place and run from another)", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-catalogue-"));
    try {
      const copy = path.join(dir, "catalogue.toml");
      const text = fs.readFileSync(dataPath("artifacts", "catalogue.toml"), "utf8");
      fs.writeFileSync(copy, text);
      expect(loadArtifactCatalogue(copy)).toBe(catalogue);
      // Edited, it is another catalogue, checked anew.
      fs.writeFileSync(copy, `${text}\n# an admin's comment\n`);
      const edited = loadArtifactCatalogue(copy);
      expect(edited).not.toBe(catalogue);
      expect([...edited.keys()]).toEqual([...catalogue.keys()]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
