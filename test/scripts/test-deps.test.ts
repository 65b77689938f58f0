// scripts/test-deps.sh, run on a PATH of stand-ins: every tool it looks for is a script that does
// nothing, `id` answers the uid the test wants, and apt-get records what it was asked and "installs"
// a package by creating the command of the same name. Nothing is installed for real.
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const SCRIPT = path.resolve("scripts/test-deps.sh");
// Found before PATH is narrowed to the stand-ins.
const BASH = execFileSync("sh", ["-c", "command -v bash"], { encoding: "utf8" }).trim();

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** "command package" pairs, as the script lists them. */
function listed(group: string): [string, string][] {
  const out = execFileSync(BASH, [SCRIPT, "--list", group], { encoding: "utf8" });
  return out
    .trim()
    .split("\n")
    .map((line) => line.split(" ") as [string, string]);
}

interface Machine {
  /** Commands left out of PATH. */
  lacking?: string[];
  uid?: number;
  /** apt-get: absent, or present and creating each package's command (or creating nothing). */
  apt?: "none" | "installs" | "installs-nothing";
}

function run(machine: Machine, group = "tests") {
  const bin = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-deps-"));
  made.push(bin);
  const executable = (name: string, text: string) =>
    fs.writeFileSync(path.join(bin, name), text, { mode: 0o755 });
  for (const [command] of listed(group)) {
    if (!machine.lacking?.includes(command)) executable(command, "#!/bin/sh\nexit 0\n");
  }
  executable("id", `#!/bin/sh\necho ${machine.uid ?? 1000}\n`);
  const log = path.join(bin, "apt-get.log");
  if ((machine.apt ?? "installs") !== "none") {
    const creates = machine.apt !== "installs-nothing";
    executable(
      "apt-get",
      `#!${process.execPath}
const fs = require("node:fs");
const args = process.argv.slice(2);
fs.appendFileSync(${JSON.stringify(log)}, args.join(" ") + "\\n");
if (${creates} && args[0] === "install")
  for (const pkg of args.slice(1).filter((a) => !a.startsWith("-")))
    fs.writeFileSync(${JSON.stringify(bin)} + "/" + pkg, "#!/bin/sh\\nexit 0\\n", { mode: 0o755 });
`,
    );
  }
  const started = process.hrtime.bigint();
  const result = spawnSync(BASH, [SCRIPT, group], { encoding: "utf8", env: { PATH: bin } });
  return {
    status: result.status,
    stdout: result.stdout,
    stderr: result.stderr,
    ms: Number(process.hrtime.bigint() - started) / 1e6,
    apt: fs.existsSync(log) ? fs.readFileSync(log, "utf8") : "",
  };
}

describe("scripts/test-deps.sh", () => {
  it("runs first in npm test, so that a missing tool stops it before tsc and vitest", () => {
    const pkg = JSON.parse(fs.readFileSync("package.json", "utf8")) as { scripts: Record<string, string> };
    expect(pkg.scripts.test).toMatch(/^scripts\/test-deps\.sh && /);
  });

  it("lists the tests' tools and, apart, the image build's", () => {
    const tests = listed("tests");
    expect(tests).toContainEqual(["unshare", "util-linux"]);
    expect(tests).toContainEqual(["xz", "xz-utils"]);
    expect(tests.map(([command]) => command)).not.toContain("buildah");
    expect(listed("image")).toEqual([
      ["buildah", "buildah"],
      ["mmdebstrap", "mmdebstrap"],
      ["qemu-aarch64-static", "qemu-user-static"],
    ]);
  });

  it("with everything present: silent, exit 0, apt-get untouched, even as root", () => {
    const result = run({ uid: 0 });
    expect(result).toMatchObject({ status: 0, stdout: "", stderr: "", apt: "" });
    // A few builtins and no process of its own: milliseconds; a second leaves room for a busy machine.
    expect(result.ms).toBeLessThan(1000);
  });

  it("not root: stops at once with the exact apt-get command for what is missing", () => {
    const result = run({ lacking: ["umoci", "xz"], uid: 1000 });
    expect(result.status).toBe(1);
    expect(result.apt).toBe("");
    expect(result.stderr).toContain("\n  sudo apt-get install -y umoci xz-utils\n");
    expect(result.stderr).toContain("umoci (umoci): builds the OCI layouts");
    expect(result.stdout).toBe("");
  });

  it("root with apt-get: installs what is missing, saying what and why", () => {
    // Tools whose package has their name, which the stand-in apt-get creates.
    const result = run({ lacking: ["umoci", "skopeo"], uid: 0 });
    expect(result.status).toBe(0);
    expect(result.apt).toBe("update -qq\ninstall -y -qq umoci skopeo\n");
    expect(result.stdout).toContain("Installing the Debian packages the tests need:");
    expect(result.stdout).toContain("skopeo (skopeo): pushes those layouts to a test registry");
  });

  it("root with apt-get: fails when the install left a command missing", () => {
    const result = run({ lacking: ["patch", "zstd"], uid: 0, apt: "installs-nothing" });
    expect(result.status).toBe(1);
    expect(result.apt).toContain("install -y -qq patch zstd");
    expect(result.stderr).toContain("still missing after apt-get install: patch zstd");
  });

  it("without apt-get: names the Debian packages, even as root", () => {
    const result = run({ lacking: ["umoci"], uid: 0, apt: "none" });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("There is no apt-get here");
    expect(result.stderr).toContain(": umoci\n");
  });

  it("the image build's tools are checked on their own", () => {
    const result = run({ lacking: ["mmdebstrap"], uid: 1000 }, "image");
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("Missing commands the image build (scripts/image.sh) needs:");
    expect(result.stderr).toContain("sudo apt-get install -y mmdebstrap\n");
  });
});
