// A real Kata release installs a whole Kata. Stand-ins of Kata's 4.1.0 release (every path and
// link of its tarballs, test/fixtures/release/) are split into artifact images; then each shim the
// catalogue serves on that architecture is installed on a test host from them, as a user would:
// every file its configuration names must be there (the plan's artifact-paths check, then the
// node's), the real containerd must start on the result with its CRI plugin, and uninstall must
// give the host back byte for byte.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadArtifactCatalogue } from "../../src/artifacts/catalogue.js";
import { FILES_ANNOTATION } from "../../src/artifacts/listing.js";
import { type SplitReport, splitRelease } from "../../src/install/split.js";
import { pathsIn } from "../../src/release/named-paths.js";
import { artifactDir, fixtureRelease } from "../helpers/artifacts.js";
import { runCli } from "../helpers/cli.js";
import { containerdServes } from "../helpers/containerd.js";
import { criStandIn } from "../helpers/cri-stand-in.js";
import { arm64Containerd20, CONTAINERD_V2_MAIN, intelContainerd16 } from "../helpers/nodes.js";
import { buildRelease, buildSingleTarball, type RELEASES } from "../helpers/release.js";
import type { NodeSpec } from "../helpers/test-host.js";
import { buildHost, removeTestHosts } from "../helpers/test-host.js";
import { installedTree, snapshot } from "../helpers/tree.js";

afterAll(removeTestHosts);
const made: string[] = [];
afterAll(() => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});

const SYSTEMCTL = 'echo "$@" >> "$(dirname "$0")/../../var/log/systemctl.calls"';

/** A node with containerd 1.6 (the version whose daemon this machine can run), of either architecture. */
function nodeOf(arch: keyof typeof RELEASES): NodeSpec {
  const spec =
    arch === "x86_64"
      ? intelContainerd16()
      : {
          ...arm64Containerd20(),
          commands: { "/usr/bin/containerd": 'echo "containerd github.com/containerd/containerd 1.6.20 "' },
          files: { "/etc/containerd/config.toml": CONTAINERD_V2_MAIN },
        };
  spec.commands = { ...spec.commands, "/usr/bin/systemctl": SYSTEMCTL };
  spec.files = { ...spec.files, "/var/log/.keep": "" };
  return spec;
}

/** The host, with a containerd socket that accepts (as a running containerd's would). */
async function hostOf(arch: keyof typeof RELEASES) {
  const host = buildHost(nodeOf(arch));
  const socket = path.join(host.root, "run/containerd/containerd.sock");
  fs.rmSync(socket);
  const server = await criStandIn(socket);
  afterAll(() => server.close());
  return { ...host, original: snapshot(host.root) };
}

const checkOf = (planJson: string) =>
  (JSON.parse(planJson).checks as Array<{ id: string; status: string; message: string }>).find(
    (c) => c.id === "artifact-paths",
  );

