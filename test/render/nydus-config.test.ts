// nydus-for-kata-tee's side of kata-install's containerd drop-in: kata-deploy's proxy plugin and
// snapshot annotations, in the tables of the drop-in's config version. Version 3 parsed back (this
// machine's containerd 1.6 cannot load it); version 2 loaded by the real containerd too. With erofs
// beside it, the images plugin's table is written once, holding both.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse } from "smol-toml";
import { afterAll, describe, expect, it } from "vitest";
import { dig } from "../../src/detect/toml.js";
import { intelContainerd16, mkfsErofsScript } from "../helpers/nodes.js";
import { changeAt, planOn } from "../helpers/plan.js";
import { containerdOf } from "../helpers/real-tools.js";
import { buildHost, type NodeSpec, removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-nydus-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const SOURCE = path.resolve(import.meta.dirname, "../fixtures/nydus-snapshotter");
const SETUP = { EXPERIMENTAL_SETUP_SNAPSHOTTER: "nydus", KATA_INSTALL_NYDUS_SNAPSHOTTER_DIR: SOURCE };
const DROP_IN = "/etc/containerd/conf.d/50-kata-install.toml";
type Table = Record<string, unknown>;

/** Intel with containerd 2.2 (and erofs-utils), its main file of config `version` importing conf.d/. */
function containerd22(version = 3): NodeSpec {
  const spec = intelContainerd16();
  spec.commands = {
    "/usr/bin/containerd": 'echo "containerd containerd.io 2.2.0 0123abcd"',
    "/usr/bin/mkfs.erofs": mkfsErofsScript(),
  };
  spec.files = {
    "/etc/containerd/config.toml": `version = ${version}\nimports = ["/etc/containerd/conf.d/*.toml"]\n`,
  };
  spec.kernel.available = [...(spec.kernel.available ?? []), "erofs"];
  return spec;
}

async function dropInOn(spec: NodeSpec, env: Record<string, string>) {
  const { decision, changeset } = await planOn(buildHost(spec).host, {
    env: { SHIMS: "qemu qemu-tdx", ...env },
  });
  const change = changeAt(changeset, DROP_IN);
  return { decision, changeset, change, parsed: parse(change?.after as string) as Table };
}

const PROXY = {
  type: "snapshot",
  address: "/run/nydus-for-kata-tee/containerd-nydus-grpc.sock",
  exports: { root: "/var/lib/nydus-for-kata-tee" },
};

describe("config version 3: the images plugin's annotations, the proxy plugin", () => {
  it("kata-deploy's tables, and the TEE shim's handler on the instance (the images side too)", async () => {
    const { change, parsed } = await dropInOn(containerd22(), SETUP);
    expect(change?.reason).toBe(
      "containerd runtime handlers for the chosen shims, and the nydus snapshotter's proxy plugin nydus-for-kata-tee (EXPERIMENTAL_SETUP_SNAPSHOTTER)",
    );
    expect(dig(parsed, ["proxy_plugins", "nydus-for-kata-tee"])).toEqual(PROXY);
    expect(dig(parsed, ["plugins", "io.containerd.cri.v1.images"])).toEqual({
      disable_snapshot_annotations: false,
      runtime_platforms: { "kata-qemu-tdx": { snapshotter: "nydus-for-kata-tee" } },
    });
    expect(
      dig(parsed, [
        "plugins",
        "io.containerd.cri.v1.runtime",
        "containerd",
        "runtimes",
        "kata-qemu-tdx",
        "snapshotter",
      ]),
    ).toBe("nydus-for-kata-tee");
  });

  it("with erofs: one images table holding both settings", async () => {
    const { change, parsed } = await dropInOn(containerd22(), {
      ...SETUP,
      EXPERIMENTAL_SETUP_SNAPSHOTTER: "erofs,nydus",
    });
    expect(String(change?.after).match(/^\[plugins\."io\.containerd\.cri\.v1\.images"\]$/gm)).toHaveLength(1);
    expect(dig(parsed, ["plugins", "io.containerd.cri.v1.images", "discard_unpacked_layers"])).toBe(false);
    expect(dig(parsed, ["plugins", "io.containerd.cri.v1.images", "disable_snapshot_annotations"])).toBe(
      false,
    );
    expect(dig(parsed, ["proxy_plugins", "nydus-for-kata-tee"])).toEqual(PROXY);
  });

  it("the unit and nydus's configuration rendered from kata-install's templates; the binaries hashed, not read as text", async () => {
    const { changeset } = await dropInOn(containerd22(), SETUP);
    const unit = changeAt(changeset, "/etc/systemd/system/nydus-for-kata-tee.service");
    expect(unit?.after).toContain(
      "ExecStart=/opt/kata/nydus-for-kata-tee/containerd-nydus-grpc --config /opt/kata/nydus-for-kata-tee/config-guest-pulling.toml --log-to-stdout\n",
    );
    const grpc = changeAt(changeset, "/opt/kata/nydus-for-kata-tee/containerd-nydus-grpc");
    expect(grpc).toMatchObject({
      action: "create",
      mode: 0o755,
      blob: { from: `${SOURCE}/containerd-nydus-grpc` },
    });
    expect(
      changeAt(changeset, "/etc/systemd/system/containerd.service.wants/nydus-for-kata-tee.service"),
    ).toMatchObject({
      link: true,
      after: "/etc/systemd/system/nydus-for-kata-tee.service",
    });
  });
});

describe("config version 2: the annotations in the CRI plugin's containerd table", () => {
  it("parsed back, and loaded by the real containerd with the proxy plugin as written", async () => {
    const { parsed, change } = await dropInOn(containerd22(2), SETUP);
    expect(parsed.version).toBe(2);
    const runtimes = ["plugins", "io.containerd.grpc.v1.cri", "containerd", "runtimes"];
    expect(dig(parsed, [...runtimes, "kata-qemu-tdx", "snapshotter"])).toBe("nydus-for-kata-tee");
    expect(
      dig(parsed, ["plugins", "io.containerd.grpc.v1.cri", "containerd", "disable_snapshot_annotations"]),
    ).toBe(false);
    expect(dig(parsed, ["plugins", "io.containerd.cri.v1.images"])).toBeUndefined();
    const file = path.join(tmp, "v2-drop-in.toml");
    fs.writeFileSync(file, change?.after as string);
    const dumped = parse(
      execFileSync(containerdOf("1.6").containerd, ["--config", file, "config", "dump"], {
        encoding: "utf8",
      }),
    ) as Table;
    expect(dig(dumped, ["proxy_plugins", "nydus-for-kata-tee"])).toMatchObject({
      type: "snapshot",
      address: "/run/nydus-for-kata-tee/containerd-nydus-grpc.sock",
    });
    expect(
      dig(dumped, ["plugins", "io.containerd.grpc.v1.cri", "containerd", "disable_snapshot_annotations"]),
    ).toBe(false);
    // A handler's own snapshotter is containerd 1.7's: 1.6 does not dump it (parsed back above).
    expect(
      Object.keys(dig(dumped, ["plugins", "io.containerd.grpc.v1.cri", "containerd", "runtimes"]) as Table),
    ).toEqual(expect.arrayContaining(["kata-qemu", "kata-qemu-tdx"]));
  });
});
