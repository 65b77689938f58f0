// Every file a user gives kata-install — values for `manifests -f`, a saved plan for `install
// --plan`, a facts file, the overrides file, a kubeconfig, the facts of a report — is read only as
// a regular file under a size limit: a FIFO, /dev/zero or 55 MB of values is refused at once, by
// name, without blocking, without filling memory.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readInput } from "../src/input-file.js";
import { runCli } from "./helpers/cli.js";
import { intelContainerd16 } from "./helpers/nodes.js";
import { buildHost, removeTestHosts } from "./helpers/test-host.js";

afterAll(removeTestHosts);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-inputs-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const fifo = path.join(tmp, "values.fifo");
execFileSync("mkfifo", [fifo]);
const big = path.join(tmp, "big.toml");
// 55 MB of values, as the attack gave: a comment line repeated.
fs.writeFileSync(big, "# values\n".repeat(55 << 17));

describe("readInput", () => {
  it("reads a regular file, and refuses a FIFO, a device, a directory and a file past its bound, by what it is", () => {
    const file = path.join(tmp, "small.txt");
    fs.writeFileSync(file, "hello\n");
    expect(readInput(file, 1024)).toEqual({ ok: true, bytes: Buffer.from("hello\n") });
    expect(readInput(fifo, 1024)).toEqual({
      ok: false,
      missing: false,
      reason: "is a FIFO, not a regular file",
    });
    expect(readInput("/dev/zero", 1024)).toEqual({
      ok: false,
      missing: false,
      reason: "is a device, not a regular file",
    });
    expect(readInput(tmp, 1024)).toEqual({ ok: false, missing: false, reason: "is a directory" });
    expect(readInput(file, 3)).toEqual({
      ok: false,
      missing: false,
      reason: "is larger than 3 bytes, more than kata-install reads of such a file",
    });
    expect(readInput(path.join(tmp, "none"), 3)).toEqual({
      ok: false,
      missing: true,
      reason: "does not exist",
    });
  });
});

/** The run ended at once, exit 1, with `said` in its one-line (or listed) error and no stack. */
function refusedAtOnce(args: string[], said: string): void {
  const started = Date.now();
  const run = runCli(args);
  expect(Date.now() - started, `${args.join(" ")} took too long`).toBeLessThan(15_000);
  expect(run.status, run.stderr).toBe(1);
  expect(run.stderr).toContain(said);
  expect(run.stderr).not.toMatch(/\n\s+at /);
  expect(run.stderr).not.toMatch(/\bE[A-Z]{3,}\b/);
}

describe("manifests -f", () => {
  it("a FIFO, /dev/zero or 55 MB of values is refused at once, naming the file", () => {
    refusedAtOnce(["manifests", "-f", fifo], `${fifo}: is a FIFO, not a regular file`);
    refusedAtOnce(["manifests", "-f", "/dev/zero"], "/dev/zero: is a device, not a regular file");
    refusedAtOnce(["manifests", "-f", big], `${big}: is larger than 1048576 bytes`);
  });
});

describe("install --plan, plan --facts, --overrides", () => {
  const host = buildHost(intelContainerd16());

  it("a FIFO or /dev/zero is refused at once, naming the file", () => {
    for (const file of [fifo, "/dev/zero"]) {
      const what = file === fifo ? "is a FIFO, not a regular file" : "is a device, not a regular file";
      refusedAtOnce(["install", "--host-root", host.root, "--plan", file], `${file}: not a saved plan`);
      refusedAtOnce(["install", "--host-root", host.root, "--plan", file], `cannot read: it ${what}`);
      refusedAtOnce(["plan", "--facts", file], `cannot read: it ${what}`);
      refusedAtOnce(["plan", "--host-root", host.root, "--overrides", file], `${file}: ${what}`);
    }
    refusedAtOnce(
      ["plan", "--host-root", host.root, "--overrides", big],
      `${big}: is larger than 1048576 bytes`,
    );
  });

  it("a kubeconfig that is a FIFO is refused at once, naming it", () => {
    refusedAtOnce(["report", "--kubeconfig", fifo], `${fifo}: is a FIFO, not a regular file`);
  });
});
