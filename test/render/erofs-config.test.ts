// The erofs snapshotter's settings in kata-install's containerd drop-in: kata-deploy's, in the
// plugin tables of the drop-in's config version. Version 3 files (what containerd 2.x writes) are
// parsed back with smol-toml, as this machine's containerd 1.6 cannot load them; a version 2 drop-in
// is loaded by the real containerd too.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse } from "smol-toml";
import { afterAll, describe, expect, it } from "vitest";
import type { ErofsSetup } from "../../src/decide/decision.js";
import { dig } from "../../src/detect/toml.js";
import { checkErofs } from "../../src/render/erofs-config.js";
import {
  intelContainerd16,
  k0sNode,
  k3sImportingDropIns,
  mkfsErofsScript,
  withFsVerity,
} from "../helpers/nodes.js";
import { changeAt, planOn } from "../helpers/plan.js";
import { containerdOf } from "../helpers/real-tools.js";
import { buildHost, type NodeSpec, removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-erofs-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const SETUP = { EXPERIMENTAL_SETUP_SNAPSHOTTER: "erofs" };
const DROP_IN = "/etc/containerd/conf.d/50-kata-install.toml";
type Table = Record<string, unknown>;

/** Intel with containerd 2.2 and erofs-utils 1.8.2, its main file of config `version` importing conf.d/. */
function containerd22(version = 3): NodeSpec {
  const spec = intelContainerd16();
  spec.commands = {
    "/usr/bin/containerd": 'echo "containerd containerd.io 2.2.0 0123abcd"',
    "/usr/bin/mkfs.erofs": mkfsErofsScript(),
  };
  spec.files = {
    "/etc/containerd/config.toml": `version = ${version}\nimports = ["/etc/containerd/conf.d/*.toml"]\n`,
  };
  return withFsVerity(spec);
}

async function dropInOn(spec: NodeSpec, env: Record<string, string>, file = DROP_IN) {
  const { decision, changeset } = await planOn(buildHost(spec).host, { env });
  const change = changeAt(changeset, file);
  return { decision, change, parsed: parse(change?.after as string) as Table };
}

/** The snapshotter-setup check's status. */
const check = (decision: { checks: Array<{ id: string; status: string }> }) =>
  decision.checks.find((c) => c.id === "snapshotter-setup")?.status;
const plugin = (parsed: Table, name: string) => dig(parsed, ["plugins", name]) as Table | undefined;

describe("containerd 2.2, config version 3: kata-deploy's settings in the version 3 plugin tables", () => {
  it("kata-deploy's defaults (merged, disk, no dm-verity): every table and key", async () => {
    const { change, parsed } = await dropInOn(containerd22(), SETUP);
    expect(change?.reason).toBe(
      "containerd runtime handlers for the chosen shims, and the erofs snapshotter (EXPERIMENTAL_SETUP_SNAPSHOTTER)",
    );
    expect(parsed.version).toBe(3);
    expect(plugin(parsed, "io.containerd.cri.v1.images")?.discard_unpacked_layers).toBe(false);
    expect(plugin(parsed, "io.containerd.service.v1.diff-service")).toEqual({
      default: ["erofs", "walking"],
    });
    expect(plugin(parsed, "io.containerd.snapshotter.v1.erofs")).toEqual({
      enable_fsverity: true,
      set_immutable: true,
      dmverity_mode: "off",
      default_size: "10G",
      max_unmerged_layers: 0,
    });
    expect(plugin(parsed, "io.containerd.differ.v1.erofs")).toEqual({
      enable_dmverity: false,
      mkfs_options: ["-T0", "--mkfs-time", "--sort=none"],
      enable_tar_index: false,
    });
    // The version 2 name of the images setting is not used in a version 3 file.
    expect(plugin(parsed, "io.containerd.grpc.v1.cri")).toBeUndefined();
    // The handlers are there as ever.
    expect(
      Object.keys(
        dig(parsed, ["plugins", "io.containerd.cri.v1.runtime", "containerd", "runtimes"]) as Table,
      ),
    ).toEqual(expect.arrayContaining(["kata-qemu", "kata-clh"]));
  });

  it("unmerged, in memory, with dm-verity: no max_unmerged_layers, default_size 0, dm-verity on in both plugins", async () => {
    const { parsed } = await dropInOn(containerd22(), {
      ...SETUP,
      EROFS_MERGE_MODE: "unmerged",
      EROFS_SNAPSHOTTER_MODE: "memory",
      EROFS_DMVERITY: "dmverity",
    });
    expect(plugin(parsed, "io.containerd.snapshotter.v1.erofs")).toEqual({
      enable_fsverity: true,
      set_immutable: true,
      dmverity_mode: "on",
      default_size: "0",
    });
    expect(plugin(parsed, "io.containerd.differ.v1.erofs")?.enable_dmverity).toBe(true);
  });

  it("a handler mapped to erofs: its snapshotter, on the images side too, beside the erofs settings", async () => {
    const { decision, parsed } = await dropInOn(containerd22(), {
      ...SETUP,
      SHIMS: "qemu-runtime-rs",
      SNAPSHOTTER_HANDLER_MAPPING: "qemu-runtime-rs:erofs",
    });
    expect(decision.checks.filter((c) => c.status === "fail" && c.severity === "error")).toEqual([]);
    const images = plugin(parsed, "io.containerd.cri.v1.images");
    expect(images).toEqual({
      discard_unpacked_layers: false,
      runtime_platforms: { "kata-qemu-runtime-rs": { snapshotter: "erofs" } },
    });
  });

  it("without the variable: no erofs table, and the drop-in as before", async () => {
    const { change, parsed } = await dropInOn(containerd22(), {});
    expect(change?.reason).toBe("containerd runtime handlers for the chosen shims");
    expect(Object.keys(parsed.plugins as Table)).toEqual(["io.containerd.cri.v1.runtime"]);
    expect(change?.after).not.toContain("erofs");
  });
});

describe("config version 2 (containerd 2.2 migrates it in memory): the images setting in the CRI plugin's table", () => {
  it("parsed back, and loaded by the real containerd", async () => {
    const { parsed, change } = await dropInOn(containerd22(2), {
      ...SETUP,
      EROFS_SNAPSHOTTER_MODE: "memory",
    });
    expect(parsed.version).toBe(2);
    expect(
      dig(parsed, ["plugins", "io.containerd.grpc.v1.cri", "containerd", "discard_unpacked_layers"]),
    ).toBe(false);
    expect(plugin(parsed, "io.containerd.cri.v1.images")).toBeUndefined();
    expect(plugin(parsed, "io.containerd.snapshotter.v1.erofs")?.default_size).toBe("0");
    // containerd 1.6 knows the CRI plugin's and the diff service's settings (not erofs's plugins,
    // which it does not dump): the file loads, with them as written.
    const file = path.join(tmp, "v2-drop-in.toml");
    fs.writeFileSync(file, change?.after as string);
    const dumped = parse(
      execFileSync(containerdOf("1.6").containerd, ["--config", file, "config", "dump"], {
        encoding: "utf8",
      }),
    ) as Table;
    expect(
      dig(dumped, ["plugins", "io.containerd.grpc.v1.cri", "containerd", "discard_unpacked_layers"]),
    ).toBe(false);
    expect(dig(dumped, ["plugins", "io.containerd.service.v1.diff-service", "default"])).toEqual([
      "erofs",
      "walking",
    ]);
    expect(
      Object.keys(dig(dumped, ["plugins", "io.containerd.grpc.v1.cri", "containerd", "runtimes"]) as Table),
    ).toEqual(expect.arrayContaining(["kata-qemu", "kata-clh"]));
  });
});

describe("the drop-ins of k3s and k0s carry them too (once their containerd's version is vouched for)", () => {
  const knowingly = { ignorePreflightErrors: ["snapshotter-setup"] };

  it("k3s: config.toml.d/, in its config's version", async () => {
    const { decision, changeset } = await planOn(buildHost(k3sImportingDropIns()).host, {
      env: SETUP,
      flags: knowingly,
    });
    const dropIn = changeAt(
      changeset,
      "/var/lib/rancher/k3s/agent/etc/containerd/config.toml.d/50-kata-install.toml",
    );
    const parsed = parse(dropIn?.after as string) as Table;
    expect(parsed.version).toBe(2);
    expect(
      dig(parsed, ["plugins", "io.containerd.grpc.v1.cri", "containerd", "discard_unpacked_layers"]),
    ).toBe(false);
    expect(plugin(parsed, "io.containerd.snapshotter.v1.erofs")?.max_unmerged_layers).toBe(0);
    expect(check(decision)).toBe("ignored");
  });

  it("k0s: containerd.d/", async () => {
    const { changeset } = await planOn(buildHost(k0sNode()).host, { env: SETUP, flags: knowingly });
    const parsed = parse(
      changeAt(changeset, "/etc/k0s/containerd.d/50-kata-install.toml")?.after as string,
    ) as Table;
    expect(plugin(parsed, "io.containerd.differ.v1.erofs")?.mkfs_options).toEqual([
      "-T0",
      "--mkfs-time",
      "--sort=none",
    ]);
  });
});

describe("containerd 1.x: nothing of erofs in the config.toml it edits in place", () => {
  it("refused, and the plan's config.toml has no erofs table", async () => {
    const { decision, changeset } = await planOn(buildHost(intelContainerd16()).host, { env: SETUP });
    expect(check(decision)).toBe("fail");
    const edited = changeAt(changeset, "/etc/containerd/config.toml")?.after as string;
    expect(edited).toContain("kata-qemu");
    expect(edited).not.toContain("erofs");
  });
});

describe("the parse-back check", () => {
  const decided = <T>(value: T) => ({ value, source: { kind: "default" as const, name: "d" }, beaten: [] });
  const setup = (mergeMode: "merged" | "unmerged"): ErofsSetup => ({
    source: { kind: "env", name: "EXPERIMENTAL_SETUP_SNAPSHOTTER" },
    mergeMode: decided(mergeMode),
    snapshotterMode: decided("disk"),
    dmverity: decided(false),
    fsverity: decided(true),
  });

  it("a setting that does not read back, or a stray max_unmerged_layers, is a template bug", async () => {
    const { parsed } = await dropInOn(containerd22(), SETUP);
    expect(() => checkErofs(parsed, setup("merged"), 3, "t")).not.toThrow();
    const wrong = structuredClone(parsed);
    (plugin(wrong, "io.containerd.snapshotter.v1.erofs") as Table).default_size = "20G";
    expect(() => checkErofs(wrong, setup("merged"), 3, "t")).toThrow(
      /erofs setting plugins.io.containerd.snapshotter.v1.erofs.default_size does not read back as rendered/,
    );
    expect(() => checkErofs(parsed, setup("unmerged"), 3, "t")).toThrow(/max_unmerged_layers is set/);
  });
});
