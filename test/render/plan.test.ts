// The plan as a value: its diffs, applied with GNU patch inside the host root, give exactly the
// Changeset's new bytes; a host on which the plan was applied plans no change.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { parse } from "smol-toml";
import { afterAll, describe, expect, it } from "vitest";
import { loadArtifactCatalogue } from "../../src/artifacts/catalogue.js";
import { directorySource } from "../../src/artifacts/source.js";
import { applyChanges } from "../../src/install/apply.js";
import { journalFor } from "../../src/install/journal.js";
import { commitSwitch, installArtifacts } from "../../src/install/switch.js";
import { planDocument } from "../../src/output/plan.js";
import { artifactDir } from "../helpers/artifacts.js";
import { intelContainerd16 } from "../helpers/nodes.js";
import { planOn } from "../helpers/plan.js";
import { buildHost, removeTestHosts, type TestHost } from "../helpers/test-host.js";

afterAll(removeTestHosts);

const artifacts = artifactDir();
afterAll(() => fs.rmSync(artifacts, { recursive: true, force: true }));
const source = directorySource(artifacts, loadArtifactCatalogue());

/** What install does, less the runtime restart: artifacts into place, then the plan's files. */
async function apply(host: TestHost, planned: Awaited<ReturnType<typeof planOn>>): Promise<void> {
  const store = journalFor(host.host, "/opt/kata");
  const names = planned.decision.artifacts.filter((a) => a.from === "bundled").map((a) => a.name);
  const switched = await installArtifacts(store, "/opt/kata", source, names);
  await applyChanges(store, planned.changeset.changes, { withSwitch: switched.switched });
  await commitSwitch(store, "/opt/kata");
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
      // Links too: the plan says them as git does, and patch makes them.
      expect(changeset.changes.some((c) => c.link)).toBe(true);
      for (const c of changeset.changes) {
        const file = path.join(copy, c.path);
        if (c.after === null) expect(fs.existsSync(file)).toBe(false);
        else if (c.link) expect(fs.readlinkSync(file)).toBe(c.after);
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
    await apply(host, first);
    const second = await planOn(host.host, { env: { DEBUG: "true" } });
    expect(second.changeset).toEqual({ changes: [], actions: [] });
  });

  it("DEBUG off again: the debug handlers' files go", async () => {
    const host = buildHost(intelContainerd16());
    await apply(host, await planOn(host.host, { env: { DEBUG: "true" } }));
    const { changeset } = await planOn(host.host);
    const gone = changeset.changes.filter((c) => c.path.includes("/custom-runtimes/"));
    expect(gone.length).toBeGreaterThan(0);
    expect(gone.every((c) => c.action === "delete")).toBe(true);
    const main = changeset.changes.find((c) => c.path === "/etc/containerd/config.toml")?.after as string;
    expect(main).not.toContain("kata-qemu-debug");
    expect((parse(main) as { debug?: unknown }).debug).toBeUndefined();
  });

  it("a changed decision changes only what it touches, and a dropped shim's files go", async () => {
    const host = buildHost(intelContainerd16());
    await apply(host, await planOn(host.host));
    const next = await planOn(host.host, {
      overrides: 'shims = ["qemu", "clh"]\n[config.qemu]\n"hypervisor.qemu.default_memory" = 4096\n',
    });
    const byPath = Object.fromEntries(
      next.changeset.changes.map((c) => [
        c.path.replace(/^\/opt\/kata\/share\/defaults\/kata-containers\/(runtime-rs\/)?runtimes\//, "…/"),
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
