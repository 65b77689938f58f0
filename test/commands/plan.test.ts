// `plan` and `install --dry-run`, run as a user runs them.
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { artifactDir } from "../helpers/artifacts.js";
import { runCli } from "../helpers/cli.js";
import { amdSnpCrio, nestedVmWithoutVmx } from "../helpers/nodes.js";
import { buildHost, removeTestHosts } from "../helpers/test-host.js";
import { snapshot } from "../helpers/tree.js";

afterAll(removeTestHosts);

const artifacts = artifactDir();
afterAll(() => fs.rmSync(artifacts, { recursive: true, force: true }));

describe("kata-install plan", () => {
  const amd = buildHost(amdSnpCrio());

  it("prints the verdict, the shims, a diff per file and the actions; progress stays on stderr", () => {
    const run = runCli(["plan", "--host-root", amd.root, "--artifacts", `dir:${artifacts}`]);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^Preflight: passed\.\n\nShims:\n {2}\+ clh: /);
    expect(run.stdout).toContain("--- /dev/null\n+++ b/etc/crio/crio.conf.d/50-kata-install.conf\n");
    expect(run.stdout).toContain(
      "+++ b/opt/kata/share/defaults/kata-containers/runtimes/qemu-snp/configuration-qemu-snp.toml",
    );
    expect(run.stdout).toMatch(/Actions:\n {2}pull-artifact base: needed by/);
    expect(run.stdout).toContain("  reload-runtime crio: CRI-O re-reads its runtime handlers on reload\n");
    expect(run.stdout).toMatch(/\nPlan: \d+ to create, 0 to modify, 0 to delete; \d+ action\(s\)\.\n$/);
    expect(run.stdout).not.toContain("Detect the node's facts");
    expect(run.stderr).toContain("Detect the node's facts");
  });

  it("--json: checks, shims, artifacts, changes with diffs, actions", () => {
    const doc = JSON.parse(runCli(["plan", "--host-root", amd.root, "--json"]).stdout);
    expect(Object.keys(doc)).toEqual(["checks", "shims", "dropped", "artifacts", "changes", "actions"]);
    const crio = doc.changes.find(
      (c: { path: string }) => c.path === "/etc/crio/crio.conf.d/50-kata-install.conf",
    );
    expect(crio).toMatchObject({
      action: "create",
      beforeHash: null,
      afterHash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(crio.diff).toMatch(
      /^--- \/dev\/null\n\+\+\+ b\/etc\/crio\/crio\.conf\.d\/50-kata-install\.conf\n@@ -0,0 \+1,\d+ @@\n/,
    );
    expect(doc.actions).toContainEqual({
      kind: "pull-artifact",
      target: "ovmf-sev",
      reason: "needed by qemu-snp",
    });
  });

  it("--detailed-exitcode: 2 while changes are pending; install --dry-run prints the same", () => {
    const source = ["--artifacts", `dir:${artifacts}`];
    const plan = runCli(["plan", "--host-root", amd.root, "--detailed-exitcode", ...source]);
    expect(plan.status).toBe(2);
    const dry = runCli(["install", "--dry-run", "--host-root", amd.root, "--detailed-exitcode", ...source]);
    expect(dry.status).toBe(2);
    expect(dry.stdout).toBe(plan.stdout);
    // Without a source, the plan says first what install would refuse, and install refuses.
    const blind = runCli(["plan", "--host-root", amd.root]);
    expect(blind.status).toBe(1);
    expect(blind.stdout).toMatch(
      /\[ERROR\] artifact-source: artifacts to install \(.*\) but no source to pull them from/,
    );
    const real = runCli(["install", "--host-root", amd.root]);
    expect(real.status).toBe(1);
    expect(real.stderr).toMatch(/preflight errors: artifact-source/);
  });

  it("exits 1 when a preflight error remains, and still prints the diff", () => {
    const nested = buildHost(nestedVmWithoutVmx());
    const run = runCli([
      "plan",
      "--host-root",
      nested.root,
      "--shims",
      "qemu",
      "--artifacts",
      `dir:${artifacts}`,
    ]);
    expect(run.status).toBe(1);
    expect(run.stdout).toMatch(/^Preflight: \d+ error\(s\)/);
    expect(run.stdout).toContain("[ERROR] nested-virtualization");
    expect(run.stdout).toContain(
      "+++ b/opt/kata/share/defaults/kata-containers/runtimes/qemu/configuration-qemu.toml",
    );
    expect(run.stdout).toContain("An install would refuse this node");
  });

  it("an error that leaves nothing to plan is not called a node as the plan wants it", () => {
    const run = runCli([
      "plan",
      "--host-root",
      amd.root,
      "--shims",
      "qemuu",
      "--artifacts",
      `dir:${artifacts}`,
    ]);
    expect(run.status).toBe(1);
    expect(run.stdout).toContain("[ERROR] unknown-shim");
    expect(run.stdout).toMatch(
      /\nPlan: no changes, as far as the errors above let it plan\.\nAn install would refuse this node: /,
    );
    expect(run.stdout).not.toContain("The node is as this plan wants it");
    // Preflight gives the hint, with the shim the typo is near.
    const preflight = runCli([
      "preflight",
      "--host-root",
      amd.root,
      "--shims",
      "qemuu",
      "--artifacts",
      `dir:${artifacts}`,
    ]);
    expect(preflight.stdout).toMatch(/\n +hint: did you mean qemu\? else name a shim this release ships/);
  });

  it("a malformed or missing artifact source is said before the node is read, in words", () => {
    const malformed = runCli(["plan", "--host-root", amd.root, "--artifacts", "foo:/tmp"]);
    expect(malformed.status).toBe(1);
    expect(malformed.stderr).toMatch(
      /^kata-install: --artifacts foo:\/tmp: expected registry:HOST\/REPOSITORY/,
    );
    expect(malformed.stderr).not.toContain("Detect the node's facts");
    const missing = runCli(["plan", "--host-root", amd.root, "--artifacts", "dir:/nonexistent"]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/\nkata-install: dir:\/nonexistent: no such directory\n$/);
  });
});

describe("kata-install --dry-run, the review users are told to run", () => {
  const amd = buildHost(amdSnpCrio());
  const before = snapshot(amd.root);

  it("is install --dry-run, with install's options beside it, in any order", () => {
    const source = ["--artifacts", `dir:${artifacts}`];
    const dry = runCli(["install", "--dry-run", "--host-root", amd.root, "--detailed-exitcode", ...source]);
    const short = runCli(["--dry-run", "--host-root", amd.root, "--detailed-exitcode", ...source]);
    expect(short.stderr).not.toContain("unknown option");
    expect(short.status).toBe(2);
    expect(short.stdout).toBe(dry.stdout);
    const reordered = runCli(["--host-root", amd.root, ...source, "--dry-run", "--json"]);
    expect(reordered.status).toBe(0);
    expect(Object.keys(JSON.parse(reordered.stdout))).toEqual(
      Object.keys(JSON.parse(runCli(["plan", "--host-root", amd.root, "--json", ...source]).stdout)),
    );
    const overrides = path.join(amd.root, "..", `${path.basename(amd.root)}.overrides.toml`);
    fs.writeFileSync(overrides, 'shims = ["qemu-snp"]\n');
    const pinned = runCli(["--dry-run", "--host-root", amd.root, "--overrides", overrides, ...source]);
    fs.rmSync(overrides);
    expect(pinned.status).toBe(0);
    expect(pinned.stdout).toContain("configuration-qemu-snp.toml");
    expect(pinned.stdout).not.toContain("configuration-clh.toml");
    expect(snapshot(amd.root)).toEqual(before);
  });

  it("an option install does not have is refused by name", () => {
    const run = runCli(["--dry-run", "--host-root", amd.root, "--no-such-flag"]);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("unknown option '--no-such-flag'");
  });

  it("bare kata-install only prints help, and a mistyped command is an error with a suggestion", () => {
    const bare = runCli([]);
    expect(bare.stdout + bare.stderr).toContain("Usage: kata-install");
    expect(bare.stdout + bare.stderr).not.toContain("Preflight:");
    const typo = runCli(["instal", "--host-root", amd.root]);
    expect(typo.status).toBe(1);
    expect(typo.stderr).toContain("unknown command 'instal'");
    expect(typo.stderr).toContain("Did you mean install?");
    const typoDry = runCli(["instal", "--dry-run", "--host-root", amd.root]);
    expect(typoDry.status).toBe(1);
    expect(typoDry.stderr).toContain("Did you mean install?");
    // Without the word install, a flag alone never installs.
    const noDry = runCli(["--host-root", amd.root]);
    expect(noDry.status).toBe(1);
    expect(snapshot(amd.root)).toEqual(before);
  });
});

describe("INSTALLATION_PREFIX means what it means in kata-deploy", () => {
  const amd = buildHost(amdSnpCrio());

  it("Kata goes to <prefix>/opt/kata, and <prefix>/opt/kata-<suffix> with MULTI_INSTALL_SUFFIX", () => {
    const plan = runCli(["plan", "--host-root", amd.root, "--artifacts", `dir:${artifacts}`], {
      env: { INSTALLATION_PREFIX: "/srv/k8s/" },
    });
    expect(plan.stdout).toContain(
      "+++ b/srv/k8s/opt/kata/share/defaults/kata-containers/runtimes/qemu/configuration-qemu.toml",
    );
    expect(plan.stdout).toContain('runtime_path = "/srv/k8s/opt/kata/bin/containerd-shim-kata-v2"');
    const suffixed = runCli(["plan", "--host-root", amd.root, "--artifacts", `dir:${artifacts}`], {
      env: { INSTALLATION_PREFIX: "/srv/k8s", MULTI_INSTALL_SUFFIX: "ci" },
    });
    expect(suffixed.stdout).toContain(
      "+++ b/srv/k8s/opt/kata-ci/share/defaults/kata-containers/runtimes/qemu/configuration-qemu.toml",
    );
  });
});

describe("kata-deploy's shim names", () => {
  const amd = buildHost(amdSnpCrio());

  it("a shim of the release no rule knows is installed as asked, said; kata-deploy's other names are dropped with their reason; one the release lacks is an error", () => {
    const plan = runCli(["plan", "--host-root", amd.root, "--artifacts", `dir:${artifacts}`], {
      env: { SHIMS_X86_64: "qemu qemu-snp-runtime-rs firecracker" },
    });
    expect(plan.status, plan.stdout).toBe(0);
    expect(plan.stdout).toContain("  + qemu: pinned by environment SHIMS_X86_64");
    expect(plan.stdout).toContain("  + qemu-snp-runtime-rs: pinned by environment SHIMS_X86_64");
    expect(plan.stdout).toMatch(
      /\[WARNING\] unvetted-shim: qemu-snp-runtime-rs is installed as asked: Kata 3\.9\.0 ships it \(share\/defaults\/kata-containers\/runtime-rs\/configuration-qemu-snp-runtime-rs\.toml\), but no rule of kata-install's knows what it needs of a node/,
    );
    expect(plan.stdout).toMatch(
      /\n {2}- firecracker: kata-install does not serve it: kata-deploy's other name for fc/,
    );
    const unknown = runCli(["plan", "--host-root", amd.root, "--artifacts", `dir:${artifacts}`], {
      env: { SHIMS_X86_64: "qemu kemu" },
    });
    expect(unknown.status).toBe(1);
    expect(unknown.stdout).toContain(
      "[ERROR] unknown-shim: SHIMS_X86_64 names the shim kemu, but Kata 3.9.0 ships no configuration for it",
    );
    const malformed = runCli(["plan", "--host-root", amd.root], { env: { SHIMS_X86_64: "qemu Kemu/x" } });
    expect(malformed.status).toBe(1);
    expect(malformed.stderr).toContain('SHIMS_X86_64: "Kemu/x" is no shim name');
  });

  it("SHIMS of only spaces is an error naming the variable (as in kata-deploy), not the default set", () => {
    const run = runCli(["plan", "--host-root", amd.root], { env: { SHIMS_X86_64: "   " } });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("SHIMS_X86_64: only spaces");
  });
});

describe("kata-deploy's per-shim variables", () => {
  const amd = buildHost(amdSnpCrio());
  const plan = (env: Record<string, string>, ...args: string[]) =>
    runCli(["plan", "--host-root", amd.root, "--artifacts", `dir:${artifacts}`, ...args], { env });

  it("a mapping for a shim not asked for, or for one shim twice, is an error naming the variable", () => {
    const stray = plan({ SHIMS_X86_64: "qemu", SNAPSHOTTER_HANDLER_MAPPING_X86_64: "qemu-snp:nydus" });
    expect(stray.status).toBe(1);
    expect(stray.stdout).toContain(
      "[ERROR] env-mapping: SNAPSHOTTER_HANDLER_MAPPING_X86_64 names qemu-snp, which is not among the shims to install",
    );
    const twice = plan({ PULL_TYPE_MAPPING_X86_64: "qemu:guest-pull,qemu:default" });
    expect(twice.status).toBe(1);
    expect(twice.stderr).toContain("PULL_TYPE_MAPPING_X86_64: qemu is mapped twice");
  });

  it("ALLOWED_HYPERVISOR_ANNOTATIONS joins the release's own list (sorted, once each)", () => {
    const run = plan({ ALLOWED_HYPERVISOR_ANNOTATIONS: "default_vcpus kernel_params" }, "--shims", "qemu");
    expect(run.stdout).toMatch(
      /\+enable_annotations = \["default_vcpus", "enable_iommu", "kernel_params", "kernel_verity_params"\]/,
    );
  });

  it("AGENT_HTTPS_PROXY in kata-deploy's per-shim form goes to that shim only", () => {
    const run = plan(
      { AGENT_HTTPS_PROXY: "qemu=http://proxy:3128;clh=http://other:8080" },
      "--shims",
      "qemu,clh",
    );
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      /runtimes\/qemu\/config\.d\/50-kata-install\.toml[\s\S]*agent\.https_proxy=http:\/\/proxy:3128/,
    );
    expect(run.stdout).toMatch(
      /runtimes\/clh\/config\.d\/50-kata-install\.toml[\s\S]*agent\.https_proxy=http:\/\/other:8080/,
    );
    const unknown = plan({ AGENT_HTTPS_PROXY: "kemu=http://x" });
    expect(unknown.status).toBe(1);
    expect(unknown.stdout).toContain(
      "[ERROR] unknown-shim: AGENT_HTTPS_PROXY names the shim kemu, but Kata 3.9.0 ships no configuration for it",
    );
  });
});

