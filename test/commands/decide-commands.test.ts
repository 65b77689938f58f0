// preflight, explain and shims, run as a user runs them: the built CLI on test hosts and on the
// machine running the tests.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { artifactDir } from "../helpers/artifacts.js";
import { runCli } from "../helpers/cli.js";
import { amdSnpCrio, intelContainerd16, nestedVmWithoutVmx } from "../helpers/nodes.js";
import { buildHost, removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-cmd-"));
// A release to read the shims' configurations from (the real 4.1.0 files, stand-in binaries).
const artifacts = artifactDir("4.1.0");
const release = ["--artifacts", `dir:${artifacts}`];
afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.rmSync(artifacts, { recursive: true, force: true });
});

describe("preflight", () => {
  const amd = buildHost(amdSnpCrio());
  const nested = buildHost(nestedVmWithoutVmx());

  it("passes a good node: exit 0, the shims and artifacts it gets", () => {
    const run = runCli(["preflight", "--host-root", amd.root]);
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(run.stdout).toContain("[preflight] passed with 0 warnings");
    expect(run.stdout).toMatch(/Shims for this node: .*qemu-snp/);
    expect(run.stdout).toMatch(/dropped qemu-tdx: needs tdx/);
  });

  it("fails a VM without nested virtualisation: exit 1, kubeadm-style lines with hints", () => {
    const run = runCli(["preflight", "--host-root", nested.root]);
    expect(run.status).toBe(1);
    expect(run.stdout).toMatch(/\[ERROR\]\s+nested-virtualization\s+this node is a virtual machine/);
    expect(run.stdout).toMatch(/hint: turn on nested virtualisation/);
    expect(run.stdout).toContain("an install would refuse this node");
  });

  it("--ignore-preflight-errors turns named errors into warnings", () => {
    const run = runCli([
      "preflight",
      "--host-root",
      nested.root,
      "--json",
      "--ignore-preflight-errors",
      "nested-virtualization,container-runtime,shims",
    ]);
    const doc = JSON.parse(run.stdout);
    expect(doc.checks.find((c: { id: string }) => c.id === "nested-virtualization")).toMatchObject({
      status: "ignored",
      severity: "warning",
      rule: "nested-virtualization-off",
    });
    expect(run.status).toBe(0);
  });

  it("an ignored error is still said, as a warning that was an error; `all` leaves warnings as they are", () => {
    const ignore = ["--ignore-preflight-errors", "nested-virtualization,container-runtime,shims"];
    const text = runCli(["preflight", "--host-root", nested.root, ...ignore]);
    expect(text.status).toBe(0);
    expect(text.stdout).toMatch(/\n {2}\[ignored\] +nested-virtualization +this node is a virtual machine/);
    expect(text.stdout).toMatch(/\n\[preflight\] passed with 2 warnings \(2 ignored errors\)\n$/);
    const plan = runCli(["plan", "--host-root", nested.root, ...ignore]);
    expect(plan.stdout).toMatch(
      /\n {2}\[WARNING\] nested-virtualization: this node is a virtual machine.* \(an error, ignored\)\n/,
    );
    expect(plan.stdout).not.toMatch(/^Preflight: passed/);
    // A warning is not an error to ignore: `all` leaves it a warning, said.
    const all = runCli([
      "plan",
      "--host-root",
      amd.root,
      ...release,
      "--shims",
      "fc",
      "--ignore-preflight-errors",
      "all",
    ]);
    expect(all.stdout).toMatch(
      /^Preflight: 0 error\(s\), 1 warning\(s\):\n {2}\[WARNING\] override-contradicts-facts: /,
    );
  });

  it("virtio-9p asked of a host qemu without that device is an error naming it; with Kata's own qemu it is not", () => {
    const file = path.join(tmp, "9p.toml");
    fs.writeFileSync(file, '[config.qemu]\n"hypervisor.qemu.shared_fs" = "virtio-9p"\n');
    const run = runCli(["plan", "--host-root", amd.root, ...release, "--overrides", file]);
    expect(run.status).toBe(1);
    expect(run.stdout).toContain(
      `  [ERROR] hypervisor-device: overrides ${file}:2 config.qemu."hypervisor.qemu.shared_fs" sets hypervisor.qemu.shared_fs = "virtio-9p" for qemu, but the host's qemu it runs (/usr/libexec/qemu-kvm) has no virtio-9p device (its -device help lists none): the shim's guests would not start\n`,
    );
    fs.appendFileSync(file, '[artifacts.qemu]\nsource = "bundled"\n');
    const bundled = runCli(["plan", "--host-root", amd.root, ...release, "--overrides", file]);
    expect(bundled.status, bundled.stdout).toBe(0);
    expect(bundled.stdout).not.toContain("hypervisor-device");
  });

  it("without the release, the overrides file's values are said to be unchecked; with it, checked", () => {
    const file = path.join(tmp, "unchecked.toml");
    fs.writeFileSync(file, '[config.qemu]\n"hypervisor.qemu.default_memory" = "lots"\n');
    const run = runCli(["preflight", "--host-root", amd.root, "--overrides", file]);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(
      /\[INFO\] +config-key +the overrides file's 1 configuration value\(s\) \(qemu:hypervisor\.qemu\.default_memory\) are not checked against Kata's configuration: there is no release to check them against\n/,
    );
    const checked = runCli(["preflight", "--host-root", amd.root, ...release, "--overrides", file]);
    expect(checked.status).toBe(1);
    expect(checked.stdout).toMatch(/\[ERROR\] +config-key +.*default_memory/);
    expect(checked.stdout).not.toContain("are not checked against");
  });

  it("an unknown check id, or a broken overrides file, is an error before anything else", () => {
    const unknown = runCli([
      "preflight",
      "--host-root",
      amd.root,
      "--ignore-preflight-errors",
      "nested-virt",
    ]);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toMatch(
      /^kata-install: --ignore-preflight-errors: unknown check "nested-virt" \(known: /,
    );
    const file = path.join(tmp, "bad.toml");
    fs.writeFileSync(file, 'shims = ["qemu"]\n[config.qemu]\n"hypervisor.qemu.shared_fs" = "virtio-fss"\n');
    const bad = runCli(["preflight", "--host-root", amd.root, "--overrides", file]);
    expect(bad.status).toBe(1);
    expect(bad.stdout).toBe("");
    expect(bad.stderr).toMatch(
      new RegExp(
        `^kata-install: the overrides file is invalid:\n {2}${file}:3: config\\.qemu\\."hypervisor\\.qemu\\.shared_fs": "virtio-fss" is not one of `,
      ),
    );
    // The key's type is the release's: checked once it is read, named with the file and line.
    fs.writeFileSync(file, 'shims = ["qemu"]\n[config.qemu]\n"hypervisor.qemu.shared_fs" = 9\n');
    const typed = runCli(["preflight", "--host-root", amd.root, "--overrides", file, ...release]);
    expect(typed.status).toBe(1);
    expect(typed.stdout).toMatch(
      new RegExp(
        `\\[ERROR\\]\\s+config-key\\s+overrides ${file}:3 config\\.qemu\\."hypervisor\\.qemu\\.shared_fs" sets hypervisor\\.qemu\\.shared_fs = 9 for qemu, but Kata 4\\.1\\.0's configuration-qemu\\.toml has it as a string`,
      ),
    );
    const missing = runCli([
      "preflight",
      "--host-root",
      amd.root,
      "--overrides",
      path.join(tmp, "none.toml"),
    ]);
    expect(missing.stderr).toContain("cannot read: it does not exist");
  });

  it("reads the overrides file under the host root by default", () => {
    const host = buildHost({
      ...amdSnpCrio(),
      files: { ...amdSnpCrio().files, "/etc/kata-containers/kata-install.toml": 'shims = ["qemu"]\n' },
    });
    const doc = JSON.parse(runCli(["preflight", "--host-root", host.root, "--json"]).stdout);
    expect(doc.shims).toEqual([
      { name: "qemu", reason: expect.stringMatching(/^pinned by overrides .*kata-install\.toml:1 shims$/) },
    ]);
  });

  it("on the machine running the tests: valid JSON whose verdict matches its exit code", () => {
    const run = runCli(["preflight", "--json", "--host-root", "/"]);
    const doc = JSON.parse(run.stdout);
    const errors = doc.checks.filter(
      (c: { status: string; severity: string }) => c.status === "fail" && c.severity === "error",
    );
    expect(run.status).toBe(errors.length > 0 ? 1 : 0);
    // Whatever this machine is, a missing /dev/kvm must be an error and no shim installed.
    if (!fs.existsSync("/dev/kvm")) {
      expect(errors.map((c: { id: string }) => c.id)).toContain("kvm-device");
      expect(doc.shims).toEqual([]);
    }
  });
});

describe("explain", () => {
  const amd = buildHost(amdSnpCrio());

  it("shows a value, the rule that set it and why", () => {
    const run = runCli(["explain", "--host-root", amd.root, "qemu:hypervisor.qemu.shared_fs"]);
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(
      '[qemu] hypervisor.qemu.shared_fs = "virtio-fs"\n' +
        "    set by rule distro-qemu-virtio-fs (rules/shared-fs.toml)\n" +
        "      why: The host's qemu is used only when it has vhost-user-fs (distro-qemu-usable), which virtio-fs, Kata's default, needs; virtio-9p needs a device of its own, which some distributions' qemu lacks (RHEL's qemu-kvm).\n",
    );
  });

  it("shows what an override beat", () => {
    const file = path.join(tmp, "pin.toml");
    fs.writeFileSync(file, '[config.qemu]\n"hypervisor.qemu.shared_fs" = "virtio-9p"\n');
    const doc = JSON.parse(
      runCli([
        "explain",
        "--host-root",
        amd.root,
        "--overrides",
        file,
        "--json",
        "qemu:hypervisor.qemu.shared_fs",
      ]).stdout,
    );
    expect(doc.values).toEqual([
      expect.objectContaining({
        key: "hypervisor.qemu.shared_fs",
        shim: "qemu",
        value: "virtio-9p",
        source: { kind: "overrides", name: 'config.qemu."hypervisor.qemu.shared_fs"', file, line: 2 },
        beaten: [
          {
            value: "virtio-fs",
            source: expect.objectContaining({ kind: "rule", name: "distro-qemu-virtio-fs" }),
          },
        ],
      }),
    ]);
  });

  it("shims and artifacts too; an unknown key is an error", () => {
    const run = runCli(["explain", "--host-root", amd.root, "shims.qemu-tdx", "default_shim"]);
    expect(run.stdout).toContain('shims.qemu-tdx = "dropped"  — needs tdx');
    expect(run.stdout).toContain('default_shim = "qemu"');
    // A key nothing decided: the value the release's configuration has.
    const untouched = runCli([
      "explain",
      "--host-root",
      amd.root,
      "clh:hypervisor.clh.default_memory",
      ...release,
    ]);
    expect(untouched.stdout).toBe(
      "[clh] hypervisor.clh.default_memory = 2048\n    set by Kata 4.1.0's configuration-clh.toml\n",
    );
    // A decided one starts from the release's value too.
    const decided = runCli(
      ["explain", "--host-root", amd.root, "qemu-snp:hypervisor.qemu.shared_fs", ...release],
      {
        env: { SHIMS: "qemu-snp" },
      },
    );
    expect(decided.status, decided.stderr).toBe(0);
    const unknown = runCli(["explain", "--host-root", amd.root, "hypervisor.qemu.shared_fss", ...release]);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toMatch(/nothing decided matches "hypervisor.qemu.shared_fss"/);
  });
});

describe("explain, on a node whose admin has drop-ins of their own in a shim's config.d/", () => {
  it("says which value Kata uses: a drop-in read after kata-install's wins, one before it is replaced", () => {
    const node = buildHost(amdSnpCrio());
    const dir = "/opt/kata/share/defaults/kata-containers/runtimes/qemu/config.d";
    node.write(`${dir}/10-admin.toml`, '[hypervisor.qemu]\nshared_fs = "none"\ndefault_memory = 1024\n');
    node.write(`${dir}/90-admin.toml`, '[hypervisor.qemu]\nshared_fs = "virtio-9p"\n');
    // Kata reads every entry of config.d/, whatever its name: this one too.
    node.write(`${dir}/README`, "drop-ins for the qemu shim\n");
    const run = runCli([
      "explain",
      "--host-root",
      node.root,
      "qemu:hypervisor.qemu.shared_fs",
      "qemu:hypervisor.qemu.default_memory",
      ...release,
    ]);
    expect(run.status, run.stderr).toBe(0);
    const lines = run.stdout.split("\n");
    // Decided by a rule, so in kata-install's drop-in (50-kata-install.toml): 10- is read before it.
    expect(lines).toContain(
      `    node   "none" from ${dir}/10-admin.toml on the node: read before kata-install's drop-in, which replaces it`,
    );
    expect(lines).toContain(
      '[qemu] hypervisor.qemu.shared_fs = "virtio-fs"  — replaced on the node: Kata uses "virtio-9p"',
    );
    expect(lines).toContain(
      `    but    "virtio-9p" from ${dir}/90-admin.toml on the node: read after kata-install's drop-in: Kata uses this value`,
    );
    expect(run.stdout).toMatch(
      new RegExp(`\nnote: ${dir}/README does not parse: .*: Kata would not load this configuration\n$`),
    );
    // The plan reads config.d/ as Kata's loader does: that file stops Kata, said in Kata's words.
    const plan = runCli(["plan", "--host-root", node.root, ...release]);
    expect(plan.stdout).toContain(
      `[ERROR] kata-config: Kata would refuse the configuration it reads, so every pod of that handler fails to start: qemu (Kata's Go runtime): ${dir}/README: error decoding file "${dir}/README": `,
    );
    // And warns of the value the admin's later drop-in replaces (the one before ours is replaced).
    expect(plan.stdout).toContain(
      `[WARNING] config-replaced: a drop-in of the node's, read after kata-install's, replaces what it decides, and Kata uses the drop-in's: qemu: hypervisor.qemu.shared_fs = "virtio-9p" (${dir}/90-admin.toml) over "virtio-fs" (rule distro-qemu-virtio-fs (rules/shared-fs.toml))\n`,
    );
    // Decided by nothing: the release's value, which any drop-in replaces.
    expect(run.stdout).toContain(
      `[qemu] hypervisor.qemu.default_memory = 2048  — replaced on the node: Kata uses 1024\n    set by Kata 4.1.0's configuration-qemu.toml\n    but    1024 from ${dir}/10-admin.toml on the node: read after the release's file: Kata uses this value\n`,
    );
    // Asked for the shim, the keys only the admin's drop-ins set are listed too: Kata uses them.
    expect(runCli(["explain", "--host-root", node.root, "qemu", ...release]).stdout).toContain(
      `[qemu] hypervisor.qemu.default_memory = 2048  — replaced on the node: Kata uses 1024\n    set by Kata 4.1.0's configuration-qemu.toml\n    but    1024 from ${dir}/10-admin.toml on the node: read after the release's file: Kata uses this value\n`,
    );
    const doc = JSON.parse(
      runCli(["explain", "--json", "--host-root", node.root, "qemu:hypervisor.qemu.shared_fs", ...release])
        .stdout,
    );
    expect(doc.values[0].onNode).toEqual([
      expect.objectContaining({ file: `${dir}/10-admin.toml`, value: "none", applies: false }),
      expect.objectContaining({ file: `${dir}/90-admin.toml`, value: "virtio-9p", applies: true }),
    ]);
  });
});

describe("plan, on a node whose admin has a drop-in Kata's loader would refuse", () => {
  const dir = "/opt/kata/share/defaults/kata-containers/runtimes/qemu/config.d";
  it.each([
    [
      "a link to nothing",
      (root: string) => fs.symlinkSync("/mnt/gone/admin.toml", path.join(root, dir, "60-admin.toml")),
      `${dir}/60-admin.toml: error reading file "${dir}/60-admin.toml": no such file or directory (a link to nothing)`,
    ],
    [
      "a value of another type",
      (root: string) =>
        fs.writeFileSync(
          path.join(root, dir, "60-admin.toml"),
          '[hypervisor.qemu]\ndefault_memory = "4096"\n',
        ),
      `${dir}/60-admin.toml: error decoding file "${dir}/60-admin.toml": toml: (last key "hypervisor.qemu.default_memory"): incompatible types: TOML value has type string; destination has type integer`,
    ],
    [
      "a section for another hypervisor",
      (root: string) =>
        fs.writeFileSync(path.join(root, dir, "60-admin.toml"), "[hypervisor.clh]\ndefault_memory = 4096\n"),
      "its drop-ins add hypervisor sections ([hypervisor.qemu], [hypervisor.clh]): Kata's Go runtime configures each in turn",
    ],
  ])("%s: named, with Kata's reason, and the plan fails", (_, make, said) => {
    const node = buildHost(amdSnpCrio());
    fs.mkdirSync(path.join(node.root, dir), { recursive: true });
    make(node.root);
    const plan = runCli(["plan", "--host-root", node.root, ...release]);
    expect(plan.status).toBe(1);
    expect(plan.stdout).toContain(
      "[ERROR] kata-config: Kata would refuse the configuration it reads, so every pod of that handler fails to start: qemu (Kata's Go runtime): ",
    );
    expect(plan.stdout).toContain(said);
    // Not a check an admin can wave through: Kata would not start.
    const ignored = runCli([
      "plan",
      "--host-root",
      node.root,
      "--ignore-preflight-errors",
      "all",
      ...release,
    ]);
    expect(ignored.status).toBe(1);
  });
});

describe("explain, a value kata-install joins to the release's", () => {
  it("shows what Kata reads: the release's annotations with ALLOWED_HYPERVISOR_ANNOTATIONS's", () => {
    const node = buildHost(amdSnpCrio());
    const env = { ALLOWED_HYPERVISOR_ANNOTATIONS: "qemu:default_memory" };
    const run = runCli(
      ["explain", "--host-root", node.root, "qemu:hypervisor.qemu.enable_annotations", ...release],
      { env },
    );
    expect(run.status, run.stderr).toBe(0);
    const [headline] = run.stdout.split("\n");
    expect(headline).toMatch(
      /^\[qemu\] hypervisor\.qemu\.enable_annotations = \["default_memory"\] {2}— joined to the release's: Kata reads \[.*"default_memory".*\]$/,
    );
    expect(run.stdout).toContain("    with   ");
    const doc = JSON.parse(
      runCli(
        [
          "explain",
          "--json",
          "--host-root",
          node.root,
          "qemu:hypervisor.qemu.enable_annotations",
          ...release,
        ],
        { env },
      ).stdout,
    );
    expect(doc.values[0].kataReads.how).toBe("joined");
    expect(doc.values[0].kataReads.value).toContain("default_memory");
    expect(doc.values[0].kataReads.value.length).toBeGreaterThan(1);
  });

  it("the agent's proxy: the release's kernel parameters with it appended", () => {
    const node = buildHost(amdSnpCrio());
    const env = { AGENT_HTTPS_PROXY: "http://proxy:3128" };
    const doc = JSON.parse(
      runCli(
        ["explain", "--json", "--host-root", node.root, "qemu:hypervisor.qemu.kernel_params", ...release],
        { env },
      ).stdout,
    );
    expect(doc.values[0].value).toBe("agent.https_proxy=http://proxy:3128");
    expect(doc.values[0].kataReads).toEqual({
      value: expect.stringMatching(/ agent\.https_proxy=http:\/\/proxy:3128$/),
      how: "appended",
    });
  });
});

describe("plan, on a node whose admin's later drop-in says what kata-install decides", () => {
  it("warns of nothing: Kata uses the same value", () => {
    const node = buildHost(amdSnpCrio());
    const dir = "/opt/kata/share/defaults/kata-containers/runtimes/qemu/config.d";
    node.write(`${dir}/90-admin.toml`, '[hypervisor.qemu]\nshared_fs = "virtio-fs"\ndefault_memory = 4096\n');
    const plan = runCli(["plan", "--host-root", node.root, ...release]);
    expect(plan.status, plan.stdout.slice(0, 800)).toBe(0);
    expect(plan.stdout).not.toContain("config-replaced");
  });
});

describe("explain DEBUG", () => {
  it("says it is off, or names each debug handler and what it turns on", () => {
    const host = buildHost(intelContainerd16());
    const off = runCli(["explain", "--host-root", host.root, "install.debug"]);
    expect(off.stdout).toMatch(/^install\.debug = false {2}— no debug handlers \(DEBUG=true adds one/);
    const on = runCli(["explain", "--host-root", host.root, "kata-qemu-debug"], { env: { DEBUG: "true" } });
    expect(on.status, on.stderr).toBe(0);
    expect(on.stdout).toMatch(
      /^debug_handlers\.kata-qemu-debug = "qemu" {2}— qemu's configuration and values, with guest debug on: .*\n {4}set by environment DEBUG\n/,
    );
  });
});

describe("explain's --help examples, on a node where no shim can run", () => {
  it("each answers with the release's values and why each shim is not installed", () => {
    const spec = intelContainerd16();
    spec.kvmDevice = false;
    const vm = buildHost(spec);
    for (const args of [["hypervisor.qemu.shared_fs"], ["qemu:hypervisor.qemu.path", "clh"], ["shared_fs"]]) {
      const run = runCli(["explain", "--host-root", vm.root, ...args, ...release]);
      expect(run.status, `${args.join(" ")}: ${run.stderr}`).toBe(0);
    }
    const run = runCli(["explain", "--host-root", vm.root, "qemu:hypervisor.qemu.path", ...release]);
    expect(run.stdout).toMatch(
      /^\[qemu\] hypervisor\.qemu\.path = "\/opt\/kata\/bin\/qemu-system-x86_64" {2}— qemu is not installed on this node: needs kvm/,
    );
    const optIn = runCli(["explain", "--host-root", vm.root, "qemu-coco-dev:shared_fs", ...release]);
    expect(optIn.stdout).toContain(
      '[qemu-coco-dev] hypervisor.qemu.shared_fs = "none"  — qemu-coco-dev is not installed on this node: an opt-in shim',
    );
  });
});

describe("shims", () => {
  it("prints the capability table and this node's verdict for each shim", () => {
    const amd = buildHost(amdSnpCrio());
    const doc = JSON.parse(runCli(["shims", "--host-root", amd.root, "--json"]).stdout);
    const clh = doc.shims.find((s: { name: string }) => s.name === "clh");
    expect(clh).toMatchObject({
      sharedFs: ["virtio-fs", "none"],
      blockDeviceDrivers: ["virtio-blk"],
      vfioHotplug: true,
      virtioMem: true,
      seccomp: true,
      rateLimiters: true,
    });
    expect(clh.node.status).toBe("install");
    expect(doc.shims.find((s: { name: string }) => s.name === "qemu-se").node).toEqual({
      status: "other-arch",
      reason: "built for s390x",
    });
    expect(doc.shims.find((s: { name: string }) => s.name === "fc").node.reason).toMatch(
      /^needs block-snapshotter/,
    );
    // With the release: its shims no rule describes are listed too, opt-in, nothing claimed of them.
    const withRelease = JSON.parse(runCli(["shims", "--host-root", amd.root, "--json", ...release]).stdout);
    expect(withRelease.shims.find((s: { name: string }) => s.name === "qemu-snp-runtime-rs")).toMatchObject({
      unvetted: true,
      node: { status: "opt-in" },
    });
    expect(runCli(["shims", "--host-root", amd.root, ...release]).stdout).toMatch(
      /\nqemu-snp-runtime-rs\s+qemu\s+rust\s+\?\s+\?\s+\?\s+\?\s+\?\s+\?\s+\?\s+\?\s+opt-in\n/,
    );
    const text = runCli(["shims", "--host-root", amd.root]).stdout;
    expect(text).toMatch(/^SHIM\s+HYPERVISOR\s+RUNTIME\s+SHARED FS/);
    expect(text).toMatch(
      /\nclh\s+clh\s+go\s+virtio-fs,none\s+virtio-blk\s+yes\s+yes\s+yes\s+yes\s+yes\s+-\s+install\n/,
    );
  });
});

describe("a key Kata reads and does nothing with", () => {
  it("the remote hypervisor's kernel_params (AGENT_HTTPS_PROXY): explain says Kata ignores it, the plan warns", () => {
    const node = buildHost(amdSnpCrio());
    const env = { SHIMS: "remote qemu", AGENT_HTTPS_PROXY: "http://proxy:3128" };
    const remote = runCli(["explain", "--host-root", node.root, "remote:kernel_params", ...release], { env });
    expect(remote.status, remote.stderr).toBe(0);
    expect(remote.stdout).toContain(
      "    ignored by Kata: Kata's Go runtime reads only remote_hypervisor_socket, remote_hypervisor_timeout, machine_type, enable_annotations, guest_hook_path of the remote hypervisor (newRemoteHypervisorConfig)\n",
    );
    // qemu reads its kernel_params: nothing said of it.
    const qemu = runCli(["explain", "--host-root", node.root, "qemu:kernel_params", ...release], { env });
    expect(qemu.stdout).toContain("[qemu] hypervisor.qemu.kernel_params");
    expect(qemu.stdout).not.toContain("ignored by Kata");
    const json = JSON.parse(
      runCli(["explain", "--host-root", node.root, "remote:kernel_params", "--json", ...release], { env })
        .stdout,
    );
    expect(json.values[0].ignoredByKata).toMatch(/newRemoteHypervisorConfig/);
    const plan = runCli(["plan", "--host-root", node.root, ...release], { env });
    expect(plan.stdout).toContain(
      "[WARNING] kata-config-ignored: Kata reads these and does nothing with them: remote: hypervisor.remote.kernel_params: set in /opt/kata/share/defaults/kata-containers/runtimes/remote/config.d/50-kata-install.toml, and Kata's Go runtime reads only",
    );
  });
});

describe("an int64 of Kata's Rust configurations", () => {
  it("explain --json gives compact_force_times as the digits the release has (no number holds them)", () => {
    const node = buildHost(amdSnpCrio());
    const run = runCli(
      [
        "explain",
        "--json",
        "--host-root",
        node.root,
        "clh-runtime-rs:agent.kata.mem_agent.compact_force_times",
        ...release,
      ],
      { env: { SHIMS: "clh-runtime-rs" } },
    );
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain('"value": 9223372036854775807,');
    expect(
      runCli(["explain", "--host-root", node.root, "clh-runtime-rs:compact_force_times", ...release]).stdout,
    ).toContain("agent.kata.mem_agent.compact_force_times = 9223372036854775807\n");
  });
});
