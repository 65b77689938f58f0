// A release from its files: a shim is a configuration file of the release, Go or Rust by where it
// is; the version is the release's; what the release carries for a shim is read when first used.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  baseName,
  releaseFromFiles,
  shimOfFile,
  versionFromTarballName,
  versionOf,
} from "../../src/release/release.js";
import { fixtureRelease } from "../helpers/artifacts.js";

describe("the release's shims", () => {
  it("are its configuration files: the Go runtime's, then the Rust runtime's", () => {
    expect(shimOfFile("share/defaults/kata-containers/configuration-qemu.toml")).toEqual({
      shim: "qemu",
      runtime: "go",
    });
    expect(shimOfFile("share/defaults/kata-containers/runtime-rs/configuration-dragonball.toml")).toEqual({
      shim: "dragonball",
      runtime: "rust",
    });
    // The default link and files elsewhere are no shim.
    expect(shimOfFile("share/defaults/kata-containers/configuration.toml")).toBeNull();
    expect(shimOfFile("share/defaults/kata-containers/runtimes/qemu/configuration-qemu.toml")).toBeNull();
  });

  it("Kata 4.1.0: every configuration of both runtimes, on both architectures", () => {
    const amd = fixtureRelease("x86_64");
    expect(amd.version).toBe("4.1.0");
    // Every configuration the fixture holds for amd64, of either runtime (remote's, in both, once).
    const fixtures = path.resolve("test/fixtures/release/configs/4.1.0/amd64");
    const names = fs
      .readdirSync(fixtures, { recursive: true })
      .map((f) => /configuration-(.+)\.toml$/.exec(String(f))?.[1])
      .filter((n) => n !== undefined);
    expect(amd.shims.size).toBe(new Set(names).size);
    expect(amd.shims.size).toBeGreaterThan(20);
    expect(amd.shims.get("qemu-snp-runtime-rs")?.runtime).toBe("rust");
    expect(amd.shims.get("stratovirt")?.hypervisor).toBe("stratovirt");
    // remote is in both: the Go runtime's, as kata-deploy has it, and said.
    expect(amd.shims.get("remote")?.runtime).toBe("go");
    expect(amd.notes.join("\n")).toContain("the remote shim is the Go runtime's");
    const arm = fixtureRelease("aarch64");
    expect(arm.shims.has("clh-runtime-rs")).toBe(false); // arm64 ships no Rust clh configuration
    expect(baseName(arm, "dragonball")).toBe("Kata 4.1.0's runtime-rs/configuration-dragonball.toml");
  });

  it("a configuration that does not parse is named when it is read, not before", () => {
    const release = releaseFromFiles(
      new Map([
        ["VERSION", "9.9.9\n"],
        ["share/defaults/kata-containers/configuration-qemu.toml", '[hypervisor.qemu]\npath = "/x"\n'],
        ["share/defaults/kata-containers/configuration-broken.toml", "[hypervisor.qemu\n"],
      ]),
      "a test",
      null,
    );
    expect(release.shims.get("qemu")?.config.keys.has("hypervisor.qemu.path")).toBe(true);
    expect(() => release.shims.get("broken")?.config).toThrow(
      /share\/defaults\/kata-containers\/configuration-broken\.toml of Kata 9\.9\.9 \(a test\) does not parse/,
    );
  });
});

describe("the release's version", () => {
  it("is its VERSION, else its tarballs' names", () => {
    const files = new Map([
      ["share/defaults/kata-containers/configuration-qemu.toml", "[hypervisor.qemu]\n"],
    ]);
    expect(releaseFromFiles(files, "t", null, "3.0.0").version).toBe("3.0.0");
    expect(releaseFromFiles(new Map([...files, ["VERSION", "3.24.0\n"]]), "t", null, "3.0.0").version).toBe(
      "3.24.0",
    );
    expect(releaseFromFiles(files, "t", null).version).toBe("unknown");
    expect(versionFromTarballName("kata-static-3.24.0-arm64.tar.zst")).toBe("3.24.0");
    expect(versionFromTarballName("kata-go-static-4.1.0-amd64.tar.zst")).toBe("4.1.0");
    expect(versionFromTarballName("kata-tools-static-4.1.0-amd64.tar.zst")).toBe("4.1.0");
    expect(versionFromTarballName("release.tar")).toBeUndefined();
  });

  it("without VERSION, is what its data-collection script says (Kata 3.0.0's, as its build makes it)", () => {
    const script = fs.readFileSync("test/fixtures/release/kata-collect-data-3.0.0.sh", "utf8");
    const files = new Map([
      ["share/defaults/kata-containers/configuration-qemu.toml", "[hypervisor.qemu]\n"],
      ["bin/kata-collect-data.sh", script],
    ]);
    expect(versionOf(files)).toBe("3.0.0");
    // Before a tarball's name; after VERSION.
    expect(releaseFromFiles(files, "t", null, "9.9.9").version).toBe("3.0.0");
    expect(versionOf(new Map([...files, ["VERSION", "3.0.1\n"]]))).toBe("3.0.1");
    // A script that says none (an edited one) says nothing.
    expect(versionOf(new Map([["bin/kata-collect-data.sh", "#!/bin/sh\n"]]))).toBeUndefined();
  });
});

describe("Kata 3.0's dragonball", () => {
  it("is runtime-rs's though its file is beside the Go runtime's, as kata-deploy 3.0 ran it", () => {
    const files = new Map([
      ["share/defaults/kata-containers/configuration-qemu.toml", "[hypervisor.qemu]\n"],
      ["share/defaults/kata-containers/configuration-dragonball.toml", "[hypervisor.dragonball]\n"],
    ]);
    const release = releaseFromFiles(files, "t", null, "3.0.0");
    expect(release.shims.get("dragonball")?.runtime).toBe("rust");
    expect(release.shims.get("qemu")?.runtime).toBe("go");
  });
});
