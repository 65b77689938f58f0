// dist/kata-install, the package's bin and the image's entrypoint: it starts Node from the build's
// start-up snapshot, and that start must print exactly what the plain bundle (dist/cli.js) prints;
// where the blob cannot be used it must take the plain bundle, never a broken start.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { artifactDir } from "./helpers/artifacts.js";
import { CLI } from "./helpers/cli.js";
import { gpuDistroQemuK3s, intelContainerd16 } from "./helpers/nodes.js";
import { buildHost, removeTestHosts } from "./helpers/test-host.js";

const LAUNCHER = path.resolve("dist/kata-install");
const BLOB = path.resolve("dist/kata-install.blob");
const { NODE_OPTIONS: _, ...plainEnv } = process.env;
/** A command the launcher starts from the blob (one that runs the node-side pipeline). */
const BLOB_ARGS = ["preflight", "--help"];

function run(command: string, args: string[], env: NodeJS.ProcessEnv = plainEnv) {
  const r = spawnSync(command, args, { encoding: "utf8", env, input: "", timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}
// Three threads whatever the count of files: report's workers are part of what is compared.
const threaded = { ...plainEnv, KATA_INSTALL_REPORT_THREADS: "3" };
const plain = (args: string[]) => run(process.execPath, [CLI, ...args], threaded);
const fromSnapshot = (args: string[]) =>
  run(process.execPath, ["--snapshot-blob", BLOB, CLI, ...args], threaded);

const artifacts = artifactDir();
const copies: string[] = [];
afterAll(() => {
  removeTestHosts();
  for (const dir of [artifacts, ...copies]) fs.rmSync(dir, { recursive: true, force: true });
});

/** A copy of the package (dist/ and the data it reads) in a new directory. */
function packageCopy(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  copies.push(dir);
  for (const entry of ["dist", "rules", "templates", "artifacts", "package.json"])
    fs.cpSync(path.resolve(entry), path.join(dir, entry), { recursive: true });
  return dir;
}
/** A start from the blob of the package copied to `dir`. */
const fromCopy = (dir: string, args: string[]) =>
  run(process.execPath, [
    "--snapshot-blob",
    path.join(dir, "dist/kata-install.blob"),
    path.join(dir, "dist/cli.js"),
    ...args,
  ]);

/** A directory of a few saved facts documents of the host at `root`. */
function factsDirOf(root: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-snapshot-facts-"));
  copies.push(dir);
  const facts = run(process.execPath, [CLI, "facts", "--json", "--host-root", root]).stdout;
  for (let i = 0; i < 6; i++) fs.writeFileSync(path.join(dir, `n${i}.json`), facts);
  return dir;
}

/**
 * A copy of dist/ whose launcher finds, first on PATH, a node that logs how it is asked and then is
 * the real one; the build's record says that node made the blob.
 */
function loggedLauncher() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-launcher-"));
  copies.push(dir);
  fs.cpSync(path.resolve("dist"), path.join(dir, "dist"), { recursive: true });
  for (const entry of ["rules", "templates", "artifacts", "package.json"])
    fs.symlinkSync(path.resolve(entry), path.join(dir, entry));
  const bin = path.join(dir, "bin");
  fs.mkdirSync(bin);
  const log = path.join(dir, "node.log");
  fs.writeFileSync(path.join(bin, "node"), `#!/bin/sh\necho "$*" >>${log}\nexec ${process.execPath} "$@"\n`, {
    mode: 0o755,
  });
  const record = path.join(dir, "dist/kata-install.node-path");
  fs.writeFileSync(record, `${path.join(bin, "node")}\n`);
  spawnSync("touch", ["-r", path.join(bin, "node"), record]);
  return {
    dir,
    bin,
    log,
    env: { ...plainEnv, PATH: `${bin}:${plainEnv.PATH}` },
    launcher: path.join(dir, "dist/kata-install"),
    asked: () => fs.readFileSync(log, "utf8").trim().split("\n"),
  };
}

describe("the start-up snapshot", () => {
  const planHost = buildHost(intelContainerd16());
  const factsHost = buildHost(gpuDistroQemuK3s());
  const cases: [string, string[]][] = [
    ["--help", ["--help"]],
    ["an unknown command", ["nosuch"]],
    ["facts --json on a test host", ["facts", "--json", "--host-root", factsHost.root]],
    ["plan --json", ["plan", "--json", "--host-root", planHost.root, "--artifacts", `dir:${artifacts}`]],
    // Its worker threads load their own bundle, found from the package (the snapshot has no module URL).
    ["report on worker threads", ["report", "--json", "--facts-dir", factsDirOf(planHost.root)]],
  ];

  it("is built, with the Node that made it", () => {
    expect(fs.statSync(BLOB).size).toBeGreaterThan(0);
    expect(fs.readFileSync(path.resolve("dist/kata-install.node"), "utf8")).toBe(
      `${process.version} ${os.machine()}\n`,
    );
  });

  for (const [what, args] of cases) {
    it(`${what}: the same output and status as the plain bundle`, () => {
      const expected = plain(args);
      const got = fromSnapshot(args);
      expect(got.status).toBe(expected.status);
      expect(got.stdout).toBe(expected.stdout);
      // Stage lines carry their times: compared without them.
      const untimed = (text: string) => text.replace(/\(\d+ ms\)/g, "");
      expect(untimed(got.stderr)).toBe(untimed(expected.stderr));
      // And dist/kata-install, on this Node, takes the snapshot and prints the same.
      expect(run(LAUNCHER, args, threaded).stdout).toBe(expected.stdout);
    });
  }

  it("reads the package beside the blob wherever dist/ is, not where it was built", () => {
    const moved = packageCopy("kata-install-moved-");
    // A rule renamed in the copy only: its plan names it only if the copy's rules were read.
    const rules = path.join(moved, "rules/host.toml");
    fs.writeFileSync(
      rules,
      fs.readFileSync(rules, "utf8").replace('"unknown-architecture"', '"moved-architecture"'),
    );
    const args = cases[3]?.[1] as string[];
    const got = fromCopy(moved, args);
    expect(got.status).toBe(0);
    expect(got.stdout).toContain('"rule": "moved-architecture"');
    expect(got.stdout).toBe(run(process.execPath, [path.join(moved, "dist/cli.js"), ...args]).stdout);
  });

  it("loads the libraries kept out of it (YAML, tar, zstd, xz) from dist/lib when a run needs them", () => {
    // A kata-deploy values file (YAML) and a release split from zstd and xz tarballs (tar and both
    // decompressors): what the plain bundle prints, and the same layouts.
    const values = path.resolve("test/fixtures/kata-deploy/every-key.values.yaml");
    const manifests = ["manifests", "-f", values, "--explain-values"];
    const expected = plain(manifests);
    expect(expected.status).toBe(0);
    expect(fromSnapshot(manifests)).toEqual(expected);
    const tree = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-snapshot-release-"));
    copies.push(tree);
    for (const artifact of fs.readdirSync(artifacts))
      fs.cpSync(path.join(artifacts, artifact), path.join(tree, "root"), {
        recursive: true,
        verbatimSymlinks: true,
      });
    for (const [tool, suffix] of [
      ["zstd", "zst"],
      ["xz", "xz"],
    ]) {
      const tar = path.join(tree, `kata-static-4.1.0-amd64-${tool}.tar`);
      spawnSync("tar", ["-C", path.join(tree, "root"), "-cf", tar, "opt"]);
      spawnSync(tool as string, tool === "zstd" ? ["-q", "--rm", tar] : [tar]);
      const split = (start: typeof plain, out: string) =>
        start([
          "artifacts",
          "split",
          `${tar}.${suffix}`,
          "--arch",
          "x86_64",
          "--out",
          `oci-layout:${path.join(tree, out)}`,
        ]);
      const a = split(plain, `plain-${tool}`);
      expect(a.status, a.stderr).toBe(0);
      const b = split(fromSnapshot, `blob-${tool}`);
      expect({ ...b, stdout: b.stdout.replace(`blob-${tool}`, `plain-${tool}`) }).toEqual(a);
      expect(fs.readFileSync(path.join(tree, `blob-${tool}`, "index.json"), "utf8")).toBe(
        fs.readFileSync(path.join(tree, `plain-${tool}`, "index.json"), "utf8"),
      );
    }
    // Loaded from there, not from the blob: without the file, the run that needs it says so.
    const moved = packageCopy("kata-install-no-yaml-");
    fs.rmSync(path.join(moved, "dist/lib/yaml.cjs"));
    const without = fromCopy(moved, manifests);
    expect(without.status).toBe(1);
    expect(without.stderr).toContain("lib/yaml.cjs");
  });

  it("draws the stages with listr2 on a terminal, loaded from dist/lib only there", () => {
    // A terminal of 120 columns (script(1)); what it shows, without listr2's escape sequences.
    const onTerminal = (node: string[]) => {
      const command = ["stty cols 120 rows 40;", "exec", ...node].join(" ");
      const r = spawnSync("script", ["-qec", command, "/dev/null"], {
        encoding: "utf8",
        env: plainEnv,
        input: "",
      });
      // biome-ignore lint/suspicious/noControlCharactersInRegex: listr2's escape sequences
      return { status: r.status, shown: r.stdout.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, "") };
    };
    const args = ["plan", "--host-root", planHost.root, "--artifacts", `dir:${artifacts}`];
    const blob = onTerminal([process.execPath, "--snapshot-blob", BLOB, CLI, ...args]);
    expect(blob.status, blob.shown).toBe(0);
    expect(blob.shown).toContain("✔ Render configuration and compare with the node");
    expect(blob.shown).toContain("Plan: ");
    // Without the file, a terminal's run says what is missing; a log's never loads it.
    const moved = packageCopy("kata-install-no-listr2-");
    fs.rmSync(path.join(moved, "dist/lib/listr2.cjs"));
    const copy = [process.execPath, "--snapshot-blob", path.join(moved, "dist/kata-install.blob")];
    const without = onTerminal([...copy, path.join(moved, "dist/cli.js"), ...args]);
    expect(without.status).toBe(1);
    expect(without.shown).toContain("lib/listr2.cjs");
    expect(fromCopy(moved, args).status).toBe(0);
  });

  it("dist/kata-install asks no node its version when the one on PATH is the file the build ran", () => {
    const { dir, bin, log, env, launcher, asked } = loggedLauncher();
    const expected = plain(BLOB_ARGS).stdout;
    expect(run(launcher, BLOB_ARGS, env)).toMatchObject({ status: 0, stdout: expected });
    expect(asked()).toEqual([
      `--snapshot-blob ${path.join(dir, "dist/kata-install.blob")} ${path.join(dir, "dist/cli.js")} ${BLOB_ARGS.join(" ")}`,
    ]);
    // Replaced since (another mtime): asked its version first, as any other node.
    fs.rmSync(log);
    fs.utimesSync(path.join(bin, "node"), new Date(), new Date(Date.now() + 5000));
    expect(run(launcher, BLOB_ARGS, env)).toMatchObject({ status: 0, stdout: expected });
    expect(asked()[0]).toBe("--version");
    expect(asked()).toHaveLength(2);
  });

  it("dist/kata-install starts the pipeline's commands from the blob, every other from the plain bundle", () => {
    const { dir, log, env, launcher, asked } = loggedLauncher();
    const blob = `--snapshot-blob ${path.join(dir, "dist/kata-install.blob")} ${path.join(dir, "dist/cli.js")}`;
    const cases: [string[], "blob" | "plain"][] = [
      [["--version"], "plain"],
      [["--help"], "plain"],
      [["help", "plan"], "plain"],
      [["facts", "--help"], "plain"],
      [["report", "--help"], "plain"],
      [["manifests", "--help"], "plain"],
      [["artifacts", "--help"], "plain"],
      [["nosuch"], "plain"],
      [["preflight", "--help"], "blob"],
      [["explain", "--help"], "blob"],
      [["shims", "--help"], "blob"],
      [["plan", "--help"], "blob"],
      [["install", "--help"], "blob"],
      [["uninstall", "--help"], "blob"],
      [["entrypoint", "--help"], "blob"],
      // --debug is no command; `kata-install --dry-run …` is an install.
      [["--debug", "plan", "--help"], "blob"],
      [["--dry-run", "--help"], "blob"],
    ];
    for (const [args, start] of cases) {
      fs.rmSync(log, { force: true });
      const expected = plain(args);
      expect(run(launcher, args, env), args.join(" ")).toEqual(expected);
      expect(asked(), args.join(" ")).toEqual([
        start === "blob" ? `${blob} ${args.join(" ")}` : `${path.join(dir, "dist/cli.js")} ${args.join(" ")}`,
      ]);
    }
  });

  it("dist/kata-install takes the plain bundle when the blob is not this Node's or this machine's, or NODE_OPTIONS is set", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-launcher-"));
    copies.push(dir);
    fs.cpSync(path.resolve("dist"), path.join(dir, "dist"), { recursive: true });
    for (const entry of ["rules", "templates", "artifacts", "package.json"])
      fs.symlinkSync(path.resolve(entry), path.join(dir, entry));
    // A blob Node would abort on: only a start that leaves it alone succeeds. Without the record
    // of the build's node file, the launcher goes by the version and architecture it is told.
    fs.writeFileSync(path.join(dir, "dist/kata-install.blob"), "not a snapshot");
    fs.rmSync(path.join(dir, "dist/kata-install.node-path"));
    const launcher = path.join(dir, "dist/kata-install");
    const expected = plain(BLOB_ARGS).stdout;
    fs.writeFileSync(path.join(dir, "dist/kata-install.node"), `v0.0.0 ${os.machine()}\n`);
    expect(run(launcher, BLOB_ARGS)).toMatchObject({ status: 0, stdout: expected });
    // This Node, another machine's architecture (the launcher reads this one's from the kernel).
    fs.writeFileSync(path.join(dir, "dist/kata-install.node"), `${process.version} riscv128\n`);
    expect(run(launcher, BLOB_ARGS)).toMatchObject({ status: 0, stdout: expected });
    fs.writeFileSync(path.join(dir, "dist/kata-install.node"), `${process.version} ${os.machine()}\n`);
    const withOptions = run(launcher, BLOB_ARGS, { ...plainEnv, NODE_OPTIONS: "--max-old-space-size=512" });
    expect(withOptions).toMatchObject({ status: 0, stdout: expected });
    fs.rmSync(path.join(dir, "dist/kata-install.blob"));
    expect(run(launcher, BLOB_ARGS)).toMatchObject({ status: 0, stdout: expected });
    // Through a link, as npm installs a bin.
    const link = path.join(dir, "bin-link");
    fs.symlinkSync(launcher, link);
    expect(run(link, BLOB_ARGS)).toMatchObject({ status: 0, stdout: expected });
  });
});
