// An admin who edits containerd's configuration between two installs, or after the last one, keeps
// the edit: uninstall gives back their file as it is then without kata-install's parts (its block,
// the line it edited, its imports), never the copy from before the first install, and never one
// that still imports a drop-in uninstall removed.
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { answeringHost } from "../helpers/answering.js";
import { artifactDir } from "../helpers/artifacts.js";
import { runCli } from "../helpers/cli.js";
import { arm64Containerd20, intelContainerd17 } from "../helpers/nodes.js";
import { removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);
const x86 = artifactDir("3.9.0", "x86_64");
const arm = artifactDir("3.9.0", "aarch64");
afterAll(() => {
  for (const dir of [x86, arm]) fs.rmSync(dir, { recursive: true, force: true });
});

const CONFIG = "etc/containerd/config.toml";
const MIRROR =
  '\n[plugins."io.containerd.grpc.v1.cri".registry]\n  config_path = "/etc/containerd/certs.d"\n';
const NYDUS = {
  EXPERIMENTAL_SETUP_SNAPSHOTTER: "nydus",
  KATA_INSTALL_NYDUS_SNAPSHOTTER_DIR: path.resolve(import.meta.dirname, "../fixtures/nydus-snapshotter"),
};

async function nodeOf(spec: ReturnType<typeof intelContainerd17>, artifacts: string) {
  const host = await answeringHost(spec);
  const file = path.join(host.root, CONFIG);
  const cli = (args: string[], env: Record<string, string> = {}) =>
    runCli([...args, "--host-root", host.root], { env });
  const install = (shims: string, env: Record<string, string> = {}) => {
    const run = cli(["install", "--artifacts", `dir:${artifacts}`, "--shims", shims], env);
    expect(run.status, run.stderr).toBe(0);
  };
  return { host, file, cli, install, read: () => fs.readFileSync(file, "utf8") };
}

describe("containerd 1.7, config.toml edited in place", () => {
  it.each([
    ["without nydus", {}],
    ["with nydus (its line in the admin's CRI table)", NYDUS],
  ])("%s: an edit between two installs survives the uninstall", async (_, env) => {
    const node = await nodeOf(intelContainerd17(), x86);
    const before = node.read();
    node.install("qemu", env);
    fs.appendFileSync(node.file, MIRROR);
    node.install("qemu qemu-coco-dev", env);
    const uninstall = node.cli(["uninstall"]);
    expect(uninstall.status, uninstall.stderr).toBe(0);
    expect(node.read()).toBe(before + MIRROR);
  });

  it("an edit that leaves the file unreadable: the block still goes, the rest kept, and said that containerd will not start on it", async () => {
    const node = await nodeOf(intelContainerd17(), x86);
    node.install("qemu");
    const broken = node
      .read()
      .replace('  snapshotter = "overlayfs"\n', '  snapshotter = "overlayfs"\n  snapshotter = "native"\n');
    fs.writeFileSync(node.file, broken);
    const uninstall = node.cli(["uninstall"]);
    expect(uninstall.status, uninstall.stderr).toBe(0);
    expect(uninstall.stdout).toContain("it is not valid TOML");
    expect(uninstall.stdout).toContain("the runtime will not start on it until it is fixed");
    // Not restarted onto a file it cannot read: containerd goes on with what it loaded before.
    expect(uninstall.stdout).toContain(
      "Runtime: not restarted: it would not start on /etc/containerd/config.toml; it runs on what it loaded before, Kata's handlers with it, until you mend the file and restart containerd.",
    );
    expect(node.read()).toContain('snapshotter = "native"');
    expect(node.read()).not.toContain("kata-qemu");
  });

  it("two installs (MULTI_INSTALL_SUFFIX), one uninstalled between: the other's uninstall does not bring its block back", async () => {
    const node = await nodeOf(intelContainerd17(), x86);
    const before = node.read();
    const blue = { MULTI_INSTALL_SUFFIX: "blue" };
    node.install("qemu");
    node.install("qemu", blue);
    expect(node.cli(["uninstall"]).status).toBe(0);
    node.install("qemu qemu-coco-dev", blue);
    expect(node.cli(["uninstall"], blue).status).toBe(0);
    expect(node.read()).toBe(before);
  });
});