describe.each(["x86_64", "aarch64"] as const)(
  "Kata 4.1.0 for %s, split and installed shim by shim",
  (arch) => {
    // Every shim the release ships: a shim is a configuration file of the release. Those whose
    // configuration names a file the release lacks (arm64's TEE firmware, s390x's boot images) or
    // one of the host's that this node has not (the Azure kernel) cannot install: the plan says so.
    const release = fixtureRelease(arch);
    const shims = [...release.shims.keys()].sort();
    const unmet = (shim: string): string[] => {
      const shipped = release.shims.get(shim);
      const named = pathsIn(shim, shipped?.config.table ?? {}).filter(
        (p) => !/^@[A-Z0-9_]+@$/.test(p.path), // a build placeholder: kata-install unsets it, said
      );
      return [
        ...(report.shims.find((s) => s.shim === shim)?.missing ?? []).map((m) => m.path),
        ...named.filter((p) => !p.path.startsWith("/opt/kata/")).map((p) => p.path),
      ];
    };
    let layout = "";
    let report: SplitReport;
    beforeAll(async () => {
      const { dir, tarballs } = buildRelease(arch);
      made.push(dir);
      layout = path.join(dir, "layout");
      report = await splitRelease(tarballs, layout, loadArtifactCatalogue(), arch, "tar");
    });

    it.each(shims)(
      "%s: the plan checks every path, install puts them all there, uninstall takes all back",
      async (shim) => {
        const host = await hostOf(arch);
        const args = ["--host-root", host.root, "--artifacts", `oci-layout:${layout}`, "--shims", shim];
        const plan = runCli(["plan", ...args, "--json"]);
        const missing = unmet(shim);
        if (missing.length > 0) {
          // Not installable from this release on this node: refused, each path named, nothing changed.
          expect(plan.status).toBe(1);
          const check = checkOf(plan.stdout);
          expect(check?.status).toBe("fail");
          for (const p of missing) expect(check?.message).toContain(` = ${p}: `);
          expect(runCli(["install", ...args]).status).toBe(1);
          expect(snapshot(host.root)).toEqual(host.original);
          return;
        }
        const failing = (
          JSON.parse(plan.stdout).checks as Array<{ status: string; severity: string; message: string }>
        )
          .filter((c) => c.status === "fail" && c.severity === "error")
          .map((c) => c.message);
        expect(plan.status, failing.join("\n")).toBe(0);
        const before = checkOf(plan.stdout);
        expect(before?.status, before?.message).toBe("pass");
        expect(JSON.parse(plan.stdout).transfer.bytes).toBeGreaterThan(0);
        const run = runCli(["install", ...args]);
        expect(run.status, run.stderr).toBe(0);
        expect(run.stdout).toMatch(/Pulled \d+ of the release's \d+ artifacts: \d+ of \d+ bytes \(\d+%\)\./);
        // kata-deploy's path for the shim's configuration leads to the one the handler names.
        const rust = fixtureRelease(arch).shims.get(shim)?.runtime === "rust";
        const defaults = path.join(host.root, "opt/kata/share/defaults/kata-containers");
        expect(
          fs.realpathSync(path.join(defaults, `${rust ? "runtime-rs/" : ""}configuration-${shim}.toml`)),
        ).toBe(
          fs.realpathSync(
            path.join(defaults, `${rust ? "runtime-rs/" : ""}runtimes/${shim}/configuration-${shim}.toml`),
          ),
        );
        // No link of the install leads nowhere (share/ovmf on a node without a TEE shim is not made).
        const dangling: string[] = [];
        const walk = (dir: string) => {
          for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
            const full = path.join(dir, e.name);
            if (e.isSymbolicLink()) {
              if (!fs.existsSync(full)) dangling.push(path.relative(host.root, full));
            } else if (e.isDirectory() && e.name !== "versions") walk(full);
          }
        };
        walk(path.join(host.root, "opt/kata"));
        expect(dangling).toEqual([]);
        // On the node itself now: nothing left to do, and every path there.
        const after = runCli(["plan", ...args, "--json"]);
        expect(checkOf(after.stdout)?.status, checkOf(after.stdout)?.message).toBe("pass");
        expect(JSON.parse(after.stdout).changes).toEqual([]);
        const uninstall = runCli(["uninstall", "--host-root", host.root]);
        expect(uninstall.status, uninstall.stderr).toBe(0);
        const tree = snapshot(host.root);
        delete tree["var/log/systemctl.calls"];
        expect(tree).toEqual(host.original);
      },
    );

    it("every shim it can install at once: the real containerd starts on the installed config, CRI loaded, one definition per handler", async () => {
      const host = await hostOf(arch);
      const installable = shims.filter((shim) => unmet(shim).length === 0);
      const run = runCli([
        "install",
        "--host-root",
        host.root,
        "--artifacts",
        `oci-layout:${layout}`,
        "--shims",
        installable.join(","),
      ]);
      expect(run.status, run.stderr).toBe(0);
      const config = fs.readFileSync(path.join(host.root, "etc/containerd/config.toml"), "utf8");
      const served = await containerdServes(config);
      expect(served.cri, served.log.slice(-2000)).toBe("ok");
      const started = served.log.split("\n").find((l) => l.includes("Start cri plugin with config")) ?? "";
      for (const shim of installable) {
        expect(started.match(new RegExp(`\\bkata-${shim}:\\{`, "g")) ?? [], shim).toHaveLength(1);
        const dir = release.shims.get(shim)?.runtime === "rust" ? "runtime-rs/runtimes" : "runtimes";
        expect(started).toContain(
          `/opt/kata/share/defaults/kata-containers/${dir}/${shim}/configuration-${shim}.toml`,
        );
      }
    });

    it("DEBUG under an INSTALLATION_PREFIX: debug handlers and qemu's firmware wrapper pass every check, containerd loads them, uninstall takes all back", async () => {
      const host = await hostOf(arch);
      const env = { DEBUG: "true", INSTALLATION_PREFIX: "/srv/k8s" };
      const args = ["--host-root", host.root, "--artifacts", `oci-layout:${layout}`, "--shims", "qemu,clh"];
      const plan = runCli(["plan", ...args, "--json"], { env });
      expect(plan.status, plan.stderr).toBe(0);
      expect(checkOf(plan.stdout)?.status, checkOf(plan.stdout)?.message).toBe("pass");
      const run = runCli(["install", ...args], { env });
      expect(run.status, run.stderr).toBe(0);
      const dir = "/srv/k8s/opt/kata";
      const qemu = arch === "x86_64" ? "qemu-system-x86_64" : "qemu-system-aarch64";
      const wrapper = path.join(host.root, `${dir}/kata-install/bin/${qemu}-installation-prefix`);
      expect(fs.statSync(wrapper).mode & 0o777).toBe(0o755);
      expect(fs.readFileSync(wrapper, "utf8")).toContain(
        `exec '${dir}/bin/${qemu}' "$@" -L '${dir}/share/kata-qemu/qemu/'\n`,
      );
      const config = fs.readFileSync(path.join(host.root, "etc/containerd/config.toml"), "utf8");
      const served = await containerdServes(config);
      expect(served.cri, served.log.slice(-2000)).toBe("ok");
      const started = served.log.split("\n").find((l) => l.includes("Start cri plugin with config")) ?? "";
      for (const handler of ["kata-qemu", "kata-qemu-debug", "kata-clh", "kata-clh-debug"])
        expect(started.match(new RegExp(`\\b${handler}:\\{`, "g")) ?? [], handler).toHaveLength(1);
      expect(started).toContain(
        `${dir}/share/defaults/kata-containers/custom-runtimes/kata-qemu-debug/configuration-qemu.toml`,
      );
      // Installed as planned: nothing more to do.
      expect(JSON.parse(runCli(["plan", ...args, "--json"], { env }).stdout).changes).toEqual([]);
      const uninstall = runCli(["uninstall", "--host-root", host.root], { env });
      expect(uninstall.status, uninstall.stderr).toBe(0);
      const tree = snapshot(host.root);
      delete tree["var/log/systemctl.calls"];
      expect(tree).toEqual(host.original);
    });
  },
);

