// Artifacts from a directory source: staged in a version directory, switched in with one rename,
// reachable at Kata's usual paths, replaced by a new version, refused when they hold what they
// should not, and gone again after uninstall.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ArtifactError } from "../../src/artifacts/artifact-error.js";
import { loadArtifactCatalogue } from "../../src/artifacts/catalogue.js";
import { directorySource } from "../../src/artifacts/source.js";
import { recover } from "../../src/install/apply.js";
import { journalFor } from "../../src/install/journal.js";
import { commitSwitch, installArtifacts } from "../../src/install/switch.js";
import { uninstallFiles } from "../../src/install/uninstall.js";
import { artifactDir, SAMPLE_FILES, sampleContent } from "../helpers/artifacts.js";
import { intelContainerd16 } from "../helpers/nodes.js";
import { buildHost, removeTestHosts } from "../helpers/test-host.js";
import { mtimes, snapshot } from "../helpers/tree.js";

afterAll(removeTestHosts);
const catalogue = loadArtifactCatalogue();
const sources: string[] = [];
afterAll(() => {
  for (const dir of sources) fs.rmSync(dir, { recursive: true, force: true });
});
const dirSource = (version?: string) => {
  const dir = artifactDir(version);
  sources.push(dir);
  return { dir, source: directorySource(dir, catalogue) };
};
const NAMES = ["base", "guest-kernel", "meta", "qemu", "virtiofsd"];

