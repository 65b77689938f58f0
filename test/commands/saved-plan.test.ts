// `plan --out FILE` then `install --plan FILE` (and the entrypoint's KATA_INSTALL_PLAN), run as a user
// runs them: applied unchanged, a saved plan gives the tree a plain install gives; after a change to
// the node or to an input, it is refused, the change named, and the node left as it was.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { answeringHost } from "../helpers/answering.js";
import { artifactDir } from "../helpers/artifacts.js";
import { CLI, runCli } from "../helpers/cli.js";
import { nestedVmWithoutVmx } from "../helpers/nodes.js";
import { buildHost, removeTestHosts } from "../helpers/test-host.js";
import { installedTree, snapshot } from "../helpers/tree.js";

afterAll(removeTestHosts);
const artifacts = artifactDir();
const plans = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-plans-"));
afterAll(() => {
  fs.rmSync(artifacts, { recursive: true, force: true });
  fs.rmSync(plans, { recursive: true, force: true });
});
const source = ["--artifacts", `dir:${artifacts}`];
let count = 0;

/** A plan saved from `root`; its file. */
function savePlan(root: string, ...args: string[]): string {
  const file = path.join(plans, `plan-${++count}.json`);
  const run = runCli(["plan", "--host-root", root, ...source, ...args, "--out", file]);
  expect(run.stderr).not.toMatch(/kata-install:/);
  expect(run.status).toBe(0);
  return file;
}

/** `install --plan` that must be refused: its error, and the node untouched. */
function refused(root: string, file: string, args: string[] = [], env: Record<string, string> = {}): string {
  const before = snapshot(root);
  const run = runCli(["install", "--host-root", root, "--plan", file, ...args], { env });
  expect(run.status).toBe(1);
  expect(run.stdout).toBe("");
  expect(snapshot(root)).toEqual(before);
  return run.stderr;
}

