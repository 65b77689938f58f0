// The plan as a value: its diffs, applied with GNU patch inside the host root, give exactly the
// Changeset's new bytes; a host on which the plan was applied plans no change.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { planDocument } from "../../src/output/plan.js";
import type { Changeset } from "../../src/render/changeset.js";
import { STATE_FILE } from "../../src/render/render.js";
import { intelContainerd16 } from "../helpers/nodes.js";
import { planOn } from "../helpers/plan.js";
import { buildHost, removeTestHosts, type TestHost } from "../helpers/test-host.js";

afterAll(removeTestHosts);

/** What install will do with files: write the new bytes, delete the deleted, record the artifacts. */
function apply(host: TestHost, changeset: Changeset): void {
  for (const c of changeset.changes) {
    const file = path.join(host.root, c.path);
    if (c.after === null) fs.rmSync(file);
    else {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, c.after);
    }
  }
  const artifacts = Object.fromEntries(
    changeset.actions.filter((a) => a.kind === "pull-artifact").map((a) => [a.target, { version: "test" }]),
  );
  host.write(`/opt/kata/${STATE_FILE}`, JSON.stringify({ artifacts }));
}

describe("the printed diffs", () => {
  it("apply with patch -p1 in a copy of the host, giving the Changeset's new bytes", async () => {
    const host = buildHost(intelContainerd16());
    // An earlier install's configuration of a shim this plan no longer wants: deleted by the plan.
    host.write(
      "/opt/kata/share/defaults/kata-containers/runtimes/fc/configuration-fc.toml",
      "[hypervisor.firecracker]\n",
    );
    const { decision, changeset } = await planOn(host.host);
    const doc = planDocument(decision, changeset);
    expect(doc.changes.map((c) => c.action)).toEqual(expect.arrayContaining(["create", "modify", "delete"]));
    const copy = `${host.root}-copy`;
    // Files only: the copy needs no device nodes or sockets, which cpSync cannot copy anyway.
    fs.cpSync(host.root, copy, {
      recursive: true,
      filter: (src) =>
        !src.startsWith(path.join(host.root, "dev")) && !src.startsWith(path.join(host.root, "run")),
    });
    try {
      const patchText = doc.changes.map((c) => c.diff).join("");
      execFileSync("patch", ["-p1", "--batch", "--forward", "-s"], { cwd: copy, input: patchText });
      for (const c of changeset.changes) {
        const file = path.join(copy, c.path);
        if (c.after === null) expect(fs.existsSync(file)).toBe(false);
        else expect(fs.readFileSync(file, "utf8")).toBe(c.after);
      }
    } finally {
      fs.rmSync(copy, { recursive: true, force: true });
    }
  });
});

describe("plan after install", () => {
  it("shows no change and no action", async () => {
    const host = buildHost(intelContainerd16());
    const first = await planOn(host.host, { env: { DEBUG: "true" } });
    expect(first.changeset.changes.length).toBeGreaterThan(5);
    expect(first.changeset.actions.map((a) => a.kind)).toContain("restart-runtime");
    apply(host, first.changeset);
    const second = await planOn(host.host, { env: { DEBUG: "true" } });
    expect(second.changeset).toEqual({ changes: [], actions: [] });
  });

  it("a changed decision changes only what it touches, and a dropped shim's files go", async () => {
    const host = buildHost(intelContainerd16());
    apply(host, (await planOn(host.host)).changeset);
    const next = await planOn(host.host, {
      overrides: 'shims = ["qemu", "clh"]\n[config.qemu]\n"hypervisor.qemu.default_memory" = 4096\n',
    });
    const byPath = Object.fromEntries(
      next.changeset.changes.map((c) => [
        c.path.replace("/opt/kata/share/defaults/kata-containers/runtimes/", "…/"),
        c.action,
      ]),
    );
    expect(byPath["…/qemu/config.d/50-kata-install.toml"]).toBe("create");
    expect(byPath["…/dragonball/configuration-dragonball.toml"]).toBe("delete");
    expect(byPath["/etc/containerd/config.toml"]).toBe("modify");
    expect(byPath["…/qemu/configuration-qemu.toml"]).toBeUndefined();
    expect(next.changeset.actions).toEqual([
      {
        kind: "restart-runtime",
        target: "containerd",
        reason: "containerd reads its runtime handlers only at start",
      },
    ]);
  });
});
