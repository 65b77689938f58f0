import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildProgram, COMMANDS } from "../src/cli.js";
import { Facts } from "../src/detect/facts.js";
import { artifactDir } from "./helpers/artifacts.js";
import { runCli } from "./helpers/cli.js";
import { gpuDistroQemuK3s, intelContainerd16 } from "./helpers/nodes.js";
import { buildHost, removeTestHosts } from "./helpers/test-host.js";

afterAll(removeTestHosts);

const NODE_ARCH: Record<string, string> = {
  x64: "x86_64",
  arm64: "aarch64",
  s390x: "s390x",
  ppc64: "ppc64le",
  riscv64: "riscv64",
};
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-cli-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe("kata-install facts on the machine running the tests", () => {
  const run = runCli(["facts", "--json", "--host-root", "/"]);

  it("exits 0 and prints one valid Facts document", () => {
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    const parsed = Facts.safeParse(JSON.parse(run.stdout));
    expect(parsed.success).toBe(true);
  });

  it("reads the architecture this machine really has", () => {
    const facts = JSON.parse(run.stdout);
    expect(facts.arch).toBe(NODE_ARCH[process.arch]);
    expect(facts.kernel.release).toBe(os.release());
    expect(facts.cpu.count).toBe(os.cpus().length);
  });
});

describe("kata-install facts on a test host", () => {
  const built = buildHost(gpuDistroQemuK3s());

  it("prints a readable summary from the same document", () => {
    const run = runCli(["facts", "--host-root", built.root]);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain(`Node facts (host root ${built.root})`);
    expect(run.stdout).toMatch(/qemu: 8\.2\.2 \(distro, \/usr\/bin\/qemu-system-x86_64\)/);
    expect(run.stdout).toMatch(/runtime\s+k3s 1\.30\.4/);
    expect(run.stdout).toMatch(/GPUs: 1 \(NVIDIA 1\) · SR-IOV capable: 1 · IOMMU: on \(4 groups\)/);
  });

  it("saves facts that --facts replays unchanged", () => {
    const saved = runCli(["facts", "--json", "--host-root", built.root]);
    const file = path.join(tmp, "node.json");
    fs.writeFileSync(file, saved.stdout);
    const replay = runCli(["facts", "--json", "--facts", file]);
    expect(replay.status).toBe(0);
    expect(JSON.parse(replay.stdout)).toEqual(JSON.parse(saved.stdout));
  });
});

describe("bad input", () => {
  it("a facts file with a wrong field names the key", () => {
    const facts = JSON.parse(runCli(["facts", "--json", "--host-root", "/"]).stdout);
    facts.kvm.device = "yes";
    delete facts.cpu.flags;
    const file = path.join(tmp, "bad.json");
    fs.writeFileSync(file, JSON.stringify(facts));
    const run = runCli(["facts", "--facts", file]);
    expect(run.status).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain(`kata-install: ${file}: not a valid facts document:`);
    expect(run.stderr).toMatch(/- cpu\.flags: Invalid input: expected array, received undefined/);
    expect(run.stderr).toMatch(/- kvm\.device: Invalid input: expected boolean, received string/);
  });

  it("a facts file with a key no fact has (a typo) names it, with the other problems", () => {
    const facts = JSON.parse(runCli(["facts", "--json", "--host-root", "/"]).stdout);
    facts.kvm.devcie = true;
    facts.kvm.device = "yes";
    facts.hypervisors.qemu = { ...(facts.hypervisors.qemu ?? {}), verison: "8.2" };
    const file = path.join(tmp, "typo.json");
    fs.writeFileSync(file, JSON.stringify(facts));
    const run = runCli(["facts", "--facts", file]);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/- kvm\.devcie: no such fact/);
    expect(run.stderr).toMatch(/- hypervisors\.qemu\.verison: no such fact/);
    expect(run.stderr).toMatch(/- kvm\.device: Invalid input: expected boolean/);
  });

  it("a facts file that is not JSON, or not there, says so", () => {
    const file = path.join(tmp, "broken.json");
    fs.writeFileSync(file, "{ nope");
    expect(runCli(["facts", "--facts", file]).stderr).toMatch(
      /not a valid facts document:\n {2}- invalid JSON/,
    );
    expect(runCli(["facts", "--facts", path.join(tmp, "absent.json")]).stderr).toContain(
      "cannot read: it does not exist",
    );
  });

  it("a host root that does not exist is an error, not an empty node", () => {
    const run = runCli(["facts", "--host-root", path.join(tmp, "nowhere")]);
    expect(run.status).toBe(1);
    expect(run.stderr).toBe(`kata-install: --host-root ${path.join(tmp, "nowhere")}: no such directory\n`);
    // Nor is a directory with nothing of a node in it (a path mistyped, a mount not made).
    const empty = fs.mkdtempSync(path.join(tmp, "empty-"));
    fs.writeFileSync(path.join(empty, "notes.txt"), "");
    for (const command of ["facts", "preflight", "plan", "install"]) {
      const refused = runCli([command, "--host-root", empty]);
      expect(refused.status, command).toBe(1);
      expect(refused.stderr, command).toBe(
        `kata-install: --host-root ${empty}: not a node's root directory (it has no etc, proc, sys): give the directory the node's / is mounted at\n`,
      );
    }
    expect(fs.readdirSync(empty)).toEqual(["notes.txt"]);
  });

  it("an unknown command or option fails with usage help", () => {
    const run = runCli(["facts", "--jsn"]);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("unknown option '--jsn'");
  });
});

