// The overrides file as it is read: the node's default one through its host (links followed inside
// the host root, a FIFO refused by type, none at all meaning nothing pinned), one given on the
// command line as the user's own file.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readOverrides } from "../../src/inputs/overrides.js";
import { catalog, checkIds } from "../helpers/decide.js";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
});

/** A host root with /etc/kata-containers/ in it. */
function hostRoot(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-overrides-"));
  made.push(root);
  fs.mkdirSync(path.join(root, "etc/kata-containers"), { recursive: true });
  return root;
}

const read = (given: string | null | undefined, root: string) =>
  readOverrides(given, root, catalog, checkIds);

describe("the node's default overrides file", () => {
  it("none there: nothing pinned; null: not even looked for", async () => {
    const root = hostRoot();
    expect((await read(undefined, root)).file).toBe("(none)");
    fs.writeFileSync(path.join(root, "etc/kata-containers/kata-install.toml"), "shims = [");
    expect((await read(null, root)).file).toBe("(none)");
  });

  it("an absolute link is the host's: followed inside the host root, and named by where it led", async () => {
    const root = hostRoot();
    fs.mkdirSync(path.join(root, "etc/site"));
    fs.writeFileSync(path.join(root, "etc/site/kata.toml"), 'shims = ["qemu"]\n');
    fs.symlinkSync("/etc/site/kata.toml", path.join(root, "etc/kata-containers/kata-install.toml"));
    const overrides = await read(undefined, root);
    expect(overrides.shims).toEqual(["qemu"]);
    expect(overrides.file).toBe(path.join(fs.realpathSync(root), "etc/site/kata.toml"));
    // What files written on the node name: the target's path there, whatever the root here.
    expect(overrides.nodePath).toBe("/etc/site/kata.toml");
  });

  it("is named on the node by its path there, under a root reached through a link too", async () => {
    const root = hostRoot();
    fs.writeFileSync(path.join(root, "etc/kata-containers/kata-install.toml"), 'shims = ["qemu"]\n');
    const link = `${root}-link`;
    fs.symlinkSync(root, link);
    made.push(link);
    for (const seen of [root, link]) {
      const overrides = await read(undefined, seen);
      expect(overrides.file).toMatch(/\/etc\/kata-containers\/kata-install\.toml$/);
      expect(overrides.nodePath).toBe("/etc/kata-containers/kata-install.toml");
    }
  });

  it("a FIFO is refused by type, at once", async () => {
    const root = hostRoot();
    execFileSync("mkfifo", [path.join(root, "etc/kata-containers/kata-install.toml")]);
    await expect(read(undefined, root)).rejects.toThrow(
      /kata-install\.toml: is a FIFO, not a regular file: it must be a TOML file/,
    );
  });
});

describe("an overrides file given", () => {
  it("must exist", async () => {
    const missing = path.join(hostRoot(), "nowhere.toml");
    await expect(read(missing, "/")).rejects.toThrow(`${missing}: cannot read: it does not exist`);
  });

  it("is the user's own file: no path on the node to name it by", async () => {
    const file = path.join(hostRoot(), "mine.toml");
    fs.writeFileSync(file, 'shims = ["qemu"]\n');
    const overrides = await read(file, "/");
    expect(overrides.file).toBe(file);
    expect(overrides.nodePath).toBeUndefined();
  });
});