describe("containerd 1.7, two installs with nydus (MULTI_INSTALL_SUFFIX): one line of the admin's for both", () => {
  it("the first uninstalled hands its line to the other, which keeps its snapshot annotations and gives the admin's line back last", async () => {
    const node = await nodeOf(intelContainerd17(), x86);
    const before = node.read();
    const blue = { ...NYDUS, MULTI_INSTALL_SUFFIX: "blue" };
    node.install("qemu qemu-coco-dev", NYDUS);
    node.install("qemu qemu-coco-dev", blue);
    // Both as their plans want them: the line is not handed back and forth.
    const planned = (env: Record<string, string>) =>
      node.cli(
        ["plan", "--detailed-exitcode", "--artifacts", `dir:${x86}`, "--shims", "qemu qemu-coco-dev"],
        env,
      ).status;
    expect([planned(NYDUS), planned(blue)]).toEqual([0, 0]);
    // The admin edits the file; the first installed is uninstalled while the other is there.
    fs.appendFileSync(node.file, MIRROR);
    const uninstall = node.cli(["uninstall"]);
    expect(uninstall.status, uninstall.stderr).toBe(0);
    expect(uninstall.stdout).toContain(
      "the line it edited left to the install still there (MULTI_INSTALL_SUFFIX=blue)",
    );
    expect(node.read()).toMatch(/\n\s*disable_snapshot_annotations = false # kata-install-blue: /);
    const again = node.cli(
      ["plan", "--detailed-exitcode", "--artifacts", `dir:${x86}`, "--shims", "qemu qemu-coco-dev"],
      blue,
    );
    expect(again.status, again.stdout.slice(-2000)).toBe(0);
    expect(node.cli(["uninstall"], blue).status).toBe(0);
    expect(node.read()).toBe(before + MIRROR);
  });
});

describe("containerd 1.7, two installs with nydus, the first installed again after the admin's edit", () => {
  it("its uninstall gives back the file with the admin's edit and the other's line", async () => {
    const node = await nodeOf(intelContainerd17(), x86);
    const before = node.read();
    const blue = { ...NYDUS, MULTI_INSTALL_SUFFIX: "blue" };
    node.install("qemu qemu-coco-dev", NYDUS);
    node.install("qemu qemu-coco-dev", blue);
    fs.appendFileSync(node.file, MIRROR);
    node.install("qemu", NYDUS);
    expect(node.cli(["uninstall"]).status).toBe(0);
    expect(node.read()).toMatch(/\n\s*disable_snapshot_annotations = false # kata-install-blue: /);
    expect(node.read()).toContain(MIRROR);
    expect(node.cli(["uninstall"], blue).status).toBe(0);
    expect(node.read()).toBe(before + MIRROR);
  });
});

describe("containerd 2.0, its main file given an import of kata-install's drop-in", () => {
  const MAIN =
    'version = 3\n\n[plugins."io.containerd.cri.v1.runtime".containerd]\n  default_runtime_name = "runc"\n';
  const node2 = () => {
    const spec = arm64Containerd20();
    spec.files = { ...spec.files, "/etc/containerd/config.toml": MAIN };
    return nodeOf(spec, arm);
  };

  it("an edit between two installs survives the uninstall, and no import of the removed drop-in is left", async () => {
    const node = await node2();
    node.install("qemu");
    expect(node.read()).toContain('imports = ["/etc/containerd/conf.d/50-kata-install.toml"]');
    fs.appendFileSync(node.file, MIRROR);
    node.install("qemu qemu-runtime-rs");
    expect(node.cli(["uninstall"]).status).toBe(0);
    expect(node.read()).toBe(MAIN + MIRROR);
  });

  it("an edit after the last install: only kata-install's import goes, so containerd still starts", async () => {
    const node = await node2();
    node.install("qemu");
    fs.appendFileSync(node.file, MIRROR);
    const uninstall = node.cli(["uninstall"]);
    expect(uninstall.status, uninstall.stderr).toBe(0);
    expect(uninstall.stdout).toContain("only kata-install's imports were removed");
    expect(node.read()).toBe(MAIN + MIRROR);
    expect(fs.existsSync(path.join(node.host.root, "etc/containerd/conf.d/50-kata-install.toml"))).toBe(
      false,
    );
  });
});

describe("containerd 2.0 importing conf.d/*.toml: kata-install's drop-in edited by the admin", () => {
  it("uninstall moves it out of containerd's reach, the edit kept byte for byte; the next install writes its own again and its uninstall removes it", async () => {
    const node = await nodeOf(arm64Containerd20(), arm);
    const dropIn = path.join(node.host.root, "etc/containerd/conf.d/50-kata-install.toml");
    const aside = path.join(node.host.root, "etc/containerd/50-kata-install.toml.kata-install-edited");
    node.install("qemu");
    fs.appendFileSync(dropIn, "# admin tweak\n");
    const edited = fs.readFileSync(dropIn, "utf8");
    const said =
      "/etc/containerd/conf.d/50-kata-install.toml: edited after the install: moved to /etc/containerd/50-kata-install.toml.kata-install-edited, with the edit in it, out of the runtime's reach (it names Kata's files, which uninstall removes)";
    const dry = node.cli(["uninstall", "--dry-run"]);
    expect(dry.stdout).toContain(`# delete /etc/containerd/conf.d/50-kata-install.toml`);
    expect(dry.stdout).toContain(`  would leave ${said}\n`);
    expect(fs.readFileSync(dropIn, "utf8")).toBe(edited);
    const uninstall = node.cli(["uninstall"]);
    expect(uninstall.status, uninstall.stderr).toBe(0);
    expect(uninstall.stdout).toContain(`  left ${said}\n`);
    // containerd's conf.d/*.toml no longer holds handlers of a Kata that is gone.
    expect(fs.existsSync(dropIn)).toBe(false);
    expect(fs.readFileSync(aside, "utf8")).toBe(edited);
    // Installed and uninstalled again: the drop-in is kata-install's own, not taken for the admin's.
    node.install("qemu");
    expect(fs.readFileSync(dropIn, "utf8")).not.toContain("# admin tweak");
    expect(node.cli(["uninstall"]).status).toBe(0);
    expect(fs.existsSync(dropIn)).toBe(false);
    expect(fs.readFileSync(aside, "utf8")).toBe(edited);
  });
});

describe("conf.d on a file system of its own (a hard link across it fails with EXDEV)", () => {
  it("uninstall copies the edited drop-in aside whole, then removes it: done in one run, the edit kept, mode too", async () => {
    const node = await nodeOf(arm64Containerd20(), arm);
    const dropIn = path.join(node.host.root, "etc/containerd/conf.d/50-kata-install.toml");
    const aside = path.join(node.host.root, "etc/containerd/50-kata-install.toml.kata-install-edited");
    node.install("qemu");
    fs.appendFileSync(dropIn, Buffer.from("# r\xe9glage de l'admin\n", "latin1"));
    fs.chmodSync(dropIn, 0o640);
    const edited = fs.readFileSync(dropIn);
    const uninstall = node.cli(["uninstall"], { KATA_INSTALL_FAULT: "link:1+" });
    expect(uninstall.status, uninstall.stderr).toBe(0);
    expect(uninstall.stdout).toContain("moved to /etc/containerd/50-kata-install.toml.kata-install-edited");
    expect(fs.existsSync(dropIn)).toBe(false);
    expect(fs.readFileSync(aside)).toEqual(edited);
    expect(fs.statSync(aside).mode & 0o777).toBe(0o640);
    expect(fs.existsSync(path.join(node.host.root, "opt/kata/.install/journal.json"))).toBe(false);
    expect(node.cli(["uninstall"]).stdout).toContain("Nothing to uninstall");
  });
});

describe("a Kata configuration kata-install wrote, edited on the node", () => {
  it("the next plan says the edit is replaced, and where an admin's values go; an unedited one it does not", async () => {
    const { host, cli, install } = await nodeOf(intelContainerd17(), x86);
    install("qemu");
    const file = path.join(
      host.root,
      "opt/kata/share/defaults/kata-containers/runtimes/qemu/configuration-qemu.toml",
    );
    const text = fs.readFileSync(file, "utf8");
    expect(text).toMatch(/^default_memory = \d+/m);
    fs.writeFileSync(file, text.replace(/^default_memory = \d+/m, "default_memory = 4096 # the admin's"));
    const plan = cli(["plan", "--artifacts", `dir:${x86}`, "--shims", "qemu"]);
    expect(plan.stdout).toMatch(
      /^# modify \/opt\/kata\/share\/defaults\/kata-containers\/runtimes\/qemu\/configuration-qemu\.toml: .*; edited on the node since kata-install wrote it: the edit is replaced \(an admin's Kata values go in a drop-in of config\.d\/, which kata-install keeps\)$/m,
    );
    // Put back as written: nothing to say, nothing to do.
    fs.writeFileSync(file, text);
    const again = cli(["plan", "--artifacts", `dir:${x86}`, "--shims", "qemu", "--detailed-exitcode"]);
    expect(again.status, again.stdout.slice(-300)).toBe(0);
    expect(again.stdout).not.toContain("edited on the node");
    host.close();
  });
});

describe("bytes are bytes: what an admin adds after the install that is no UTF-8", () => {
  const ADDED = Buffer.concat([
    Buffer.from("# caf"),
    Buffer.from([0xe9]), // Latin-1 é
    Buffer.from(" \u0000 nul, "),
    Buffer.from([0xff, 0xfe, 0xc3]), // no UTF-8 at all
    Buffer.from("\n"),
  ]);
  const main2 = () => {
    const spec = arm64Containerd20();
    spec.files = {
      ...spec.files,
      "/etc/containerd/config.toml":
        'version = 3\n\n[plugins."io.containerd.cri.v1.runtime".containerd]\n  default_runtime_name = "runc"\n',
    };
    return spec;
  };
  it.each([
    ["containerd 1.7's config.toml, edited in place", intelContainerd17, x86],
    ["containerd 2.0's main file, its import of kata-install's drop-in", main2, arm],
  ])("%s: given back byte for byte, only kata-install's part taken out", async (_, spec, artifacts) => {
    const node = await nodeOf(spec(), artifacts);
    const before = fs.readFileSync(node.file);
    node.install("qemu");
    fs.appendFileSync(node.file, ADDED);
    const uninstall = node.cli(["uninstall"]);
    expect(uninstall.status, uninstall.stderr).toBe(0);
    expect(fs.readFileSync(node.file)).toEqual(Buffer.concat([before, ADDED]));
  });
});