describe("an incomplete release, a tampered one, a node changed by hand", () => {
  const dirOf = (edit?: (dir: string) => void) => {
    const dir = artifactDir();
    made.push(dir);
    edit?.(dir);
    return dir;
  };

  it("the guest image missing from its artifact: plan fails artifact-paths naming the path and shim; install refuses, the host untouched", async () => {
    const dir = dirOf((d) =>
      fs.rmSync(path.join(d, "guest-image/opt/kata/share/kata-containers/kata-ubuntu-noble.image")),
    );
    const host = await hostOf("x86_64");
    const args = ["--host-root", host.root, "--artifacts", `dir:${dir}`, "--shims", "qemu,clh"];
    const plan = runCli(["plan", ...args]);
    expect(plan.status).toBe(1);
    expect(plan.stdout).toMatch(
      /\[ERROR\] artifact-paths: 2 path\(s\) the shims' configurations name would not be there/,
    );
    expect(plan.stdout).toContain(
      "qemu: hypervisor.qemu.image = /opt/kata/share/kata-containers/kata-containers.img: in none of the artifacts being installed (share/kata-containers/kata-ubuntu-noble.image is missing)",
    );
    expect(plan.stdout).toContain(
      "clh: hypervisor.clh.image = /opt/kata/share/kata-containers/kata-containers.img",
    );
    const run = runCli(["install", ...args]);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/preflight errors: artifact-paths .*Nothing was installed/);
    expect(snapshot(host.root)).toEqual(host.original);
  });

  it("a file removed by hand from an installed Kata: plan shows the repair, install puts it back", async () => {
    const dir = dirOf();
    const host = await hostOf("x86_64");
    const args = ["--host-root", host.root, "--artifacts", `dir:${dir}`, "--shims", "qemu"];
    expect(runCli(["install", ...args]).status).toBe(0);
    // The version's file list records each file's identity, which a file put back has anew.
    const installed = installedTree(host.root);
    const image = path.join(host.root, "opt/kata/current/share/kata-containers/kata-ubuntu-noble.image");
    fs.rmSync(image);
    // Without a source the plan can only say so.
    const blind = runCli(["plan", "--host-root", host.root, "--shims", "qemu"]);
    expect(blind.status).toBe(1);
    expect(blind.stdout).toContain(
      "qemu: hypervisor.qemu.image = /opt/kata/share/kata-containers/kata-containers.img: not on the node (or a link to nothing)",
    );
    const plan = runCli(["plan", ...args]);
    expect(plan.status).toBe(0);
    expect(plan.stdout).toMatch(
      /pull-artifact guest-image: repair: \/opt\/kata\/share\/kata-containers\/kata-containers\.img is not as installed/,
    );
    const run = runCli(["install", ...args]);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      /Artifacts: 1 file\(s\) of version [0-9a-f]{16} were not as installed: put back\./,
    );
    const tree = installedTree(host.root);
    for (const t of [tree, installed]) {
      delete t["var/log/systemctl.calls"];
      for (const k of Object.keys(t)) if (k.startsWith("opt/kata/.install")) delete t[k];
    }
    expect(tree).toEqual(installed);
  });

  it("a file list that lies (an image said to hold a file it lacks): caught after the switch, the previous version and files back", async () => {
    const { dir, tarballs } = buildRelease("x86_64");
    made.push(dir);
    const layout = path.join(dir, "layout");
    await splitRelease(tarballs, layout, loadArtifactCatalogue(), "x86_64", "tar");
    const host = await hostOf("x86_64");
    const install = (from: string) =>
      runCli(["install", "--host-root", host.root, "--artifacts", `oci-layout:${from}`, "--shims", "qemu"]);
    expect(install(layout).status).toBe(0);
    const previous = fs.readlinkSync(path.join(host.root, "opt/kata/current"));
    // Another copy of the release whose guest image claims one more file than its layer holds.
    const lying = path.join(dir, "lying");
    fs.cpSync(layout, lying, { recursive: true });
    addToFileList(lying, "guest-image", {
      path: "share/kata-containers/kata-extra.img",
      type: "file",
      mode: 0o644,
      size: 1,
    });
    // The admin's drop-in names that file: a plan from the list believes it will be there.
    const dropIn = path.join(
      host.root,
      "opt/kata/share/defaults/kata-containers/runtimes/qemu/config.d/90-admin.toml",
    );
    fs.mkdirSync(path.dirname(dropIn), { recursive: true });
    fs.writeFileSync(dropIn, '[hypervisor.qemu]\nimage = "/opt/kata/share/kata-containers/kata-extra.img"\n');
    const visible = () => {
      const tree = snapshot(host.root);
      for (const k of Object.keys(tree))
        if (k.startsWith("opt/kata/.install") || k === "var/log/systemctl.calls") delete tree[k];
      return tree;
    };
    const before = visible();
    const plan = runCli([
      "plan",
      "--host-root",
      host.root,
      "--artifacts",
      `oci-layout:${lying}`,
      "--shims",
      "qemu",
      "--json",
    ]);
    expect(checkOf(plan.stdout)?.status).toBe("pass");
    expect(JSON.parse(plan.stdout).actions.map((a: { target: string }) => a.target)).toContain("guest-image");
    const run = install(lying);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(
      "after the install, qemu: hypervisor.qemu.image = /opt/kata/share/kata-containers/kata-extra.img: not on the node (or a link to nothing): everything this run changed was rolled back",
    );
    expect(run.stderr).not.toMatch(/\n\s+at /); // one line, no stack trace
    expect(fs.readlinkSync(path.join(host.root, "opt/kata/current"))).toBe(previous);
    expect(visible()).toEqual(before);
  });
});

