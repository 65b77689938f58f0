// The saved plan's format: loaded with every fault named by file and key, and compared with the plan
// made again, each difference said.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  differences,
  parseSavedPlan,
  planAgainCommand,
  SavedPlan,
  SavedPlanError,
} from "../../src/install/saved-plan.js";
import { readmeFields, schemaFields } from "../helpers/schema-fields.js";

const h = (digit: string) => digit.repeat(64);
const CONFIG = "/etc/containerd/config.toml";
const KATA = "/opt/kata/share/defaults/kata-containers/runtimes/qemu/configuration-qemu.toml";

function sample(): SavedPlan {
  return {
    schemaVersion: 1,
    options: {
      overrides: null,
      shims: "qemu",
      defaultShim: null,
      ignorePreflightErrors: null,
      artifacts: "dir:/srv/kata",
      artifactsTag: "latest",
    },
    inputs: {
      version: "0.1.0",
      facts: { sha256: h("a"), paths: { arch: h("b"), "kvm.device": h("c") } },
      data: { "rules/shims.toml": h("d") },
      overrides: { path: "/etc/kata-containers/kata-install.toml", sha256: null },
      environment: { SHIMS: null, DEBUG: h("e") },
      artifacts: "0123456789abcdef",
    },
    plan: {
      checks: [{ id: "kvm", severity: "error", status: "pass", message: "ok", rule: "host" }],
      shims: [{ name: "qemu", reason: "runs" }],
      dropped: [],
      artifacts: [{ name: "base", reason: "needed by qemu", from: "bundled" }],
      changes: [
        {
          path: CONFIG,
          action: "modify",
          reason: "handlers",
          diff: "",
          beforeHash: h("1"),
          afterHash: h("2"),
        },
        { path: KATA, action: "create", reason: "qemu", diff: "", beforeHash: null, afterHash: h("3") },
      ],
      actions: [{ kind: "restart-runtime", target: "containerd", reason: "reads handlers at start" }],
    },
  };
}
const asOnNode = { [CONFIG]: h("1"), [KATA]: null };

describe("parseSavedPlan", () => {
  it("reads the format docs/commands.md's table documents, field for field", () => {
    const doc = fs.readFileSync(path.resolve("docs/commands.md"), "utf8");
    expect(readmeFields(doc, "### The saved plan file")).toEqual(schemaFields(SavedPlan, ["plan"]));
  });

  it("reads back what it is given", () => {
    expect(parseSavedPlan("p.json", JSON.stringify(sample()))).toEqual(sample());
  });

  it("names the file and each key at fault, unknown keys too", () => {
    const bad = sample() as unknown as Record<string, unknown> & {
      plan: { changes: Array<{ afterHash: string }> };
    };
    bad.plan.changes[0] = { ...bad.plan.changes[0], afterHash: "beef" } as never;
    bad.extra = true;
    let error: unknown;
    try {
      parseSavedPlan("node-1.plan.json", JSON.stringify(bad));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SavedPlanError);
    const message = (error as Error).message;
    expect(message).toMatch(/^node-1\.plan\.json: not a saved plan this kata-install can apply:\n/);
    expect(message).toContain("  - plan.changes[0].afterHash: expected a sha256, 64 hex digits");
    expect(message).toMatch(/ {2}- \(document\): .*"extra"/);
  });

  it("says another format version as such, and bad JSON as such", () => {
    expect(() => parseSavedPlan("p.json", JSON.stringify({ ...sample(), schemaVersion: 2 }))).toThrow(
      "p.json: not a saved plan this kata-install can apply:\n  - schemaVersion: 2, and this kata-install reads 1: make the plan again with it",
    );
    expect(() => parseSavedPlan("p.json", "{")).toThrow(
      /^p\.json: not a saved plan .*\n {2}- invalid JSON: /,
    );
  });
});

