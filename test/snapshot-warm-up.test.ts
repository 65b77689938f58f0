// The start-up snapshot's warm-up (src/snapshot-warm-up.ts): its made-up node must go through every
// stage of a plan, or the blob keeps only the code of a plan that stopped early (and every start
// compiles the rest again); and it may start no process, which a snapshot's build cannot.
import fs from "node:fs";
import os from "node:os";
import { describe, expect, it } from "vitest";
import { warmUpPlan } from "../src/snapshot-warm-up.js";

const scratch = () => fs.readdirSync(os.tmpdir()).filter((d) => d.startsWith("kata-install-snapshot-"));

describe("the snapshot's warm-up plan", () => {
  it("plans the qemu shim through every stage, from the probe cache, and leaves nothing behind", async () => {
    const before = scratch();
    const { json, text, facts } = await warmUpPlan();
    const plan = JSON.parse(json) as {
      checks: Array<{ id: string; status: string }>;
      shims: Array<{ name: string }>;
      artifacts: Array<{ name: string }>;
      changes: unknown[];
    };
    expect(plan.shims.map((s) => s.name)).toEqual(["qemu"]);
    // Every artifact its configuration names, found in the made-up release's images.
    expect(plan.artifacts.map((a) => a.name)).toEqual(
      expect.arrayContaining(["meta", "base", "qemu", "guest-kernel", "guest-image", "virtiofsd"]),
    );
    // Only what a made-up node must have: /dev/kvm is a device only mknod(2) makes (its error
    // ignored, the shim asked for), containerd is not running. One more would mean a stage the
    // warm-up no longer reaches as a node would.
    const notPassed = plan.checks.filter((c) => c.status !== "pass").map((c) => `${c.id} ${c.status}`);
    expect(notPassed.sort()).toEqual([
      "kvm-device ignored",
      "override-contradicts-facts fail",
      "runtime-socket fail",
    ]);
    expect(plan.changes.length).toBeGreaterThan(0);
    expect(text).toContain("+ qemu: pinned by flag --shims");
    // containerd's version came from the probe cache: its file there is an empty script.
    expect(facts).toMatch(/runtime +containerd 2\.0\.4/);
    expect(scratch()).toEqual(before);
  });
});