/** Rewrite an image's manifest so that its file list also names `entry` (index and pins follow). */
function addToFileList(layout: string, artifact: string, entry: Record<string, unknown>): void {
  const indexFile = path.join(layout, "index.json");
  const index = JSON.parse(fs.readFileSync(indexFile, "utf8"));
  const descriptor = index.manifests.find(
    (m: { annotations: Record<string, string> }) =>
      m.annotations["org.opencontainers.image.ref.name"] === artifact,
  );
  const blob = (digest: string) => path.join(layout, "blobs/sha256", digest.slice(7));
  const manifest = JSON.parse(fs.readFileSync(blob(descriptor.digest), "utf8"));
  const files = JSON.parse(manifest.annotations[FILES_ANNOTATION]);
  manifest.annotations[FILES_ANNOTATION] = JSON.stringify([...files, entry]);
  const bytes = Buffer.from(JSON.stringify(manifest));
  const digest = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
  fs.writeFileSync(blob(digest), bytes);
  descriptor.digest = digest;
  descriptor.size = bytes.length;
  fs.writeFileSync(indexFile, JSON.stringify(index));
  const releaseFile = path.join(layout, "kata-release.json");
  const release = JSON.parse(fs.readFileSync(releaseFile, "utf8"));
  release.artifacts[artifact].digest = digest;
  fs.writeFileSync(releaseFile, JSON.stringify(release));
}

