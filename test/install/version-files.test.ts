// A version directory's list of what is kata-install's in it, and its removal that keeps the rest:
// through a prefix reached by a link (the admin's /opt -> /var/opt), never through a link inside.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  foreignEntries,
  reachedAs,
  removeVersionKeeping,
  VERSION_FILES,
  versionFiles,
  writeVersionFiles,
} from "../../src/install/version-files.js";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
});

/** A version with bin/shim and share/kata-containers/kernel listed, under a prefix reached by a link. */
function version(): { base: string; dir: string; outside: string } {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-version-files-"));
  made.push(base);
  const real = path.join(base, "var/opt/kata/versions/v1");
  for (const file of ["bin/shim", "share/kata-containers/kernel"]) {
    fs.mkdirSync(path.dirname(path.join(real, file)), { recursive: true });
    fs.writeFileSync(path.join(real, file), "ours");
  }
  writeVersionFiles(real, ["bin/shim", "share/kata-containers/kernel"]);
  fs.symlinkSync("var/opt", path.join(base, "opt"));
  const outside = path.join(base, "elsewhere");
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(outside, "kernel"), "not kata-install's");
  return { base, dir: path.join(base, "opt/kata/versions/v1"), outside };
}

describe("a version's list of its own files", () => {
  it("is read back; a version without one, or with another kind of file there, has none", () => {
    const { dir } = version();
    expect(versionFiles(dir)).toEqual(new Set(["bin/shim", "share/kata-containers/kernel"]));
    fs.writeFileSync(path.join(dir, VERSION_FILES), "not json");
    expect(versionFiles(dir)).toBeNull();
    fs.rmSync(path.join(dir, VERSION_FILES));
    fs.symlinkSync("/etc/passwd", path.join(dir, VERSION_FILES));
    expect(versionFiles(dir)).toBeNull();
  });

  it("with nothing else in it, the version goes whole", () => {
    const { dir } = version();
    expect(foreignEntries(dir, versionFiles(dir) as Set<string>)).toEqual([]);
    expect(removeVersionKeeping(dir)).toEqual([]);
    expect(fs.existsSync(dir)).toBe(false);
  });

  it("what someone else put there stays, with its directories, the prefix reached through a link", () => {
    const { dir } = version();
    fs.writeFileSync(path.join(dir, "bin/my-tool"), "mine");
    fs.mkdirSync(path.join(dir, "bin/empty"));
    fs.mkdirSync(path.join(dir, "share/kata-containers/images"));
    fs.writeFileSync(path.join(dir, "share/kata-containers/images/custom.img"), "IMG");
    expect(removeVersionKeeping(dir)).toEqual(["bin/empty", "bin/my-tool", "share/kata-containers/images"]);
    const left = fs.readdirSync(dir, { recursive: true }).map(String).sort();
    expect(left).toEqual([
      "bin",
      "bin/empty",
      "bin/my-tool",
      "share",
      "share/kata-containers",
      "share/kata-containers/images",
      "share/kata-containers/images/custom.img",
    ]);
  });

  it("renamed where it is kept, its list gone last", () => {
    const { dir } = version();
    fs.writeFileSync(path.join(dir, "bin/my-tool"), "mine");
    const keptAt = `${dir}.kept`;
    expect(removeVersionKeeping(dir, keptAt)).toEqual(["bin/my-tool"]);
    expect(fs.existsSync(dir)).toBe(false);
    expect(fs.readdirSync(keptAt, { recursive: true }).map(String).sort()).toEqual(["bin", "bin/my-tool"]);
  });

  it("a directory of the version replaced by a link out of it: nothing is removed through it", () => {
    const { dir, outside } = version();
    fs.rmSync(path.join(dir, "share/kata-containers"), { recursive: true });
    fs.symlinkSync(outside, path.join(dir, "share/kata-containers"));
    fs.writeFileSync(path.join(dir, "bin/my-tool"), "mine");
    expect(removeVersionKeeping(dir)).toEqual(["bin/my-tool", "share/kata-containers"]);
    expect(fs.readFileSync(path.join(outside, "kernel"), "utf8")).toBe("not kata-install's");
    expect(fs.existsSync(path.join(dir, "bin/shim"))).toBe(false);
  });

  it("an empty directory reached through such a link is not removed either", () => {
    const { dir, outside } = version();
    fs.mkdirSync(path.join(dir, "share/kata-containers/sub"));
    fs.writeFileSync(path.join(dir, "share/kata-containers/sub/x"), "ours");
    writeVersionFiles(dir, ["bin/shim", "share/kata-containers/kernel", "share/kata-containers/sub/x"]);
    fs.rmSync(path.join(dir, "share/kata-containers"), { recursive: true });
    fs.mkdirSync(path.join(outside, "sub"));
    fs.symlinkSync(outside, path.join(dir, "share/kata-containers"));
    expect(removeVersionKeeping(dir)).toEqual(["share/kata-containers"]);
    expect(fs.statSync(path.join(outside, "sub")).isDirectory()).toBe(true);
  });

  it("names a kept file by the path it was reached at", () => {
    expect(reachedAs("/opt/kata/versions/v1/bin/my-tool", "/opt/kata")).toBe("/opt/kata/bin/my-tool");
    expect(reachedAs("/etc/other", "/opt/kata")).toBe("/etc/other");
  });
});
