// The primitives behind kata-install's own places: every component below the base looked at
// without following, reads that neither follow a link nor wait on a FIFO, writes whose temp file
// cannot be a planted link.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { atomicWrite } from "../../src/host/fs-ops.js";
import { OwnPlaceError, ownPath, readNoFollow } from "../../src/host/own-place.js";
import { nestedVmWithoutVmx } from "../helpers/nodes.js";
import { buildHost, removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);

describe("ownPath", () => {
  const host = buildHost(nestedVmWithoutVmx());
  const at = (p: string) => path.join(host.root, p);
  fs.mkdirSync(at("data/kata/.install"), { recursive: true });
  // The prefix itself a link: the admin's choice, followed.
  fs.mkdirSync(at("opt"), { recursive: true });
  fs.symlinkSync("/data/kata", at("opt/kata"));

  it("follows links up to the base, none below it", async () => {
    expect(await ownPath(host.host, "/opt/kata", "/opt/kata/.install/journal.json", "file")).toBe(
      at("data/kata/.install/journal.json"),
    );
    fs.symlinkSync("/etc", at("data/kata/versions"));
    await expect(ownPath(host.host, "/opt/kata", "/opt/kata/versions/abc", "dir")).rejects.toThrow(
      new OwnPlaceError(
        "/opt/kata/versions is a symbolic link (to /etc), where kata-install keeps a directory of its own",
      ),
    );
  });

  it("refuses the last component when it is not the kind kata-install makes there", async () => {
    execFileSync("mkfifo", [at("data/kata/.install/probes.json")]);
    await expect(ownPath(host.host, "/opt/kata", "/opt/kata/.install/probes.json", "file")).rejects.toThrow(
      "/opt/kata/.install/probes.json is a FIFO, where kata-install keeps a regular file of its own",
    );
    fs.mkdirSync(at("data/kata/current"));
    await expect(ownPath(host.host, "/opt/kata", "/opt/kata/current", "link")).rejects.toThrow(
      "/opt/kata/current is a directory, where kata-install keeps a symbolic link of its own",
    );
  });
});

describe("readNoFollow", () => {
  const host = buildHost(nestedVmWithoutVmx());
  const at = (p: string) => path.join(host.root, p);

  it("reads a regular file; refuses a link, a FIFO (at once) and a file past its bound; null when absent", () => {
    fs.writeFileSync(at("journal.json"), "{}\n");
    expect(readNoFollow(at("journal.json"), "/journal.json", 64)?.toString()).toBe("{}\n");
    fs.symlinkSync("/dev/zero", at("zero"));
    expect(() => readNoFollow(at("zero"), "/zero", 64)).toThrow(
      "/zero is a symbolic link (to /dev/zero), where kata-install keeps a regular file of its own",
    );
    execFileSync("mkfifo", [at("fifo")]);
    expect(() => readNoFollow(at("fifo"), "/fifo", 64)).toThrow("/fifo is a FIFO");
    expect(() => readNoFollow(at("journal.json"), "/journal.json", 2)).toThrow(
      "/journal.json is 3 bytes, more than kata-install ever writes there (2)",
    );
    expect(readNoFollow(at("none"), "/none", 64)).toBeNull();
  });
});

describe("atomicWrite", () => {
  it("never writes through a link planted at the temp name it used to use (.<name>.kata-install-<pid>)", async () => {
    const host = buildHost(nestedVmWithoutVmx());
    const outside = `${host.root}.outside`;
    fs.writeFileSync(outside, "not kata-install's\n");
    fs.mkdirSync(path.join(host.root, "etc/containerd"), { recursive: true });
    fs.symlinkSync(outside, path.join(host.root, `etc/containerd/.config.toml.kata-install-${process.pid}`));
    await atomicWrite(host.host, "/etc/containerd/config.toml", "version = 2\n", {
      mode: 0o644,
      uid: 0,
      gid: 0,
    });
    expect(fs.readFileSync(path.join(host.root, "etc/containerd/config.toml"), "utf8")).toBe("version = 2\n");
    expect(fs.readFileSync(outside, "utf8")).toBe("not kata-install's\n");
    fs.rmSync(outside);
  });
});
