import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { artifactDir } from "../helpers/artifacts.js";
import { runCli } from "../helpers/cli.js";

const made: string[] = [];
afterAll(() => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});

describe("kata-install artifacts split", () => {
  it("splits a zstd release into a layout, naming what it left out", () => {
    const dir = artifactDir();
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-cli-split-"));
    made.push(dir, work);
    const tree = path.join(work, "tree");
    for (const artifact of fs.readdirSync(dir))
      fs.cpSync(path.join(dir, artifact), tree, { recursive: true });
    fs.writeFileSync(path.join(tree, "opt/kata/bin/kata-unknown-helper"), "?");
    const tar = path.join(work, "kata-static-3.9.0-amd64.tar");
    execFileSync("tar", ["-C", tree, "-cf", tar, "opt"]);
    execFileSync("zstd", ["-q", "--rm", tar]);
    const layout = path.join(work, "layout");
    const run = runCli(["artifacts", "split", `${tar}.zst`, "--out", `oci-layout:${layout}`]);
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(
      new RegExp(
        `^Images in ${layout} \\(x86_64\\), tagged by artifact name; digests in kata-release\\.json:\\n`,
      ),
    );
    expect(run.stdout).toMatch(/\n {2}qemu +sha256:[0-9a-f]{12}… {2}2 files, \d+ bytes compressed\n/);
    expect(run.stdout).toMatch(
      /Not in any artifact \(1\), left out:\n {2}opt\/kata\/bin\/kata-unknown-helper\n$/,
    );
    expect(runCli(["artifacts", "split", `${tar}.zst`, "--out", layout]).stderr).toMatch(
      /--out .*: expected oci-layout:DIR/,
    );
  });
});
