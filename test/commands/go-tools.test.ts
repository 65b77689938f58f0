// The Go runtime's admin tools (go-tools: kata-runtime, kata-monitor, kata-collect-data.sh) are no
// pod's: a node pulls them with DEBUG (kata-runtime exec reaches the debug console) or when the
// overrides file asks ([artifacts.go-tools] pull = true), and a layout split before they had an
// image of their own (the tools in base) still plans and installs, pulling that bigger base.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { answeringHost } from "../helpers/answering.js";
import { artifactDir } from "../helpers/artifacts.js";
import { runCli } from "../helpers/cli.js";
import { removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);
const artifacts = artifactDir();
// As an earlier kata-install split it: kata-runtime and kata-monitor in base.
const oldLayout = artifactDir();
fs.cpSync(path.join(oldLayout, "go-tools"), path.join(oldLayout, "base"), { recursive: true });
fs.rmSync(path.join(oldLayout, "go-tools"), { recursive: true });
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-go-tools-"));
afterAll(() => {
  for (const dir of [artifacts, oldLayout, tmp]) fs.rmSync(dir, { recursive: true, force: true });
});

interface Plan {
  artifacts: Array<{ name: string; reason: string }>;
  transfer?: { images: number; releaseImages: number };
}

function overrides(text: string): string {
  const file = path.join(tmp, `o-${Math.random().toString(36).slice(2)}.toml`);
  fs.writeFileSync(file, text);
  return file;
}

async function plan(source: string, text: string, env: Record<string, string> = {}) {
  const host = await answeringHost();
  const args = ["--host-root", host.root, "--artifacts", `dir:${source}`, "--overrides", overrides(text)];
  const run = runCli(["plan", ...args, "--json"], { env: { DEBUG: "", ...env } });
  return {
    host,
    args,
    plan: (run.stdout.trim() === "" ? { artifacts: [] } : JSON.parse(run.stdout)) as Plan,
    run,
  };
}

const names = (p: Plan) => p.artifacts.map((a) => a.name);

describe("go-tools", () => {
  it("is not pulled by a qemu node that asks for nothing", async () => {
    const { plan: p } = await plan(artifacts, 'shims = ["qemu"]\n');
    expect(names(p)).toEqual(["base", "guest-image", "guest-kernel", "meta", "qemu", "virtiofsd"]);
  });

  it("is pulled with DEBUG, saying why", async () => {
    const { plan: p } = await plan(artifacts, 'shims = ["qemu"]\n', { DEBUG: "true" });
    expect(names(p)).toContain("go-tools");
    expect(p.artifacts.find((a) => a.name === "go-tools")?.reason).toMatch(
      /DEBUG is on: kata-runtime exec reaches the debug console of qemu/,
    );
  });

  it("is pulled when the overrides file asks, and installed: kata-runtime on the node", async () => {
    const text = 'shims = ["qemu"]\n\n[artifacts.go-tools]\npull = true\n';
    const { host, args, plan: p } = await plan(artifacts, text);
    expect(p.artifacts.find((a) => a.name === "go-tools")?.reason).toBe("asked for by the overrides file");
    const run = runCli(["install", ...args], { env: { DEBUG: "" } });
    expect(run.status, run.stderr).toBe(0);
    expect(fs.existsSync(path.join(host.root, "opt/kata/bin/kata-runtime"))).toBe(true);
    expect(fs.existsSync(path.join(host.root, "opt/kata/bin/kata-monitor"))).toBe(true);
  });

  it("an artifact the catalogue does not know cannot be asked for, naming the file's key", async () => {
    const { run } = await plan(artifacts, "[artifacts.go-toolz]\npull = true\n");
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/artifacts\.go-toolz.*unknown artifact "go-toolz" \(known: .*go-tools/s);
  });

  it("cannot be both asked for and the host's own", async () => {
    const { run } = await plan(artifacts, '[artifacts.go-tools]\npull = true\nsource = "distro"\n');
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(
      'artifact "go-tools" cannot be both pulled and the host\'s own (source = "distro")',
    );
  });

  it("a layout split before go-tools existed installs, its bigger base bringing the tools (DEBUG asks nothing more)", async () => {
    const { host, args, plan: p } = await plan(oldLayout, 'shims = ["qemu"]\n', { DEBUG: "true" });
    expect(names(p)).toEqual(["base", "guest-image", "guest-kernel", "meta", "qemu", "virtiofsd"]);
    const run = runCli(["install", ...args], { env: { DEBUG: "true" } });
    expect(run.status, run.stderr).toBe(0);
    expect(fs.existsSync(path.join(host.root, "opt/kata/bin/kata-runtime"))).toBe(true);
  });
});
