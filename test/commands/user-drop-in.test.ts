// CONTAINERD_USER_DROP_IN_SOURCE_FILE (kata-deploy's chart: containerd.userDropIn): the admin's
// containerd settings copied beside kata-install's drop-in and loaded after it, journalled like
// every file kata-install writes; a source that cannot be used is refused by name before anything
// is written; where containerd is edited in place (1.x) it is refused, as kata-deploy refuses it.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse } from "smol-toml";
import { afterAll, describe, expect, it } from "vitest";
import { answeringHost } from "../helpers/answering.js";
import { artifactDir } from "../helpers/artifacts.js";
import { runCli } from "../helpers/cli.js";
import { intelContainerd16, k0sNode, k3sImportingDropIns } from "../helpers/nodes.js";
import { changeAt, planOn } from "../helpers/plan.js";
import { containerdOf } from "../helpers/real-tools.js";
import { buildHost, type NodeSpec, removeTestHosts } from "../helpers/test-host.js";
import { snapshot } from "../helpers/tree.js";

afterAll(removeTestHosts);
const artifacts = artifactDir();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-user-drop-in-"));
afterAll(() => {
  fs.rmSync(artifacts, { recursive: true, force: true });
  fs.rmSync(tmp, { recursive: true, force: true });
});

const VARIABLE = "CONTAINERD_USER_DROP_IN_SOURCE_FILE";
/** The admin's settings: containerd's log level (over DEBUG's), and the GC scheduler's. */
const USER = `# the admin's own, from the chart's containerd.userDropIn
version = 2

[debug]
  level = "warn"

[plugins."io.containerd.gc.v1.scheduler"]
  pause_threshold = 0.05
`;
function source(name: string, content: string | Buffer): string {
  const file = path.join(tmp, name);
  fs.writeFileSync(file, content);
  return file;
}
const userFile = source("containerd-user-dropin.toml", USER);

/** containerd 2.x, its main file importing conf.d/ (version 2, which this machine's containerd 1.6 loads). */
function containerd2(): NodeSpec {
  const spec = intelContainerd16();
  spec.commands = {
    ...spec.commands,
    "/usr/bin/containerd": 'echo "containerd containerd.io 2.0.4 1a43cb6a"',
  };
  spec.files = {
    ...spec.files,
    "/etc/containerd/config.toml": 'version = 2\nimports = ["/etc/containerd/conf.d/*.toml"]\n',
  };
  return spec;
}

describe("containerd 2.x: copied into conf.d after kata-install's drop-in", async () => {
  const { decision, changeset } = await planOn(buildHost(containerd2()).host, {
    env: { [VARIABLE]: userFile, DEBUG: "true" },
  });
  const ours = changeAt(changeset, "/etc/containerd/conf.d/50-kata-install.toml");
  const theirs = changeAt(changeset, "/etc/containerd/conf.d/zz-kata-install-user.toml");

  it("byte for byte, named so that containerd loads it after kata-install's", () => {
    expect(decision.checks.find((c) => c.id === "containerd-user-drop-in")).toBeUndefined();
    expect(theirs).toMatchObject({ action: "create", after: USER });
    expect(theirs?.reason).toBe(
      `the admin's containerd drop-in, ${userFile} (${VARIABLE}), loaded after kata-install's`,
    );
    // containerd reads a glob's files in name order; later ones win.
    const names = [ours, theirs].map((c) => path.basename(c?.path as string));
    expect([...names].sort()).toEqual(names);
  });

  it("the real containerd loads the main file with both: Kata's handlers, and the admin's settings over kata-install's", () => {
    const dir = path.join(tmp, "loaded");
    fs.mkdirSync(path.join(dir, "conf.d"), { recursive: true });
    fs.writeFileSync(path.join(dir, "conf.d/50-kata-install.toml"), ours?.after as string);
    fs.writeFileSync(path.join(dir, "conf.d/zz-kata-install-user.toml"), theirs?.after as string);
    const main = path.join(dir, "config.toml");
    fs.writeFileSync(main, `version = 2\nimports = ["${dir}/conf.d/*.toml"]\n`);
    const config = parse(
      execFileSync(containerdOf("1.6").containerd, ["--config", main, "config", "dump"], {
        encoding: "utf8",
      }),
    ) as Record<string, Record<string, Record<string, unknown>>>;
    // DEBUG asked containerd for "debug"; the admin's drop-in, loaded later, says "warn".
    expect(parse(ours?.after as string).debug).toEqual({ level: "debug" });
    expect(config.debug?.level).toBe("warn");
    expect(config.plugins?.["io.containerd.gc.v1.scheduler"]?.pause_threshold).toBe(0.05);
    const cri = config.plugins?.["io.containerd.grpc.v1.cri"] as { containerd: { runtimes: object } };
    expect(Object.keys(cri.containerd.runtimes)).toEqual(expect.arrayContaining(["kata-qemu", "kata-clh"]));
  });

  it("with MULTI_INSTALL_SUFFIX, a name of that install's own", async () => {
    const suffixed = await planOn(buildHost(containerd2()).host, {
      env: { [VARIABLE]: userFile, MULTI_INSTALL_SUFFIX: "ci" },
    });
    expect(changeAt(suffixed.changeset, "/etc/containerd/conf.d/zz-kata-install-ci-user.toml")?.after).toBe(
      USER,
    );
  });
});

