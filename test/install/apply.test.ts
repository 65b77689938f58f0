// Applying a plan's files and taking them back: transactional, idempotent, and byte for byte.
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { applyChanges } from "../../src/install/apply.js";
import { JournalStore } from "../../src/install/journal.js";
import { uninstallFiles } from "../../src/install/uninstall.js";
import { BLOCK_BEGIN } from "../../src/render/toml-edit.js";
import { amdSnpCrio, intelContainerd16, k3sImportingDropIns } from "../helpers/nodes.js";
import { planOn } from "../helpers/plan.js";
import { buildHost, type NodeSpec, removeTestHosts } from "../helpers/test-host.js";
import { mtimes, snapshot } from "../helpers/tree.js";

afterAll(removeTestHosts);

const storeFor = (host: ReturnType<typeof buildHost>) => new JournalStore(host.host, "/opt/kata/.install");

function containerd2(): NodeSpec {
  const spec = intelContainerd16();
  spec.commands = { "/usr/bin/containerd": 'echo "containerd containerd.io 2.0.4 1a43cb6a"' };
  spec.files = { "/etc/containerd/config.toml": "# admin\nversion = 3\n" };
  return spec;
}

describe.each([
  ["containerd 1.x", intelContainerd16],
  ["containerd 2.x", containerd2],
  ["CRI-O", amdSnpCrio],
  ["k3s", k3sImportingDropIns],
])("install then uninstall on %s", (_name, node) => {
  it("writes exactly the plan, and uninstall gives back every file, mode and owner", async () => {
    const host = buildHost(node());
    const before = snapshot(host.root);
    const { changeset } = await planOn(host.host);
    expect(changeset.changes.length).toBeGreaterThan(0);
    const result = await applyChanges(storeFor(host), changeset.changes);
    expect(result.runtimeChanged).toBe(true);
    for (const c of changeset.changes)
      if (c.link) expect(fs.readlinkSync(path.join(host.root, c.path))).toBe(c.after);
      else expect(fs.readFileSync(path.join(host.root, c.path), "utf8")).toBe(c.after);
    expect((await planOn(host.host)).changeset.changes).toEqual([]);

    const undone = await uninstallFiles(storeFor(host));
    expect(undone.leftEdited).toEqual([]);
    expect(snapshot(host.root)).toEqual(before);
  });
});

describe("idempotency and edits", () => {
  it("a second install of the same plan writes nothing", async () => {
    const host = buildHost(intelContainerd16());
    await applyChanges(storeFor(host), (await planOn(host.host)).changeset.changes);
    const times = mtimes(host.root);
    const again = await applyChanges(storeFor(host), (await planOn(host.host)).changeset.changes);
    expect(again).toEqual({ written: [], removed: [], setAside: [], runtimeChanged: false });
    expect(mtimes(host.root)).toEqual(times);
  });

  it("refuses a plan the node has moved away from, and leaves nothing of it applied", async () => {
    const host = buildHost(intelContainerd16());
    const before = snapshot(host.root);
    const { changeset } = await planOn(host.host);
    const config = path.join(host.root, "/etc/containerd/config.toml");
    fs.appendFileSync(config, "# edited after the plan\n");
    const edited = snapshot(host.root);
    await expect(applyChanges(storeFor(host), changeset.changes)).rejects.toThrow(
      /\/etc\/containerd\/config\.toml changed since the plan was made/,
    );
    expect(snapshot(host.root)).toEqual(edited);
    expect(before).not.toEqual(edited);
  });

  it("keeps the admin's mode and owner on a file it edits", async () => {
    const host = buildHost(intelContainerd16());
    const config = path.join(host.root, "/etc/containerd/config.toml");
    fs.chmodSync(config, 0o640);
    fs.chownSync(config, 1000, 1000);
    await applyChanges(storeFor(host), (await planOn(host.host)).changeset.changes);
    const st = fs.statSync(config);
    expect([st.mode & 0o777, st.uid, st.gid]).toEqual([0o640, 1000, 1000]);
    expect(fs.readFileSync(config, "utf8")).toContain(BLOCK_BEGIN);
  });

  it("an admin's edit after the install is not clobbered: only our block leaves, and it is reported", async () => {
    const host = buildHost(intelContainerd16());
    const original = fs.readFileSync(path.join(host.root, "/etc/containerd/config.toml"), "utf8");
    await applyChanges(storeFor(host), (await planOn(host.host)).changeset.changes);
    const config = path.join(host.root, "/etc/containerd/config.toml");
    fs.writeFileSync(
      config,
      `${fs.readFileSync(config, "utf8")}\n[plugins."io.containerd.grpc.v1.cri".registry]\n  config_path = "/etc/containerd/certs.d"\n`,
    );
    const drop = path.join(
      host.root,
      "/opt/kata/share/defaults/kata-containers/runtimes/qemu/configuration-qemu.toml",
    );
    fs.appendFileSync(drop, "# my note\n");
    const undone = await uninstallFiles(storeFor(host));
    expect(fs.readFileSync(config, "utf8")).toBe(
      `${original}\n[plugins."io.containerd.grpc.v1.cri".registry]\n  config_path = "/etc/containerd/certs.d"\n`,
    );
    expect(undone.leftEdited).toEqual(
      expect.arrayContaining([
        {
          path: "/etc/containerd/config.toml",
          what: "edited after the install: only kata-install's block was removed, the rest kept as it is",
        },
        {
          path: "/opt/kata/share/defaults/kata-containers/runtimes/qemu/configuration-qemu.toml",
          what: "edited after the install: left in place",
        },
      ]),
    );
    expect(fs.existsSync(drop)).toBe(true);
  });

  it("uninstall with nothing installed says so", async () => {
    const host = buildHost(intelContainerd16());
    const before = snapshot(host.root);
    expect((await uninstallFiles(storeFor(host))).nothingInstalled).toBe(true);
    expect(snapshot(host.root)).toEqual(before);
  });
});