describe("artifacts from a directory", () => {
  it("land in a version directory, reachable through current at Kata's usual paths; uninstall takes all back", async () => {
    const host = buildHost(intelContainerd16());
    const before = snapshot(host.root);
    const { source } = dirSource();
    const result = await installArtifacts(journalFor(host.host, "/opt/kata"), "/opt/kata", source, NAMES);
    // Every file and link of those artifacts in the release, links as released.
    const files = NAMES.reduce((n, a) => n + (SAMPLE_FILES[a]?.length ?? 0), 0);
    expect(result).toMatchObject({ switched: true, staged: { copied: true } });
    expect(result.staged?.files).toBeGreaterThan(files);
    const kernel = path.join(host.root, "opt/kata/share/kata-containers/vmlinux.container");
    expect(
      fs.readlinkSync(path.join(host.root, "opt/kata/current/share/kata-containers/vmlinux.container")),
    ).toBe("vmlinux-6.18.35-202");
    expect(fs.readFileSync(kernel, "utf8")).toBe(
      sampleContent("guest-kernel", "share/kata-containers/vmlinux-6.18.35-202", "3.9.0"),
    );
    const qemu = path.join(host.root, "opt/kata/bin/qemu-system-x86_64");
    expect(fs.readFileSync(qemu, "utf8")).toBe(sampleContent("qemu", "bin/qemu-system-x86_64", "3.9.0"));
    expect(fs.statSync(qemu).mode & 0o777).toBe(0o755);
    expect(fs.readlinkSync(path.join(host.root, "opt/kata/current"))).toBe(`versions/${result.staged?.id}`);
    expect(fs.readlinkSync(path.join(host.root, "opt/kata/share/kata-containers"))).toBe(
      "../current/share/kata-containers",
    );
    await uninstallFiles(journalFor(host.host, "/opt/kata"));
    expect(snapshot(host.root)).toEqual(before);
  });

  it("the same artifacts again: nothing copied, nothing switched, nothing touched", async () => {
    const host = buildHost(intelContainerd16());
    const { source } = dirSource();
    await installArtifacts(journalFor(host.host, "/opt/kata"), "/opt/kata", source, NAMES);
    const times = mtimes(host.root);
    const again = await installArtifacts(journalFor(host.host, "/opt/kata"), "/opt/kata", source, NAMES);
    expect(again).toMatchObject({ switched: false, staged: { copied: false } });
    expect(mtimes(host.root)).toEqual(times);
  });

  it("a new version is switched in, and the old one removed", async () => {
    const host = buildHost(intelContainerd16());
    const first = await installArtifacts(
      journalFor(host.host, "/opt/kata"),
      "/opt/kata",
      dirSource("3.9.0").source,
      NAMES,
    );
    const second = await installArtifacts(
      journalFor(host.host, "/opt/kata"),
      "/opt/kata",
      dirSource("3.10.0").source,
      NAMES,
    );
    expect(second.staged?.id).not.toBe(first.staged?.id);
    // The old version stays until the switch is committed (the run's files checked): then it goes.
    expect(fs.readdirSync(path.join(host.root, "opt/kata/versions")).sort()).toEqual(
      [first.staged?.id, second.staged?.id].sort(),
    );
    await commitSwitch(journalFor(host.host, "/opt/kata"), "/opt/kata");
    expect(fs.readFileSync(path.join(host.root, "opt/kata/bin/containerd-shim-kata-v2"), "utf8")).toBe(
      sampleContent("base", "bin/containerd-shim-kata-v2", "3.10.0"),
    );
    expect(fs.readdirSync(path.join(host.root, "opt/kata/versions"))).toEqual([second.staged?.id]);
  });

  it("a layout split before go-tools and the kernel extras were images of their own installs: the bigger base and kernel", async () => {
    const host = buildHost(intelContainerd16());
    const { dir, source } = dirSource();
    // As an earlier kata-install split it: the tools in base, vmlinuz, config and System.map in
    // the kernel's image, and no image of their own.
    for (const [from, to] of [
      ["go-tools", "base"],
      ["guest-kernel-vmlinuz", "guest-kernel"],
      ["guest-kernel-extras", "guest-kernel"],
    ] as const) {
      fs.cpSync(path.join(dir, from), path.join(dir, to), {
        recursive: true,
        verbatimSymlinks: true,
      });
      fs.rmSync(path.join(dir, from), { recursive: true });
    }
    const result = await installArtifacts(journalFor(host.host, "/opt/kata"), "/opt/kata", source, NAMES);
    expect(result).toMatchObject({ switched: true });
    expect(fs.readFileSync(path.join(host.root, "opt/kata/bin/kata-runtime"), "utf8")).toBe(
      sampleContent("go-tools", "bin/kata-runtime", "3.9.0"),
    );
    expect(
      fs.readlinkSync(path.join(host.root, "opt/kata/current/share/kata-containers/vmlinuz.container")),
    ).toBe("vmlinuz-6.18.35-202");
    expect(fs.existsSync(path.join(host.root, "opt/kata/share/kata-containers/System.map-6.18.35-202"))).toBe(
      true,
    );
  });

  it("refuses a file the artifact should not hold, or a link, naming it; nothing is written", async () => {
    const host = buildHost(intelContainerd16());
    const before = snapshot(host.root);
    const { dir, source } = dirSource();
    fs.writeFileSync(path.join(dir, "qemu/opt/kata/bin/kata-runtime"), "an impostor");
    await expect(
      installArtifacts(journalFor(host.host, "/opt/kata"), "/opt/kata", source, NAMES),
    ).rejects.toThrow(
      new ArtifactError(
        `dir:${dir}: qemu/opt/kata/bin/kata-runtime cannot be in image "qemu": it is artifact "go-tools"'s (artifacts/catalogue.toml)`,
      ),
    );
    fs.rmSync(path.join(dir, "qemu/opt/kata/bin/kata-runtime"));
    fs.symlinkSync("/etc/shadow", path.join(dir, "qemu/opt/kata/bin/qemu-system-aarch64"));
    await expect(
      installArtifacts(journalFor(host.host, "/opt/kata"), "/opt/kata", source, NAMES),
    ).rejects.toThrow(
      /qemu\/opt\/kata\/bin\/qemu-system-aarch64: an absolute link \(to \/etc\/shadow\) would point out of the prefix/,
    );
    fs.rmSync(path.join(dir, "qemu/opt/kata/bin/qemu-system-aarch64"));
    fs.symlinkSync("../../../../etc/shadow", path.join(dir, "qemu/opt/kata/bin/qemu-system-aarch64"));
    await expect(
      installArtifacts(journalFor(host.host, "/opt/kata"), "/opt/kata", source, NAMES),
    ).rejects.toThrow(/its link \(to \.\.\/\.\.\/\.\.\/\.\.\/etc\/shadow\) points out of the prefix/);
    expect(snapshot(host.root)).toEqual(before);
  });

  it.each(["stage:begin", "stage:end", "switch:before", "switch:next-made", "switch:after"])(
    "killed at %s: recovery leaves the node as it was",
    async (point) => {
      const host = buildHost(intelContainerd16());
      const before = snapshot(host.root);
      const { dir } = dirSource();
      const changes = path.join(path.dirname(dir), `${path.basename(dir)}.changes.json`);
      fs.writeFileSync(changes, "[]");
      sources.push(changes);
      const run = spawnSync(
        process.execPath,
        [
          "--import",
          "tsx",
          path.resolve("test/helpers/apply-child.ts"),
          host.root,
          changes,
          dir,
          NAMES.join(","),
        ],
        {
          env: { ...process.env, KATA_INSTALL_CRASH_AT: point },
          encoding: "utf8",
        },
      );
      expect(run.signal, run.stderr).toBe("SIGKILL");
      const store = journalFor(host.host, "/opt/kata");
      if (point === "switch:after" || point === "switch:next-made") {
        // Switched (or nearly): the switch is not committed, so recovery takes it back too, and
        // uninstall finds nothing left: both give the node back.
        await uninstallFiles(store);
      } else {
        // Cut short: recovery takes back the staged copy, the journal and the directories made.
        expect(await recover(store)).toBe(true);
      }
      expect(snapshot(host.root)).toEqual(before);
      expect(fs.existsSync(path.join(host.root, "opt/kata/current"))).toBe(false);
    },
  );
});

describe("installed files are tame", () => {
  it("an artifact file shipped setuid, setgid and world-writable lands 0755, owned by root", async () => {
    const host = buildHost(intelContainerd16());
    const { dir, source } = dirSource();
    const shipped = path.join(dir, "qemu/opt/kata/bin/qemu-system-x86_64");
    fs.chmodSync(shipped, 0o6777);
    fs.chownSync(shipped, 1000, 1000);
    const dataFile = path.join(dir, "guest-kernel/opt/kata/share/kata-containers/vmlinux-6.18.35-202");
    fs.chmodSync(dataFile, 0o666);
    await installArtifacts(journalFor(host.host, "/opt/kata"), "/opt/kata", source, NAMES);
    const qemu = fs.statSync(path.join(host.root, "opt/kata/bin/qemu-system-x86_64"));
    expect((qemu.mode & 0o7777).toString(8)).toBe("755");
    expect([qemu.uid, qemu.gid]).toEqual([0, 0]);
    const data = fs.statSync(path.join(host.root, "opt/kata/share/kata-containers/vmlinux-6.18.35-202"));
    expect((data.mode & 0o7777).toString(8)).toBe("644");
  });
});