describe("plan --out FILE, then install --plan FILE", () => {
  it("saves the plan as plan --json prints it, says where, and prints the plan as usual", async () => {
    const host = await answeringHost();
    const file = path.join(plans, "saved.json");
    const run = runCli(["plan", "--host-root", host.root, ...source, "--out", file]);
    expect(run.status).toBe(0);
    const plain = runCli(["plan", "--host-root", host.root, ...source]);
    expect(run.stdout).toBe(
      `${plain.stdout}\nSaved the plan to ${file}. To see it checked against the node again: kata-install install --host-root ${host.root} --plan ${file} --dry-run. To apply exactly this plan: kata-install install --host-root ${host.root} --plan ${file} (or, on the node itself, without --host-root)\n`,
    );
    const saved = JSON.parse(fs.readFileSync(file, "utf8"));
    const json = JSON.parse(runCli(["plan", "--host-root", host.root, ...source, "--json"]).stdout);
    expect(saved.plan).toEqual(json);
    expect(saved.options).toMatchObject({
      artifacts: `dir:${artifacts}`,
      artifactsTag: "latest",
      shims: null,
    });
    // The kata-deploy variables the plan read, and only those: a changed PATH changes no plan.
    expect(Object.keys(saved.inputs.environment)).toContain("SHIMS_X86_64");
    expect(Object.keys(saved.inputs.environment)).not.toContain("PATH");
    expect(saved.inputs.overrides).toEqual({ path: "/etc/kata-containers/kata-install.toml", sha256: null });
    expect(saved.inputs.data["rules/shims.toml"]).toMatch(/^[0-9a-f]{64}$/);
    expect(saved.inputs.artifacts).toMatch(/^[0-9a-f]{16}$/);
    // --json keeps stdout to the one document, and saves as well.
    fs.rmSync(file);
    const quiet = runCli(["plan", "--host-root", host.root, ...source, "--json", "--out", file]);
    expect(JSON.parse(quiet.stdout)).toEqual(json);
    expect(JSON.parse(fs.readFileSync(file, "utf8"))).toEqual(saved);
  });

  it("a plan that removes links of an earlier install (a shim dropped) applies: links are compared as links", async () => {
    const host = await answeringHost();
    const first = runCli(["install", "--host-root", host.root, ...source, "--shims", "qemu,clh"]);
    expect(first.status, first.stderr).toBe(0);
    const link = path.join(host.root, "opt/kata/share/defaults/kata-containers/configuration-clh.toml");
    expect(fs.readlinkSync(link)).toBe("runtimes/clh/configuration-clh.toml");
    const file = savePlan(host.root, "--shims", "qemu");
    const saved = JSON.parse(fs.readFileSync(file, "utf8"));
    expect(saved.plan.changes).toContainEqual(
      expect.objectContaining({
        path: "/opt/kata/share/defaults/kata-containers/configuration-clh.toml",
        action: "delete",
        link: true,
      }),
    );
    const run = runCli(["install", "--host-root", host.root, "--plan", file, "--shims", "qemu"]);
    expect(run.status, run.stderr).toBe(0);
    expect(fs.existsSync(link)).toBe(false);
  });

  it("applied unchanged, gives the tree a plain install gives", async () => {
    const saved = await answeringHost();
    const plain = await answeringHost();
    expect(snapshot(saved.root)).toEqual(snapshot(plain.root));
    const file = savePlan(saved.root);
    const applied = runCli(["install", "--host-root", saved.root, "--plan", file]);
    expect(applied.stderr).not.toMatch(/kata-install:/);
    expect(applied.status).toBe(0);
    const direct = runCli(["install", "--host-root", plain.root, ...source]);
    expect(direct.status).toBe(0);
    expect(applied.stdout).toBe(direct.stdout);
    expect(applied.stdout).toMatch(/\nFiles: 13 written, 0 removed\.\n/);
    // The same tree, byte for byte; only the journal's random names for its saved copies, and the
    // files' identities (inodes, times) in the probe cache and the version's list, are each host's.
    expect(installedTree(saved.root)).toEqual(installedTree(plain.root));
  });

  it("is refused after a file it changes was edited, naming it, and nothing is written", async () => {
    const host = await answeringHost();
    const file = savePlan(host.root);
    fs.appendFileSync(path.join(host.root, "etc/containerd/config.toml"), "# edited\n");
    const error = refused(host.root, file);
    expect(error).toMatch(
      /^kata-install: the plan in .* was not applied: the node or the inputs changed since it was made:\n {2}- \/etc\/containerd\/config\.toml changed since the plan \(sha256 [0-9a-f]{16}… → [0-9a-f]{16}…\)\n/m,
    );
    // The command to make it again is the one it was made with: the root, the source, the file.
    expect(error).toContain(
      `Nothing of it was applied. Make the plan again (kata-install plan --host-root ${host.root} --artifacts dir:${artifacts} --out ${file}), review it, and apply that.`,
    );
    // A dry run says the same, as what would be, and changes nothing either.
    const before = snapshot(host.root);
    const dry = runCli(["install", "--host-root", host.root, "--plan", file, "--dry-run"]);
    expect(dry.status).toBe(1);
    expect(dry.stderr).toContain(`the plan in ${file} would not be applied: the node or the inputs changed`);
    expect(dry.stderr).toContain("Nothing of it would be applied. Make the plan again (");
    expect(snapshot(host.root)).toEqual(before);
  });

  it("is refused after an admin's drop-in changed what a check finds, saying what the check says now", async () => {
    const host = await answeringHost();
    // Installed with qemu; the plan adds clh, so it has changes to apply.
    expect(runCli(["install", "--host-root", host.root, ...source, "--shims", "qemu"]).status).toBe(0);
    const dropIn = path.join(
      host.root,
      "opt/kata/share/defaults/kata-containers/runtimes/qemu/config.d/90-admin.toml",
    );
    fs.mkdirSync(path.dirname(dropIn), { recursive: true });
    fs.writeFileSync(dropIn, "[hypervisor.qemu]\ndefault_memory = 4096\n");
    const file = savePlan(host.root, "--shims", "qemu,clh");
    fs.writeFileSync(dropIn, '[hypervisor.qemu]\npath = "/nonexistent/qemu"\n');
    const error = refused(host.root, file, ["--shims", "qemu,clh"]);
    expect(error).toMatch(
      /^ {2}- the check artifact-paths is not as it was when the plan was made: now fail \(error\): .*\/nonexistent\/qemu.* \(it was pass \(error\): .*\) — the node changed where the plan's hashes do not look/m,
    );
    expect(error).not.toContain('"checks" entry');
  });

  it("is refused after the node's facts changed, naming the facts", async () => {
    const host = await answeringHost();
    const file = savePlan(host.root);
    fs.writeFileSync(path.join(host.root, "sys/module/kvm_intel/parameters/nested"), "N\n");
    const error = refused(host.root, file);
    expect(error).toContain("  - facts: kvm.nested changed\n");
    expect(error).toContain("  - facts: kvm.params.nested changed\n");
  });

  it("is refused after the overrides file or a kata-deploy variable changed", async () => {
    const host = await answeringHost();
    const file = savePlan(host.root);
    expect(refused(host.root, file, [], { DEBUG: "true" })).toContain("  - environment: DEBUG is set now\n");
    fs.mkdirSync(path.join(host.root, "etc/kata-containers"), { recursive: true });
    fs.writeFileSync(
      path.join(host.root, "etc/kata-containers/kata-install.toml"),
      "# the admin's, empty for now\n",
    );
    expect(refused(host.root, file)).toMatch(
      / {2}- overrides file \/etc\/kata-containers\/kata-install\.toml changed since the plan \(sha256 absent → [0-9a-f]{16}…\)\n/,
    );
  });

  it("install --plan --dry-run: the saved plan checked against the node as install checks it, nothing applied", async () => {
    const host = await answeringHost();
    const file = savePlan(host.root);
    const before = snapshot(host.root);
    const dry = runCli(["install", "--host-root", host.root, "--plan", file, "--dry-run"]);
    expect(dry.stderr).not.toMatch(/kata-install:/);
    expect(dry.status).toBe(0);
    // The plan as it was saved (and reviewed), then what install --plan would do with it.
    const shown = runCli(["plan", "--host-root", host.root, ...source]).stdout;
    expect(dry.stdout).toBe(
      `${shown}The saved plan ${file} would be applied: made again now, it is the same plan. Nothing was changed.\n`,
    );
    expect(snapshot(host.root)).toEqual(before);
    // No lock was taken: a dry run runs beside an install.
    expect(fs.existsSync(path.join(host.root, "run/lock/kata-install.lock"))).toBe(false);
    const applied = runCli(["install", "--host-root", host.root, "--plan", file]);
    expect(applied.status, applied.stderr).toBe(0);
    const after = runCli(["install", "--host-root", host.root, "--plan", file, "--dry-run"]);
    expect(after.status).toBe(0);
    expect(after.stdout).toMatch(
      new RegExp(`\nThe saved plan ${file} is applied already: install --plan would change nothing.\n$`),
    );
  });

  it("install --plan again after it applied: already applied, exit 0; after an edit to a file it wrote, refused", async () => {
    const host = await answeringHost();
    const file = savePlan(host.root);
    const first = runCli(["install", "--host-root", host.root, "--plan", file]);
    expect(first.status, first.stderr).toBe(0);
    const installed = snapshot(host.root);
    const again = runCli(["install", "--host-root", host.root, "--plan", file]);
    expect(again.stderr).not.toMatch(/kata-install:/);
    expect(again.status).toBe(0);
    expect(again.stdout).toBe(
      `The saved plan ${file} is applied already: the node is as it leaves it, and the plan made again now changes nothing.\nFiles: 0 written, 0 removed.\nNothing to do: the node is as the plan wants it.\n`,
    );
    const json = runCli(["install", "--host-root", host.root, "--plan", file, "--json"]);
    expect(JSON.parse(json.stdout)).toMatchObject({ savedPlan: "applied", restarted: null });
    expect(snapshot(host.root)).toEqual(installed);
    // A file the plan wrote, edited since: the node is no longer as the plan leaves it.
    fs.appendFileSync(
      path.join(host.root, "opt/kata/share/defaults/kata-containers/runtimes/qemu/configuration-qemu.toml"),
      "# edited\n",
    );
    expect(refused(host.root, file)).toContain(
      "  - /opt/kata/share/defaults/kata-containers/runtimes/qemu/configuration-qemu.toml changed since the plan (sha256 ",
    );
  });

  it("refuses options that would make another plan, and a file that is not a saved plan", async () => {
    const host = await answeringHost();
    const file = savePlan(host.root, "--shims", "qemu");
    expect(refused(host.root, file, ["--shims", "qemu,clh"])).toBe(
      `kata-install: --shims qemu,clh: the plan in ${file} was made with --shims qemu, and a saved plan is applied as it was made: leave --shims out, or make the plan again with it\n`,
    );
    expect(refused(host.root, file, ["--artifacts", "dir:/elsewhere"])).toContain(
      `--artifacts dir:/elsewhere: the plan in ${file} was made with --artifacts dir:${artifacts}`,
    );
    expect(refused(host.root, file, ["--default-shim", "qemu"])).toContain("was made without --default-shim");
    const broken = path.join(plans, "broken.json");
    fs.writeFileSync(broken, JSON.stringify({ ...JSON.parse(fs.readFileSync(file, "utf8")), options: {} }));
    expect(refused(host.root, broken)).toMatch(
      new RegExp(
        `^kata-install: ${broken}: not a saved plan this kata-install can apply:\\n {2}- options\\.overrides: `,
      ),
    );
  });

  it("is not made from a facts file: install reads the node", () => {
    const host = buildHost(nestedVmWithoutVmx());
    const facts = path.join(plans, "facts.json");
    fs.writeFileSync(facts, runCli(["facts", "--json", "--host-root", host.root]).stdout);
    const file = path.join(plans, "from-facts.json");
    const run = runCli(["plan", "--host-root", host.root, "--facts", facts, "--out", file]);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/^kata-install: --out with --facts: a saved plan is what install would do/m);
    expect(fs.existsSync(file)).toBe(false);
  });

  it("is not saved when a preflight error remains: an install would refuse it", () => {
    const nested = buildHost(nestedVmWithoutVmx());
    const file = path.join(plans, "never.json");
    const run = runCli(["plan", "--host-root", nested.root, "--shims", "qemu", ...source, "--out", file]);
    expect(run.status).toBe(1);
    expect(run.stdout).toContain(
      `\nThe plan was not saved to ${file}: a preflight error remains, so an install would refuse it.\n`,
    );
    expect(fs.existsSync(file)).toBe(false);
  });
});

