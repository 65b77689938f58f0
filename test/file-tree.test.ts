// fileTree lists what readdir({ recursive: true }) lists, in the same sorted order, except that it
// never follows a link into another directory (Node 20's recursive readdir does: a link to a
// directory outside would have listed what is outside as the artifact's own files).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fileTree } from "../src/file-tree.js";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-tree-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe("fileTree", () => {
  it("every entry, directories and links included, sorted as readdir({ recursive }) sorts them", () => {
    const root = path.join(tmp, "root");
    fs.mkdirSync(path.join(root, "share/kata-containers/runtime-rs"), { recursive: true });
    fs.mkdirSync(path.join(root, "bin"));
    fs.mkdirSync(path.join(tmp, "elsewhere"));
    fs.writeFileSync(path.join(tmp, "elsewhere/not-listed"), "");
    fs.writeFileSync(path.join(root, "bin/containerd-shim-kata-v2"), "x");
    fs.writeFileSync(path.join(root, "share/kata-containers/configuration-qemu.toml"), "");
    fs.writeFileSync(path.join(root, "share/kata-containers/runtime-rs/configuration-dragonball.toml"), "");
    fs.writeFileSync(path.join(root, "share/kata-containers/a-b"), "");
    fs.symlinkSync("configuration-qemu.toml", path.join(root, "share/kata-containers/configuration.toml"));
    fs.symlinkSync("../elsewhere", path.join(root, "linked-dir"));

    const tree = fileTree(root);
    const expected = fs
      .readdirSync(root, { recursive: true })
      .map(String)
      .filter((p) => !p.startsWith("linked-dir/"))
      .sort();
    expect(tree.map((e) => e.path)).toEqual(expected);
    expect(tree.map((e) => e.path)).not.toContain("linked-dir/not-listed");
    const byPath = new Map(tree.map((e) => [e.path, e]));
    expect(byPath.get("share/kata-containers/configuration.toml")?.dirent.isSymbolicLink()).toBe(true);
    expect(byPath.get("linked-dir")?.dirent.isSymbolicLink()).toBe(true);
    expect(byPath.get("bin")?.dirent.isDirectory()).toBe(true);
    expect(byPath.get("bin/containerd-shim-kata-v2")?.full).toBe(
      path.join(root, "bin/containerd-shim-kata-v2"),
    );
  });

  it("a root that is not there throws as readdir does", () => {
    expect(() => fileTree(path.join(tmp, "missing"))).toThrow(expect.objectContaining({ code: "ENOENT" }));
  });
});