describe("the program", () => {
  it("registers each command under the name the table gives it, in that order", () => {
    expect(buildProgram(() => {}).commands.map((c) => c.name())).toEqual(COMMANDS.map(([name]) => name));
    for (const [name] of COMMANDS)
      expect(buildProgram(() => {}, name).commands.map((c) => c.name())).toEqual([name]);
  });

  it("builds every command when none is named, so that help and a mistyped name see them all", () => {
    expect(buildProgram(() => {}, "fact").commands).toHaveLength(COMMANDS.length);
    const typo = runCli(["fact"]);
    expect(typo.status).toBe(1);
    expect(typo.stderr).toContain("(Did you mean facts?)");
    const help = runCli(["help", "plan"]);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain("Usage: kata-install plan [options]");
    const top = runCli(["--help"]);
    for (const [name] of COMMANDS) expect(top.stdout).toMatch(new RegExp(`^  ${name} `, "m"));
  });
});

describe("start-up cost", () => {
  let traces = 0;
  const traced = (args: string[]) => {
    const file = path.join(tmp, `trace-${++traces}.txt`);
    const run = runCli(args, {
      env: { TRACE_IMPORTS_FILE: file },
      nodeArgs: ["--import", path.resolve("test/helpers/trace-imports.mjs")],
    });
    expect(run.status).toBe(0);
    return fs
      .readFileSync(file, "utf8")
      .split("\n")
      .filter((url) => url.startsWith("file:"))
      .map((url) => new URL(url).pathname);
  };

  it("--help loads the CLI file only: no command code, no nunjucks or listr2", () => {
    const loaded = traced(["--help"]);
    expect(loaded.map((f) => path.relative(path.resolve("dist"), f))).toEqual(["cli.js"]);
  });

  it("plan loads the node's command group and nunjucks for the templates, none of the other large libraries", () => {
    const host = buildHost(intelContainerd16());
    const artifacts = artifactDir();
    const loaded = traced(["plan", "--json", "--host-root", host.root, "--artifacts", `dir:${artifacts}`]);
    fs.rmSync(artifacts, { recursive: true, force: true });
    expect(loaded.map((f) => path.relative(path.resolve("dist"), f)).sort()).toEqual([
      "cli.js",
      "commands/node-side.js",
      "lib/nunjucks.js",
    ]);
  });

  it("facts --facts loads the facts command but not execa (it runs nothing)", () => {
    const file = path.join(tmp, "plain.json");
    fs.writeFileSync(file, runCli(["facts", "--json", "--host-root", "/"]).stdout);
    const loaded = traced(["facts", "--json", "--facts", file]);
    const names = loaded.map((f) => path.basename(f));
    expect(names).toContain("facts.js");
    expect(names.some((f) => f.startsWith("execa-"))).toBe(false);
  });

  it("report loads its own command group, not the node's commands beside it", () => {
    const dir = fs.mkdtempSync(path.join(tmp, "facts-"));
    fs.writeFileSync(path.join(dir, "n1.json"), runCli(["facts", "--json", "--host-root", "/"]).stdout);
    const loaded = traced(["report", "--facts-dir", dir, "--json"]);
    expect(loaded.map((f) => path.relative(path.resolve("dist"), f)).sort()).toEqual([
      "cli.js",
      "commands/report.js",
    ]);
  });
});
