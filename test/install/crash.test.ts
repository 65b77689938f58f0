// kill -9 at any point of an install: the next install finishes it (after rolling the cut one
// back) or the next uninstall restores the node, byte for byte, never something between.
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { applyChanges, recover } from "../../src/install/apply.js";
import { JournalStore } from "../../src/install/journal.js";
import { uninstallFiles } from "../../src/install/uninstall.js";
import { intelContainerd16 } from "../helpers/nodes.js";
import { planOn } from "../helpers/plan.js";
import { buildHost, removeTestHosts } from "../helpers/test-host.js";
import { snapshot, type TreeSnapshot } from "../helpers/tree.js";

afterAll(removeTestHosts);

/** The tree without kata-install's own bookkeeping, which differs by run (ids, backups). */
const visible = (tree: TreeSnapshot) =>
  Object.fromEntries(Object.entries(tree).filter(([p]) => !p.startsWith("opt/kata/.install")));

function crashAt(root: string, changesFile: string, point: string): ReturnType<typeof spawnSync> {
  return spawnSync(
    process.execPath,
    ["--import", "tsx", path.resolve("test/helpers/apply-child.ts"), root, changesFile],
    {
      env: { ...process.env, KATA_INSTALL_CRASH_AT: point },
      encoding: "utf8",
      timeout: 60_000,
    },
  );
}

describe("an install killed at any point", async () => {
  // The reference states: the node before, and after one uninterrupted install.
  const reference = buildHost(intelContainerd16());
  const original = snapshot(reference.root);
  const { changeset } = await planOn(reference.host);
  await applyChanges(new JournalStore(reference.host, "/opt/kata/.install"), changeset.changes);
  const installed = visible(snapshot(reference.root));
  const changesFile = `${reference.root}.changes.json`;
  fs.writeFileSync(changesFile, JSON.stringify(changeset.changes));
  afterAll(() => fs.rmSync(changesFile, { force: true }));

  const last = changeset.changes.length - 1;
  const points = [
    "dirs:unborn",
    "begin",
    "step:0:before-write",
    "step:0:after-write",
    "step:2:after-write",
    `step:${last}:before-write`,
    `step:${last}:after-write`,
    "before-commit",
    "after-commit",
  ];

  it.each(points)("at %s: the next install completes it, the next uninstall undoes it", async (point) => {
    for (const next of ["install", "uninstall"] as const) {
      const host = buildHost(intelContainerd16());
      const run = crashAt(host.root, changesFile, point);
      expect(run.signal, run.stderr as string).toBe("SIGKILL");
      const store = new JournalStore(host.host, "/opt/kata/.install");
      if (next === "install") {
        // As `install` does: take back what was cut short, then plan, then apply.
        expect(await recover(store)).toBe(point !== "after-commit" && point !== "dirs:unborn");
        await applyChanges(store, (await planOn(host.host)).changeset.changes);
        expect(visible(snapshot(host.root))).toEqual(installed);
      } else {
        await uninstallFiles(store);
        expect(snapshot(host.root)).toEqual(original);
      }
    }
  });

  it("a write killed halfway leaves a temp file, which the recovery removes", async () => {
    const host = buildHost(intelContainerd16());
    const run = crashAt(host.root, changesFile, `step:${last}:before-write`);
    expect(run.signal).toBe("SIGKILL");
    const runtimeFile = changeset.changes.find((c) => c.role === "runtime")?.path as string;
    const temp = path.join(
      host.root,
      path.dirname(runtimeFile),
      `.${path.basename(runtimeFile)}.kata-install-4242`,
    );
    fs.writeFileSync(temp, "half a file");
    expect(await recover(new JournalStore(host.host, "/opt/kata/.install"))).toBe(true);
    expect(fs.existsSync(temp)).toBe(false);
    expect(snapshot(host.root)).toEqual(original);
  });

  it("a saved copy killed halfway leaves a temp file in original/ and txn/, which uninstall removes", async () => {
    for (const next of ["recover", "uninstall"] as const) {
      const host = buildHost(intelContainerd16());
      const run = crashAt(host.root, changesFile, "step:0:before-write");
      expect(run.signal).toBe("SIGKILL");
      const temps = ["original", "txn"].map((kind) =>
        path.join(host.root, "opt/kata/.install", kind, `.${randomUUID()}.kata-install-4242-0123abcd`),
      );
      for (const temp of temps) {
        fs.mkdirSync(path.dirname(temp), { recursive: true });
        fs.writeFileSync(temp, "half a copy");
      }
      // A name that is not one kata-install gives stays where it is (the recover pass looks).
      const stranger = path.join(host.root, "opt/kata/.install/original/.notes.kata-install-1");
      if (next === "recover") fs.writeFileSync(stranger, "the admin's");
      const store = new JournalStore(host.host, "/opt/kata/.install");
      if (next === "recover") {
        expect(await recover(store)).toBe(true);
        expect(fs.readFileSync(stranger, "utf8")).toBe("the admin's");
      } else {
        await uninstallFiles(store);
        expect(snapshot(host.root)).toEqual(original);
      }
      for (const temp of temps) expect(fs.existsSync(temp), temp).toBe(false);
    }
  });
});