describe("k3s and k0s: in the directory their containerd reads, after kata-install's", () => {
  it("k3s: config.toml.d/", async () => {
    const { changeset } = await planOn(buildHost(k3sImportingDropIns()).host, {
      env: { [VARIABLE]: userFile },
    });
    expect(
      changeAt(changeset, "/var/lib/rancher/k3s/agent/etc/containerd/config.toml.d/zz-kata-install-user.toml")
        ?.after,
    ).toBe(USER);
  });

  it("k0s: containerd.d/", async () => {
    const { changeset } = await planOn(buildHost(k0sNode()).host, { env: { [VARIABLE]: userFile } });
    expect(changeAt(changeset, "/etc/k0s/containerd.d/zz-kata-install-user.toml")?.after).toBe(USER);
  });
});

describe("where it cannot be imported safely, or there is no containerd", () => {
  it("containerd 1.x (config.toml edited in place): an error, as kata-deploy's; nothing of it written", async () => {
    const { decision, changeset } = await planOn(buildHost(intelContainerd16()).host, {
      env: { [VARIABLE]: userFile },
    });
    expect(decision.checks.find((c) => c.id === "containerd-user-drop-in")).toMatchObject({
      severity: "error",
      status: "fail",
      message: expect.stringContaining(
        `${VARIABLE}: containerd's configuration is edited in place on this node (containerd 1.x, or a version not known)`,
      ),
    });
    expect(changeset.changes.filter((c) => c.after === USER)).toEqual([]);
    // Why: containerd 1.x takes an imported file's plugin table whole. The plan's own config.toml,
    // importing a drop-in that sets one CRI key, loses every handler in the real containerd 1.6.
    const dir = path.join(tmp, "in-place");
    fs.mkdirSync(dir, { recursive: true });
    const cri = path.join(dir, "user.toml");
    fs.writeFileSync(
      cri,
      'version = 2\n[plugins."io.containerd.grpc.v1.cri".registry]\n  config_path = "/etc/containerd/certs.d"\n',
    );
    const main = path.join(dir, "config.toml");
    const edited = changeAt(changeset, "/etc/containerd/config.toml")?.after as string;
    const dump = (text: string) => {
      fs.writeFileSync(main, text);
      const out = execFileSync(containerdOf("1.6").containerd, ["--config", main, "config", "dump"], {
        encoding: "utf8",
      });
      return Object.keys(
        (parse(out) as { plugins: Record<string, { containerd: { runtimes: object } }> }).plugins[
          "io.containerd.grpc.v1.cri"
        ]?.containerd.runtimes ?? {},
      );
    };
    expect(dump(edited)).toContain("kata-qemu");
    expect(dump(`imports = [${JSON.stringify(cri)}]\n${edited}`)).not.toContain("kata-qemu");
  });

  it("CRI-O: said, and ignored (one DaemonSet's environment is the whole cluster's)", async () => {
    const spec = intelContainerd16();
    spec.commands = { "/usr/bin/crio": 'echo "crio version 1.31.0"' };
    spec.sockets = ["/var/run/crio/crio.sock"];
    spec.files = { "/etc/crio/crio.conf.d/10-crio.conf": "[crio.runtime]\n" };
    const { decision, changeset } = await planOn(buildHost(spec).host, { env: { [VARIABLE]: userFile } });
    expect(decision.checks.find((c) => c.id === "containerd-user-drop-in")).toMatchObject({
      severity: "warning",
      message: expect.stringContaining("this node runs CRI-O: ignored here"),
    });
    expect(changeset.changes.filter((c) => c.after === USER)).toEqual([]);
  });
});

