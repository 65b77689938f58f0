// `kata-install artifacts split`, run as a user runs it, on a stand-in of Kata's real 4.1.0 release
// (every path and link of its three tarballs).
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { buildRelease } from "../helpers/release.js";

const made: string[] = [];
afterAll(() => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});

describe("kata-install artifacts split", () => {
  it("splits all the tarballs of a release at once; every entry owned, the ignored ones by reason", () => {
    const { dir, tarballs } = buildRelease("x86_64");
    made.push(dir);
    const layout = path.join(dir, "layout");
    const run = runCli(["artifacts", "split", ...tarballs, "--out", `oci-layout:${layout}`]);
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(
      /^Kata 4\.1\.0: \d+ files and links in 3 tarball\(s\): \d+ in \d+ images, \d+ ignored\.\n/,
    );
    expect(run.stdout).toContain(
      `Images in ${layout} (x86_64), tagged by artifact name; digests in kata-release.json:\n`,
    );
    expect(run.stdout).toMatch(
      /\n {2}guest-image +sha256:[0-9a-f]{12}… {2}3 entries, \d+ bytes \(layer \d+ compressed\)\n/,
    );
    expect(run.stdout).toMatch(/\n {2}1 entry: bash completion for kata-runtime/);
    expect(fs.existsSync(path.join(layout, "kata-release.json"))).toBe(true);
  });

  it("a file it does not know is no reason to stop: it goes into the unclaimed image, named; --json lists it", () => {
    const { dir, tarballs } = buildRelease("x86_64", (name, tree) => {
      if (name.startsWith("kata-static-"))
        fs.writeFileSync(path.join(tree, "opt/kata/bin/kata-unknown-helper"), "?");
    });
    made.push(dir);
    const layout = path.join(dir, "layout");
    const run = runCli(["artifacts", "split", ...tarballs, "--out", `oci-layout:${layout}`]);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain(
      'Unclaimed: 1 entry the catalogue does not know and no shim\'s configuration needs, in the image "unclaimed" (no shim pulls it):\n  bin/kata-unknown-helper\n',
    );
    expect(run.stdout).toMatch(/\n {2}unclaimed +sha256:[0-9a-f]{12}… {2}1 entry, 1 bytes/);
    const json = runCli(["artifacts", "split", ...tarballs, "--out", `oci-layout:${layout}`, "--json"]);
    expect(json.status).toBe(0);
    expect(JSON.parse(json.stdout).unclaimed).toEqual(["bin/kata-unknown-helper"]);
  });

  it("what would leave a shim unbootable stops it: a link that dangles where a configuration needs it; exit 1, nothing written", () => {
    const { dir, tarballs } = buildRelease("x86_64", (_name, tree) => {
      fs.rmSync(path.join(tree, "opt/kata/share/kata-containers/vmlinux-6.18.35-202"), { force: true });
    });
    made.push(dir);
    const layout = path.join(dir, "layout");
    const run = runCli(["artifacts", "split", ...tarballs, "--out", `oci-layout:${layout}`]);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(
      "share/defaults/kata-containers/configuration-qemu.toml: hypervisor.qemu.kernel = /opt/kata/share/kata-containers/vmlinux.container: the link share/kata-containers/vmlinux.container dangles",
    );
    expect(run.stderr).toContain("Nothing was written.");
    expect(fs.existsSync(layout)).toBe(false);
    const json = runCli(["artifacts", "split", ...tarballs, "--out", `oci-layout:${layout}`, "--json"]);
    expect(json.status).toBe(1);
    expect(JSON.parse(json.stdout).problems.length).toBeGreaterThan(0);
  });

  it("refuses a bad --out, and tarballs of two architectures", () => {
    expect(runCli(["artifacts", "split", "x.tar.zst", "--out", "/tmp/x"]).stderr).toMatch(
      /--out \/tmp\/x: expected oci-layout:DIR/,
    );
    const mixed = runCli([
      "artifacts",
      "split",
      "kata-static-4.1.0-amd64.tar.zst",
      "kata-go-static-4.1.0-arm64.tar.zst",
      "--out",
      "oci-layout:/tmp/x",
    ]);
    expect(mixed.status).toBe(1);
    expect(mixed.stderr).toMatch(/the tarballs are of different architectures/);
  });
});
