// `kata-install artifacts split`, run as a user runs it, on a stand-in of Kata's real 4.1.0 release
// (every path and link of its three tarballs).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { intelContainerd16 } from "../helpers/nodes.js";
import { buildRelease } from "../helpers/release.js";
import { buildHost } from "../helpers/test-host.js";

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

  it("refuses a bad --out, and a tarball whose name says no architecture beside names that say two", () => {
    expect(runCli(["artifacts", "split", "x.tar.zst", "--out", "/tmp/x"]).stderr).toMatch(
      /--out \/tmp\/x: expected oci-layout:DIR/,
    );
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-names-"));
    made.push(dir);
    const names = ["kata-static-4.1.0-amd64.tar.zst", "kata-static-4.1.0-arm64.tar.zst", "kata.tar.zst"];
    for (const n of names) fs.writeFileSync(path.join(dir, n), "");
    const mixed = runCli([
      "artifacts",
      "split",
      ...names.map((n) => path.join(dir, n)),
      "--out",
      `oci-layout:${path.join(dir, "never")}`,
    ]);
    expect(mixed.status).toBe(1);
    expect(mixed.stderr).toBe(
      "kata-install: kata.tar.zst: the architecture is not in the name, beside tarballs of aarch64, x86_64: name it as Kata does (kata-static-<version>-<arch>.tar.*)\n",
    );
    expect(fs.existsSync(path.join(dir, "never"))).toBe(false);
  });

  it("refuses what would mislabel or misread a release: --arch against its names, a tarball twice or missing, corrupt zstd", () => {
    const { dir, tarballs } = buildRelease("x86_64");
    made.push(dir);
    const out = ["--out", `oci-layout:${path.join(dir, "never")}`];
    const static_ = tarballs[0] as string;
    const relabel = runCli(["artifacts", "split", static_, "--arch", "aarch64", ...out]);
    expect(relabel.status).toBe(1);
    expect(relabel.stderr).toMatch(
      /^kata-install: --arch aarch64: the tarballs' names say x86_64 \(kata-static-4\.1\.0-amd64\.tar\.zst\), and an image labelled aarch64 would hold x86_64 binaries\n$/,
    );
    expect(runCli(["artifacts", "split", static_, "--arch", "riscv", ...out]).stderr).toMatch(
      /--arch riscv: expected one of x86_64, aarch64, s390x, ppc64le/,
    );
    expect(runCli(["artifacts", "split", static_, static_, ...out]).stderr).toMatch(/given twice/);
    expect(runCli(["artifacts", "split", path.join(dir, "kata.tar.zst"), ...out]).stderr).toMatch(
      /kata\.tar\.zst: no such file/,
    );
    // Cut short, and not zstd at all: said as such, in one line, not a crash.
    const cut = path.join(dir, "cut", "kata-static-4.1.0-amd64.tar.zst");
    fs.mkdirSync(path.dirname(cut));
    const bytes = fs.readFileSync(static_);
    fs.writeFileSync(cut, bytes.subarray(0, Math.floor(bytes.length / 2)));
    const text = path.join(dir, "text", "kata-static-4.1.0-amd64.tar.zst");
    fs.mkdirSync(path.dirname(text));
    fs.writeFileSync(text, "not a tarball\n".repeat(100));
    for (const bad of [cut, text]) {
      const run = runCli(["artifacts", "split", bad, ...out]);
      expect(run.status, bad).toBe(1);
      expect(run.stderr, bad).toMatch(
        /^kata-install: \S+kata-static-4\.1\.0-amd64\.tar\.zst: cannot read: its zstd data is corrupt or cut short \([^)]+\)\n$/,
      );
    }
    // Cut short in the second tarball, among paths the first one had (compared, not written): it
    // ends with the error too, rather than waiting for entries that never end.
    const go = tarballs[1] as string;
    const cutGo = path.join(dir, "cut", path.basename(go));
    const goBytes = fs.readFileSync(go);
    fs.writeFileSync(cutGo, goBytes.subarray(0, Math.floor(goBytes.length * 0.6)));
    const second = runCli(["artifacts", "split", static_, cutGo, ...out]);
    expect(second.status).toBe(1);
    expect(second.stderr).toMatch(
      /kata-go-static-4\.1\.0-amd64\.tar\.zst: cannot read: its zstd data is corrupt or cut short/,
    );
    expect(fs.existsSync(path.join(dir, "never"))).toBe(false);
  });

  it("a layout of another architecture is refused by plan, before anything is pulled", () => {
    const { dir, tarballs } = buildRelease("aarch64");
    made.push(dir);
    const layout = path.join(dir, "layout");
    expect(runCli(["artifacts", "split", ...tarballs, "--out", `oci-layout:${layout}`]).status).toBe(0);
    const host = buildHost(intelContainerd16());
    const run = runCli(["plan", "--host-root", host.root, "--artifacts", `oci-layout:${layout}`]);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(
      /\nkata-install: oci-layout:\S+: its images are built for linux\/arm64, and this node is x86_64 \(linux\/amd64\)/,
    );
    host.remove();
  });
});

describe("artifacts split in bounded memory", () => {
  it("a 512 MiB guest image file (zstd: 4 bytes a 128 KiB block) is split with the process's peak RSS under 256 MiB", () => {
    const { dir, tarballs } = buildRelease("x86_64", (name, tree) => {
      if (!name.startsWith("kata-static-")) return;
      const images = path.join(tree, "opt/kata/share/kata-containers");
      const image = fs
        .readdirSync(images)
        .find((f) => f.endsWith(".img") && fs.lstatSync(path.join(images, f)).isFile());
      // Sparse here; the tarball holds its zeros, and the layer too.
      fs.truncateSync(path.join(images, image as string), 512 << 20);
    });
    made.push(dir);
    const rss = path.join(dir, "rss");
    const probe = path.join(dir, "rss.cjs");
    fs.writeFileSync(
      probe,
      `process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(rss)}, String(process.resourceUsage().maxRSS)));\n`,
    );
    const layout = path.join(dir, "layout");
    const run = runCli(["artifacts", "split", ...tarballs, "--out", `oci-layout:${layout}`], {
      nodeArgs: ["--require", probe],
      timeoutMs: 600_000,
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/\n {2}guest-\S+ +sha256:[0-9a-f]{12}… {2}\d+ entries, 5368\d{5} bytes/);
    const peakKiB = Number(fs.readFileSync(rss, "utf8"));
    expect(peakKiB).toBeGreaterThan(0);
    expect(peakKiB * 1024).toBeLessThan(256 << 20);
  }, 600_000);
});