describe("a source that cannot be used is refused by name, before anything is written", () => {
  it.each([
    ["missing", path.join(tmp, "absent.toml"), "cannot read: it does not exist"],
    ["a directory", tmp, "is a directory: it must be a TOML file"],
    ["not TOML", source("broken.toml", "version = 2\n[debug\n"), "invalid TOML at line 2"],
    ["not UTF-8", source("latin1.toml", Buffer.from([0x23, 0x20, 0xe9, 0x0a])), "is not valid UTF-8 text"],
  ])("%s", async (_, file, reason) => {
    const host = await answeringHost(containerd2());
    const before = snapshot(host.root);
    const run = runCli(["install", "--host-root", host.root, "--artifacts", `dir:${artifacts}`], {
      env: { [VARIABLE]: file },
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`environment: ${VARIABLE}: ${file}: ${reason}`);
    expect(snapshot(host.root)).toEqual(before);
  });
});

describe("journalled like every file kata-install writes", () => {
  it("install writes it, uninstall removes it: the node as it was", async () => {
    const host = await answeringHost(containerd2());
    const before = snapshot(host.root);
    const env = { [VARIABLE]: userFile };
    const install = runCli(["install", "--host-root", host.root, "--artifacts", `dir:${artifacts}`], { env });
    expect(install.status, install.stderr).toBe(0);
    const written = path.join(host.root, "etc/containerd/conf.d/zz-kata-install-user.toml");
    expect(fs.readFileSync(written, "utf8")).toBe(USER);
    expect(runCli(["plan", "--host-root", host.root, "--detailed-exitcode"], { env }).status).toBe(0);
    const uninstall = runCli(["uninstall", "--host-root", host.root]);
    expect(uninstall.status, uninstall.stderr).toBe(0);
    expect(snapshot(host.root)).toEqual(before);
  });

  it("a file already at its name is given back as it was; unset later, the copy goes", async () => {
    const spec = containerd2();
    const earlier = "# an earlier copy, by hand\nversion = 2\n";
    spec.files = { ...spec.files, "/etc/containerd/conf.d/zz-kata-install-user.toml": earlier };
    const host = await answeringHost(spec);
    const before = snapshot(host.root);
    const written = path.join(host.root, "etc/containerd/conf.d/zz-kata-install-user.toml");
    const install = () =>
      runCli(["install", "--host-root", host.root, "--artifacts", `dir:${artifacts}`], {
        env: { [VARIABLE]: userFile },
      });
    expect(install().status).toBe(0);
    expect(fs.readFileSync(written, "utf8")).toBe(USER);
    expect(runCli(["uninstall", "--host-root", host.root]).status).toBe(0);
    expect(snapshot(host.root)).toEqual(before);
    // Installed with it, then without it: the copy is removed by the next install.
    expect(install().status).toBe(0);
    const without = runCli(["install", "--host-root", host.root, "--artifacts", `dir:${artifacts}`]);
    expect(without.status, without.stderr).toBe(0);
    expect(fs.existsSync(written)).toBe(false);
    // And uninstall still gives back what was there before kata-install's first install.
    expect(runCli(["uninstall", "--host-root", host.root]).status).toBe(0);
    expect(snapshot(host.root)).toEqual(before);
  });

  it("a copy the admin edited, then the variable unset: set aside with the edit, never deleted", async () => {
    const host = await answeringHost(containerd2());
    const written = path.join(host.root, "etc/containerd/conf.d/zz-kata-install-user.toml");
    const install = (env: Record<string, string> = {}) =>
      runCli(["install", "--host-root", host.root, "--artifacts", `dir:${artifacts}`], { env });
    expect(install({ [VARIABLE]: userFile }).status).toBe(0);
    const edited = `${USER}# and a line of the admin's, on the node\n`;
    fs.writeFileSync(written, edited);
    const plan = runCli(["plan", "--host-root", host.root, "--artifacts", `dir:${artifacts}`]);
    expect(plan.stdout).toMatch(
      /# delete \/etc\/containerd\/conf\.d\/zz-kata-install-user\.toml: .*edited on the node since kata-install wrote it: set aside as <name>\.kata-install-edited/,
    );
    const without = install();
    expect(without.status, without.stderr).toBe(0);
    const aside = path.join(host.root, "etc/containerd/zz-kata-install-user.toml.kata-install-edited");
    expect(without.stdout).toContain(
      "  set aside /etc/containerd/conf.d/zz-kata-install-user.toml as /etc/containerd/zz-kata-install-user.toml.kata-install-edited: edited since kata-install wrote it, with the edit in it",
    );
    expect(fs.existsSync(written)).toBe(false);
    expect(fs.readFileSync(aside, "utf8")).toBe(edited);
    // Not kata-install's: uninstall leaves it.
    expect(runCli(["uninstall", "--host-root", host.root]).status).toBe(0);
    expect(fs.readFileSync(aside, "utf8")).toBe(edited);
  });
});