describe("the release's default configuration", () => {
  it("is linked as the release links it (configuration.toml -> configuration-qemu.toml) when that shim is installed, and not otherwise", () => {
    const node = buildHost(amdSnpCrio());
    const plan = (shims: string) =>
      JSON.parse(
        runCli([
          "plan",
          "--json",
          "--host-root",
          node.root,
          "--artifacts",
          `dir:${artifacts}`,
          "--shims",
          shims,
        ]).stdout,
      ).changes as Array<{ path: string; diff: string }>;
    const at = "/opt/kata/share/defaults/kata-containers/configuration.toml";
    const link = plan("qemu,clh").find((c) => c.path === at);
    expect(link?.diff).toContain("new file mode 120000\n");
    expect(link?.diff).toContain("\n+configuration-qemu.toml\n");
    expect(plan("clh").find((c) => c.path === at)).toBeUndefined();
  });
});

describe("plan --facts", () => {
  it("reads nothing of this machine at the paths a facts file names: no secret printed as the diff's context", () => {
    const node = buildHost(amdSnpCrio());
    const facts = JSON.parse(runCli(["facts", "--json", "--host-root", node.root]).stdout);
    const secret = path.join(node.root, "secret.toml");
    fs.writeFileSync(secret, 'password = "hunter2"\n');
    facts.runtime = { ...facts.runtime, configPath: secret, configExists: true };
    const file = path.join(node.root, "facts.json");
    fs.writeFileSync(file, JSON.stringify(facts));
    const plan = runCli(["plan", "--facts", file, "--artifacts", `dir:${artifacts}`]);
    expect(plan.stdout + plan.stderr).not.toContain("hunter2");
    expect(fs.readFileSync(secret, "utf8")).toBe('password = "hunter2"\n');
  });
});

describe("EXPERIMENTAL_FORCE_GUEST_PULL for a Go shim whose file lacks the key", () => {
  it("is written: Kata's Go runtime reads experimental_force_guest_pull for every shim (other configurations of the release name it)", () => {
    const node = buildHost(amdSnpCrio());
    const release = artifactDir("4.1.0");
    try {
      const run = runCli(
        ["plan", "--host-root", node.root, "--artifacts", `dir:${release}`, "--shims", "qemu"],
        {
          env: { EXPERIMENTAL_FORCE_GUEST_PULL: "qemu" },
        },
      );
      expect(run.status, run.stdout.slice(0, 2000)).toBe(0);
      expect(run.stdout).not.toContain("config-key");
      expect(run.stdout).toMatch(/\n\+experimental_force_guest_pull = true\n/);
    } finally {
      fs.rmSync(release, { recursive: true, force: true });
    }
  });
});