describe("releases of another shape install with no change to kata-install", () => {
  const share = "opt/kata/share/kata-containers";
  const goConfigs = "opt/kata/share/defaults/kata-containers";

  it("Kata 3.x for arm64: one tarball holding both runtimes, a confidential kernel, a versioned NVIDIA initrd, a qemu-cca shim", async () => {
    const { dir, tarball } = buildSingleTarball("aarch64", "kata-static-3.24.0-arm64.tar.zst", (tree) => {
      fs.writeFileSync(path.join(tree, "opt/kata/VERSION"), "3.24.0\n");
      // Files this kata-install's catalogue has never seen, and the links that name them.
      fs.writeFileSync(path.join(tree, share, "vmlinux-6.12.47-172-confidential"), "a confidential kernel\n");
      fs.symlinkSync(
        "vmlinux-6.12.47-172-confidential",
        path.join(tree, share, "vmlinux-confidential.container"),
      );
      fs.writeFileSync(
        path.join(tree, share, "kata-ubuntu-noble-nvidia-gpu-580.65.06.initrd"),
        "an initrd\n",
      );
      fs.symlinkSync(
        "kata-ubuntu-noble-nvidia-gpu-580.65.06.initrd",
        path.join(tree, share, "kata-containers-initrd-nvidia-gpu.img"),
      );
      // A shim no rule of kata-install's knows, configured as the release configures it.
      const qemu = fs.readFileSync(path.join(tree, goConfigs, "configuration-qemu.toml"), "utf8");
      fs.writeFileSync(
        path.join(tree, goConfigs, "configuration-qemu-cca.toml"),
        qemu
          .replace(
            "/opt/kata/share/kata-containers/vmlinux.container",
            "/opt/kata/share/kata-containers/vmlinux-confidential.container",
          )
          .replace(
            'image = "/opt/kata/share/kata-containers/kata-containers.img"',
            'initrd = "/opt/kata/share/kata-containers/kata-containers-initrd-nvidia-gpu.img"',
          ),
      );
    });
    made.push(dir);
    const layout = path.join(dir, "layout");
    const split = runCli(["artifacts", "split", tarball, "--out", `oci-layout:${layout}`, "--json"]);
    expect(split.status, split.stderr).toBe(0);
    const report = JSON.parse(split.stdout);
    expect(report.version).toBe("3.24.0");
    expect(report.extra).toEqual([
      {
        image: "extra-kata-containers-initrd-nvidia-gpu.img",
        files: [
          "share/kata-containers/kata-containers-initrd-nvidia-gpu.img",
          "share/kata-containers/kata-ubuntu-noble-nvidia-gpu-580.65.06.initrd",
        ],
        neededBy: ["qemu-cca"],
      },
      {
        image: "extra-vmlinux-confidential.container",
        files: [
          "share/kata-containers/vmlinux-6.12.47-172-confidential",
          "share/kata-containers/vmlinux-confidential.container",
        ],
        neededBy: ["qemu-cca"],
      },
    ]);
    const host = await hostOf("aarch64");
    const args = [
      "--host-root",
      host.root,
      "--artifacts",
      `oci-layout:${layout}`,
      "--shims",
      "qemu,qemu-cca",
    ];
    const plan = runCli(["plan", ...args, "--json"]);
    expect(plan.status, plan.stdout).toBe(0);
    const doc = JSON.parse(plan.stdout);
    expect(checkOf(plan.stdout)?.status, checkOf(plan.stdout)?.message).toBe("pass");
    expect(doc.checks.find((c: { id: string }) => c.id === "unvetted-shim")?.message).toContain(
      "qemu-cca is installed as asked: Kata 3.24.0 ships it",
    );
    const pulls = doc.actions
      .filter((a: { kind: string }) => a.kind === "pull-artifact")
      .map((a: { target: string }) => a.target);
    expect(pulls).toEqual(
      expect.arrayContaining([
        "extra-vmlinux-confidential.container",
        "extra-kata-containers-initrd-nvidia-gpu.img",
        "qemu",
        "base",
        "guest-kernel",
      ]),
    );
    expect(pulls).not.toContain("unclaimed");
    const run = runCli(["install", ...args]);
    expect(run.status, run.stderr).toBe(0);
    expect(fs.readFileSync(path.join(host.root, share, "vmlinux-confidential.container"), "utf8")).toBe(
      "a confidential kernel\n",
    );
    const installed = fs.readFileSync(
      path.join(host.root, goConfigs, "runtimes/qemu-cca/configuration-qemu-cca.toml"),
      "utf8",
    );
    expect(installed).toContain('kernel = "/opt/kata/share/kata-containers/vmlinux-confidential.container"');
    expect(runCli(["uninstall", "--host-root", host.root]).status).toBe(0);
    const tree = snapshot(host.root);
    delete tree["var/log/systemctl.calls"];
    expect(tree).toEqual(host.original);
  });

  it("a release that ships no VERSION, its tarball renamed: named by its data-collection script, which the layout records in its meta manifest for the node", async () => {
    const { dir, tarball } = buildSingleTarball("x86_64", "kata-static.tar.zst", (tree) => {
      fs.rmSync(path.join(tree, "opt/kata/VERSION"));
      fs.copyFileSync(
        "test/fixtures/release/kata-collect-data-3.0.0.sh",
        path.join(tree, "opt/kata/bin/kata-collect-data.sh"),
      );
    });
    made.push(dir);
    const layout = path.join(dir, "layout");
    const split = runCli([
      "artifacts",
      "split",
      tarball,
      "--arch",
      "x86_64",
      "--out",
      `oci-layout:${layout}`,
      "--json",
    ]);
    expect(split.status, split.stderr).toBe(0);
    expect(JSON.parse(split.stdout).version).toBe("3.0.0");
    expect(JSON.parse(fs.readFileSync(path.join(layout, "kata-release.json"), "utf8")).version).toBe("3.0.0");
    // The plan of a node reads meta, whose files do not say it: the manifest does.
    const host = await hostOf("x86_64");
    const plan = runCli(["plan", "--host-root", host.root, "--artifacts", `oci-layout:${layout}`, "--json"]);
    expect(plan.status, plan.stderr).toBe(0);
    expect(plan.stdout).toContain("Kata 3.0.0");
    expect(plan.stdout).not.toContain("Kata unknown");
  });

  it("a newer release: a renamed kernel and image, and a configuration key no kata-install knows, reach the node", async () => {
    const { dir, tarballs } = buildRelease("x86_64", (name, tree) => {
      if (name.startsWith("kata-static-")) {
        // A kernel named as no kernel before it (the catalogue's {kver} does not match it).
        fs.writeFileSync(path.join(tree, share, "vmlinux-7.1-rc3"), "the next kernel\n");
        fs.symlinkSync("vmlinux-7.1-rc3", path.join(tree, share, "vmlinux-next.container"));
        // An image of a guest OS the catalogue knows, through a link it does not.
        fs.writeFileSync(path.join(tree, share, "kata-debian-trixie.image"), "the next image\n");
        fs.symlinkSync("kata-debian-trixie.image", path.join(tree, share, "kata-containers-next.img"));
      }
      fs.writeFileSync(path.join(tree, "opt/kata/VERSION"), "4.2.0\n");
      const config = path.join(tree, goConfigs, "configuration-qemu.toml");
      if (!fs.existsSync(config)) return;
      fs.writeFileSync(
        config,
        fs
          .readFileSync(config, "utf8")
          .replace("kata-containers/vmlinux.container", "kata-containers/vmlinux-next.container")
          .replace("kata-containers/kata-containers.img", "kata-containers/kata-containers-next.img")
          .replace('machine_type = "q35"', 'machine_type = "q35"\n\n# New in 4.2.\nguest_numa_nodes = 2'),
      );
    });
    made.push(dir);
    const layout = path.join(dir, "layout");
    const report = await splitRelease(tarballs, layout, loadArtifactCatalogue(), "x86_64", "tar");
    expect(report.shims.find((s) => s.shim === "qemu")?.images).toEqual(
      expect.arrayContaining(["extra-vmlinux-next.container", "guest-image"]),
    );
    // The new link goes with the image it names; the new kernel with its link, in an image of its own.
    expect(report.extra).toEqual([
      {
        image: "extra-vmlinux-next.container",
        files: ["share/kata-containers/vmlinux-7.1-rc3", "share/kata-containers/vmlinux-next.container"],
        neededBy: ["qemu"],
      },
    ]);
    expect(report.version).toBe("4.2.0");
    const host = await hostOf("x86_64");
    const args = ["--host-root", host.root, "--artifacts", `oci-layout:${layout}`, "--shims", "qemu"];
    // The new key is the release's: an override of it is checked against this release, and taken.
    const overrides = path.join(dir, "pin.toml");
    fs.writeFileSync(overrides, '[config.qemu]\n"hypervisor.qemu.guest_numa_nodes" = 1\n');
    const plan = runCli(["plan", ...args, "--overrides", overrides, "--json"]);
    expect(plan.status, plan.stdout).toBe(0);
    expect(checkOf(plan.stdout)?.status, checkOf(plan.stdout)?.message).toBe("pass");
    const run = runCli(["install", ...args]);
    expect(run.status, run.stderr).toBe(0);
    const installed = fs.readFileSync(
      path.join(host.root, goConfigs, "runtimes/qemu/configuration-qemu.toml"),
      "utf8",
    );
    expect(installed).toContain("guest_numa_nodes = 2");
    expect(installed).toContain('kernel = "/opt/kata/share/kata-containers/vmlinux-next.container"');
    expect(fs.readFileSync(path.join(host.root, share, "kata-containers-next.img"), "utf8")).toBe(
      "the next image\n",
    );
    expect(fs.readFileSync(path.join(host.root, share, "vmlinux-next.container"), "utf8")).toBe(
      "the next kernel\n",
    );
  });

  it("a key this release does not have is an error naming key, shim and version; so is a shim it does not ship", async () => {
    const { dir, tarballs } = buildRelease("x86_64");
    made.push(dir);
    const layout = path.join(dir, "layout");
    await splitRelease(tarballs, layout, loadArtifactCatalogue(), "x86_64", "tar");
    const host = await hostOf("x86_64");
    const overrides = path.join(dir, "pin.toml");
    fs.writeFileSync(
      overrides,
      [
        "[config.qemu]",
        '"hypervisor.qemu.default_memmory" = 4096',
        "[config.clh]",
        '"hypervisor.clh.shared_fs" = "virtio-9p"',
        "",
      ].join("\n"),
    );
    const args = ["--host-root", host.root, "--artifacts", `oci-layout:${layout}`, "--overrides", overrides];
    const plan = runCli(["plan", ...args, "--shims", "qemu,clh,qemu-cca"]);
    expect(plan.status).toBe(1);
    expect(plan.stdout).toContain(
      `[ERROR] config-key: overrides ${overrides}:2 config.qemu."hypervisor.qemu.default_memmory" sets hypervisor.qemu.default_memmory for qemu, but Kata 4.1.0's configuration-qemu.toml has no such key`,
    );
    expect(plan.stdout).toContain(
      `sets hypervisor.clh.shared_fs for clh: "virtio-9p" is not one of the values Kata 4.1.0's configuration-clh.toml lists for it: "virtio-fs", "virtio-fs-nydus", "none"`,
    );
    expect(plan.stdout).toMatch(
      /\[ERROR\] unknown-shim: --shims names the shim qemu-cca, but Kata 4.1.0 ships no configuration for it/,
    );
    const run = runCli(["install", ...args, "--shims", "qemu,clh"]);
    expect(run.status).toBe(1);
    expect(snapshot(host.root)).toEqual(host.original);
  });
});