describe("differences", () => {
  it("none when the plan made again is the same and the files are as they were", () => {
    expect(differences(sample(), sample(), asOnNode)).toEqual([]);
  });

  it("names each input that moved", () => {
    const now = sample();
    now.inputs.version = "0.2.0";
    now.inputs.data["rules/shims.toml"] = h("f");
    now.inputs.overrides.sha256 = h("9");
    now.inputs.environment = { SHIMS: h("8"), DEBUG: null };
    now.inputs.facts = { sha256: h("7"), paths: { arch: h("b"), "kvm.device": h("6") } };
    now.inputs.artifacts = "fedcba9876543210";
    expect(differences(sample(), now, asOnNode)).toEqual([
      "kata-install 0.1.0 made the plan; this is kata-install 0.2.0",
      "kata-install's data: rules/shims.toml changed",
      `overrides file /etc/kata-containers/kata-install.toml changed since the plan (sha256 absent → ${"9".repeat(16)}…)`,
      "environment: DEBUG is unset now",
      "environment: SHIMS is set now",
      "facts: kvm.device changed",
      "artifacts: the plan pulls version 0123456789abcdef; made again, it pulls fedcba9876543210",
    ]);
  });

  it("names a file that changed on the node, and not again as a change of the plan", () => {
    const now = sample();
    (now.plan.changes[0] as { afterHash: string }).afterHash = h("4");
    expect(differences(sample(), now, { ...asOnNode, [CONFIG]: h("5") })).toEqual([
      `${CONFIG} changed since the plan (sha256 ${"1".repeat(16)}… → ${"5".repeat(16)}…)`,
    ]);
    expect(differences(sample(), sample(), { [CONFIG]: h("1"), [KATA]: h("6") })).toEqual([
      `${KATA} changed since the plan (sha256 absent → ${"6".repeat(16)}…)`,
    ]);
  });

  it("names what the plan made again does otherwise: files and actions", () => {
    const now = sample();
    now.plan.changes = [
      { ...(now.plan.changes[1] as SavedPlan["plan"]["changes"][number]), afterHash: h("4") },
      { path: "/etc/x.toml", action: "create", reason: "", diff: "", beforeHash: null, afterHash: h("5") },
    ];
    now.plan.actions = [{ kind: "pull-artifact", target: "qemu", reason: "needed" }];
    expect(differences(sample(), now, asOnNode)).toEqual([
      `the plan no longer modifies ${CONFIG}`,
      "the plan now also creates /etc/x.toml",
      `the plan now creates ${KATA} with other content (sha256 ${"3".repeat(16)}… → ${"4".repeat(16)}…)`,
      "the plan no longer does restart-runtime containerd",
      "the plan now also does pull-artifact qemu",
    ]);
  });

  it("names a fact that became a table once, not each of its keys", () => {
    const now = sample();
    now.inputs.facts = {
      sha256: h("7"),
      paths: { arch: h("b"), "kvm.device": h("c"), "hypervisors.qemu.path": h("2") },
    };
    const saved = sample();
    saved.inputs.facts.paths["hypervisors.qemu"] = h("0");
    expect(differences(saved, now, asOnNode)).toEqual(["facts: hypervisors.qemu changed"]);
  });

  it("names what was reviewed and is not so now, when nothing else explains it: an edited file", () => {
    const edited = sample();
    (edited.plan.changes[0] as { diff: string }).diff = "+ a harmless line\n";
    (edited.plan.checks[0] as { message: string }).message = "all is well";
    expect(differences(edited, sample(), asOnNode)).toEqual([
      // A check says what it says now: the node may have changed where the hashes do not look.
      "the check kvm is not as it was when the plan was made: now pass (error): ok (it was pass (error): all is well) — the node changed where the plan's hashes do not look (an admin's drop-in, a file a configuration names), or the plan file was edited",
      `the saved plan's "changes" entry ${CONFIG} (diff) is not what the plan made again shows (was the file edited?)`,
    ]);
    // An entry gone or added is said so; the same entries in another order, of the list.
    const dropped = sample();
    dropped.plan.shims = [];
    expect(differences(dropped, sample(), asOnNode)).toEqual([
      'the plan made again has a "shims" entry qemu that the saved plan does not (was the file edited?)',
    ]);
    const reordered = sample();
    reordered.plan.changes.reverse();
    expect(differences(reordered, sample(), asOnNode)).toEqual([
      'the saved plan\'s "changes" is not what the plan made again shows (was the file edited?)',
    ]);
    // Said only when nothing else is: a changed input explains a changed plan.
    const now = sample();
    now.inputs.version = "0.2.0";
    expect(differences(edited, now, asOnNode)).toEqual([
      "kata-install 0.1.0 made the plan; this is kata-install 0.2.0",
    ]);
  });

  it("names the artifacts that are other images in the source, or pulled or not now", () => {
    const saved = sample();
    saved.inputs.artifactIds = {
      base: `sha256:${h("1")}`,
      qemu: `sha256:${h("2")}`,
      kernel: `sha256:${h("3")}`,
    };
    const now = sample();
    now.inputs.artifacts = "fedcba9876543210";
    now.inputs.artifactIds = {
      base: `sha256:${h("1")}`,
      qemu: `sha256:${h("4")}`,
      image: `sha256:${h("5")}`,
    };
    expect(differences(saved, now, asOnNode)).toEqual([
      `artifacts: the plan pulls version 0123456789abcdef; made again, it pulls fedcba9876543210: image is pulled now; kernel is no longer pulled; qemu is another image in the source (sha256:${"2".repeat(12)}… → sha256:${"4".repeat(12)}…)`,
    ]);
  });

  it("a facts hash that is not its facts' is said, though no fact moved (an edited file)", () => {
    const edited = sample();
    edited.inputs.facts.sha256 = h("f");
    expect(differences(edited, sample(), asOnNode)).toEqual([
      "facts: the saved plan's facts.sha256 is not the hash of the facts it lists (was the file edited?)",
    ]);
  });

  it("lists at most ten facts, then how many more", () => {
    const many = (digit: string) => Object.fromEntries([..."abcdefghijkl"].map((k) => [k, h(digit)]));
    const saved = sample();
    saved.inputs.facts.paths = many("1");
    const now = sample();
    now.inputs.facts = { sha256: h("2"), paths: many("2") };
    const found = differences(saved, now, asOnNode);
    expect(found).toHaveLength(11);
    expect(found.at(-1)).toBe("… and 2 more");
  });
});

describe("planAgainCommand", () => {
  it("makes the plan again as it was made: its options and its root, each word as a shell reads it", () => {
    expect(planAgainCommand("p.json", sample().options, "/")).toBe(
      "kata-install plan --shims qemu --artifacts dir:/srv/kata --out p.json",
    );
    const options = { ...sample().options, overrides: "/etc/my pins.toml", artifactsTag: "4.1.0" };
    expect(planAgainCommand("/tmp/node 1.json", options, "/mnt/node")).toBe(
      "kata-install plan --host-root /mnt/node --overrides '/etc/my pins.toml' --shims qemu --artifacts dir:/srv/kata --artifacts-tag 4.1.0 --out '/tmp/node 1.json'",
    );
  });
});