describe("entrypoint install with KATA_INSTALL_PLAN", () => {
  /** The entrypoint outside a cluster: it installs, then waits for SIGTERM (sent once it says so). */
  function entrypoint(
    root: string,
    file: string,
  ): Promise<{ status: number | null; stdout: string; stderr: string }> {
    const child = spawn(process.execPath, [CLI, "entrypoint", "install"], {
      env: {
        ...process.env,
        HOST_ROOT: root,
        HOST_EXEC: "root-exec",
        HEALTH_ADDRESS: "127.0.0.1",
        HEALTH_PORT: "0",
        KATA_INSTALL_PLAN: file,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let asked = false;
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
      if (!asked && stderr.includes("Waiting for SIGTERM")) asked = child.kill("SIGTERM");
    });
    return new Promise((resolve) => child.on("close", (status) => resolve({ status, stdout, stderr })));
  }

  it("applies the saved plan, printing it, with the artifacts it names", async () => {
    const host = await answeringHost();
    const file = savePlan(host.root);
    const saved = JSON.parse(fs.readFileSync(file, "utf8"));
    const run = await entrypoint(host.root, file);
    expect(run.stderr).toContain(
      `Applying the saved plan ${file} (refused if the node or the inputs changed`,
    );
    expect(run.status).toBe(0);
    expect(run.stdout).toContain(
      `Plan: 12 to create, 1 to modify, 0 to delete; ${saved.plan.actions.length} action(s).\n`,
    );
    expect(run.stdout).toMatch(/\nFiles: 13 written, 0 removed\.\n/);
  });

  it("applies it again on a restart of the pod: a node already as the plan leaves it is a success, not a refusal", async () => {
    const host = await answeringHost();
    const file = savePlan(host.root);
    const first = await entrypoint(host.root, file);
    expect(first.status, first.stderr).toBe(0);
    const installed = snapshot(host.root);
    const again = await entrypoint(host.root, file);
    expect(again.status, again.stderr).toBe(0);
    expect(again.stdout).toContain(
      `The saved plan ${file} is applied already: the node is as it leaves it, and the plan made again now changes nothing.\n`,
    );
    expect(again.stdout).toContain("Nothing to do: the node is as the plan wants it.\n");
    // What is printed as the plan is the one made now (nothing to do), not the saved one's changes.
    expect(again.stdout).not.toContain("to create");
    expect(again.stdout).not.toMatch(/^Files: [1-9]/m);
    expect(snapshot(host.root)).toEqual(installed);
  });

  it("refuses it on a node that changed, and writes nothing", async () => {
    const host = await answeringHost();
    const file = savePlan(host.root);
    fs.appendFileSync(path.join(host.root, "etc/containerd/config.toml"), "# edited\n");
    const before = snapshot(host.root);
    const run = await entrypoint(host.root, file);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("  - /etc/containerd/config.toml changed since the plan (sha256 ");
    // Made again on the node (the pod's HOST_ROOT is its /), then handed to the pod as before.
    expect(run.stderr).toContain(
      `Make the plan again on the node (kata-install plan --artifacts dir:${artifacts} --out ${file}), review it, put it where this pod reads it (the plans ConfigMap), and delete the pod to apply it.`,
    );
    expect(snapshot(host.root)).toEqual(before);
  });
});
