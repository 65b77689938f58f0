import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fitsType } from "../../src/decide/catalog.js";
import { decide } from "../../src/decide/decide.js";
import { parseEnv } from "../../src/decide/env.js";
import { emptyOverrides } from "../../src/decide/overrides.js";
import { loadCatalog } from "../../src/inputs/catalog.js";
import { loadRules, ruleFilesIn } from "../../src/inputs/rules.js";
import { factsOf, releaseFor } from "../helpers/decide.js";
import { inputErrorLines } from "../helpers/input-error.js";
import { intelContainerd16 } from "../helpers/nodes.js";

const RULES = path.resolve("rules");
const catalog = loadCatalog(RULES);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-rules-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
let n = 0;

/** Load rule files written from the given texts; returns the issues as formatted lines, or the rule set. */
function load(files: Record<string, string>) {
  const dir = path.join(tmp, `set-${++n}`);
  fs.mkdirSync(dir);
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
  return loadRules(ruleFilesIn(dir), catalog, (f) => path.basename(f));
}
const issues = (files: Record<string, string>) => inputErrorLines(() => load(files));
const ruleSet = loadRules(ruleFilesIn(RULES), catalog);
/** One rule file, written for loadRules. */
function file(name: string, text: string): string {
  const dir = path.join(tmp, `one-${++n}`);
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, name), text);
  return path.join(dir, name);
}

const header = (name: string, extra = "") =>
  `[[rule]]\nname = "${name}"\ndescription = "d"\nwhy = "w"\n${extra}`;

describe("the built-in rules", () => {
  it("load, and every check has an id, a severity and a reason", () => {
    const set = loadRules(ruleFilesIn(RULES), catalog);
    expect(set.rules.length).toBeGreaterThan(30);
    expect([...set.checkIds]).toEqual(
      expect.arrayContaining([
        "cpu-virtualization",
        "nested-virtualization",
        "kvm-device",
        "vhost-vsock",
        "container-runtime",
      ]),
    );
    for (const rule of set.rules) expect(rule.why.length).toBeGreaterThan(10);
  });

  it("are evaluated setters-before-readers, whatever the file order", () => {
    const set = loadRules(ruleFilesIn(RULES), catalog);
    const reversed = loadRules(ruleFilesIn(RULES).reverse(), catalog);
    expect(reversed.rules.map((r) => r.name)).toEqual(set.rules.map((r) => r.name));
    const at = (name: string) => set.rules.findIndex((r) => r.name === name);
    expect(at("distro-qemu-usable")).toBeLessThan(at("use-distro-qemu"));
    expect(at("distro-qemu-usable")).toBeLessThan(at("distro-qemu-virtio-fs"));
    expect(at("distro-qemu-usable")).toBeLessThan(at("distro-qemu-not-usable"));
  });
});

describe("load-time errors name file, line, rule and key", () => {
  it("an unknown fact path", () => {
    expect(
      issues({
        "a.toml": `${header("r1")}match = [ { fact = "cpu.flagz", op = "Exists" } ]\nvars = { x = true }\n`,
      }),
    ).toEqual([
      'a.toml:5: rule "r1" match[0].fact: unknown fact "cpu.flagz": cpu has no "flagz" (it has: vendor, model, count, flags, virtualization, hypervisorGuest)',
    ]);
  });

  it("an unknown operator and a malformed value", () => {
    expect(
      issues({
        "a.toml": `${header("r1")}match = [ { fact = "arch", op = "Is", value = ["x"] } ]\nvars = { x = true }\n\n${header("r2")}match = [ { fact = "cpu.count", op = "Gt", value = "many" } ]\nvars = { y = true }\n`,
      }),
    ).toEqual([
      'a.toml:5: rule "r1" match[0].op: unknown operator "Is" (one of In, NotIn, InRegexp, Exists, DoesNotExist, Gt, Lt, GtLt, IsTrue, IsFalse, VersionAtLeast, VersionBelow)',
      'a.toml:12: rule "r2" match[0].value: Gt: expected a number',
    ]);
  });

  it("a rule without any match", () => {
    expect(issues({ "a.toml": `${header("everywhere")}vars = { x = true }\n` })).toEqual([
      'a.toml:1: rule "everywhere" match: no match: a rule without one would apply to every node; match what it is about',
    ]);
  });

  it("two rules setting one key to different values at the same priority", () => {
    const rule = (name: string, value: string, match: string) =>
      `${header(name)}match = [ ${match} ]\n[rule.config.qemu]\n"hypervisor.qemu.shared_fs" = "${value}"\n`;
    expect(
      issues({
        "a.toml": rule("fs-a", "virtio-fs", '{ fact = "kvm.device", op = "IsTrue" }'),
        "b.toml": rule("fs-b", "virtio-9p", '{ fact = "arch", op = "In", value = ["x86_64"] }'),
      }),
    ).toEqual([
      'b.toml:1: rule "fs-b" sets "hypervisor.qemu.shared_fs" for shim qemu to "virtio-9p", and rule "fs-a" (a.toml) sets it to "virtio-fs" at the same priority 0; give one a higher priority or make their matches exclusive',
    ]);
    // Different priorities, or matches that exclude each other, are fine.
    expect(() =>
      load({
        "a.toml": rule("fs-a", "virtio-fs", '{ fact = "kvm.device", op = "IsTrue" }'),
        "b.toml": rule("fs-b", "virtio-9p", '{ fact = "kvm.device", op = "IsFalse" }'),
      }),
    ).not.toThrow();
    expect(() =>
      load({
        "a.toml": rule("fs-a", "virtio-fs", '{ fact = "kvm.device", op = "IsTrue" }'),
        "b.toml": rule("fs-b", "virtio-9p", '{ fact = "arch", op = "In", value = ["x86_64"] }').replace(
          'why = "w"',
          'why = "w"\npriority = 5',
        ),
      }),
    ).not.toThrow();
  });

  it("unknown shims and artifacts, keys that are no keys, values no shim takes", () => {
    expect(
      issues({
        "a.toml": `${header("r1")}match = [ { fact = "kvm.device", op = "IsTrue" } ]\ndrop_shims = [ { name = "kemu" } ]\nartifact_source = { qemux = "distro" }\n[rule.config.qemu]\n"hypervisor.qemu..shared_fs" = "virtio-fs"\n"hypervisor.qemu.shared_fs" = "virtio-fss"\n`,
      }),
    ).toEqual([
      // The names known are the catalogue's, whatever shims it has.
      `a.toml:6: rule "r1" drop_shims[0].name: unknown shim "kemu" (known: ${catalog.shimNames().join(", ")})`,
      'a.toml:7: rule "r1" artifact_source.qemux: unknown artifact "qemux"',
      'a.toml:9: rule "r1" config.qemu."hypervisor.qemu..shared_fs": "hypervisor.qemu..shared_fs" is no configuration key (expected a dotted key such as "hypervisor.qemu.default_memory")',
      'a.toml:10: rule "r1" config.qemu."hypervisor.qemu.shared_fs": "virtio-fss" is not one of "virtio-fs", "virtio-9p", "virtio-fs-nydus", "inline-virtio-fs", "none"',
    ]);
  });

  it("every key kata-install's rules set is one Kata 4.1.0's configuration of each shim they set it for has, of that type", () => {
    const release = releaseFor("x86_64");
    const arm = releaseFor("aarch64");
    const problems: string[] = [];
    for (const rule of ruleSet.rules)
      for (const [target, values] of Object.entries(rule.config))
        for (const [key, value] of Object.entries(values)) {
          const shims = target === "all" ? [...release.shims.keys()] : [target];
          const having = shims.filter(
            (s) => release.shims.get(s)?.config.keys.has(key) || arm.shims.get(s)?.config.keys.has(key),
          );
          if (having.length === 0) problems.push(`${rule.name}: ${target}: ${key}`);
          for (const shim of having) {
            const info =
              release.shims.get(shim)?.config.keys.get(key) ?? arm.shims.get(shim)?.config.keys.get(key);
            if ("literal" in value && info && !fitsType(info.type, value.literal))
              problems.push(`${rule.name}: ${shim}: ${key} is ${info.type}`);
          }
        }
    expect(problems).toEqual([]);
  });

  it("a rule's key a newer release dropped is a warning at decide, and not set: kata-install's rule never stops an install", async () => {
    const rules = loadRules(
      [
        file(
          "a.toml",
          `${header("r1")}match = [ { fact = "kvm.device", op = "IsTrue" } ]\n[rule.config.qemu]\n"hypervisor.qemu.gone_in_this_release" = true\n`,
        ),
      ],
      catalog,
      (f) => path.basename(f),
    );
    const facts = await factsOf(intelContainerd16());
    const decision = decide({
      facts,
      catalog: catalog.withRelease(releaseFor("x86_64")),
      rules,
      overrides: emptyOverrides(),
      env: parseEnv({}, "x86_64"),
      // Only this rule: no feature is established, so the shim is pinned.
      flags: { ignorePreflightErrors: [], shims: ["qemu"] },
    });
    const warning = decision.checks.find((c) => c.id === "config-key");
    expect(warning).toMatchObject({ severity: "warning", rule: "r1" });
    expect(warning?.message).toContain(
      "rule r1 (a.toml) sets hypervisor.qemu.gone_in_this_release for qemu, but Kata 4.1.0's configuration-qemu.toml has no such key (renamed or misspelt?); it is not set",
    );
    expect(decision.config.qemu?.["hypervisor.qemu.gone_in_this_release"]).toBeUndefined();
  });

  it("structural problems: unknown keys, wrong severities, duplicate names, bad TOML", () => {
    expect(
      issues({
        "a.toml": `${header("r1")}match = [ { fact = "kvm.device", op = "IsTrue" } ]\ncheck = { id = "x", severity = "fatal", message = "m" }\nwhen = 1\n`,
        "b.toml": "[[rule]\nname = 1\n",
      }),
    ).toEqual([
      expect.stringMatching(/^a\.toml:1: rule "r1" .*Unrecognized key: "when"$/),
      expect.stringMatching(
        /^a\.toml:6: rule "r1" check\.severity: Invalid option: expected one of "error"\|"warning"\|"info"$/,
      ),
      expect.stringMatching(/^b\.toml:1: invalid TOML at line 1/),
    ]);
    expect(
      issues({
        "a.toml": `${header("same")}match = [ { fact = "kvm.device", op = "IsTrue" } ]\nvars = { x = true }\n`,
        "b.toml": `${header("same")}match = [ { fact = "kvm.device", op = "IsTrue" } ]\nvars = { x = true }\n`,
      }),
    ).toEqual(['b.toml:2: rule "same" name: a rule of this name is already in a.toml']);
  });

  it("variables read in a cycle", () => {
    expect(
      issues({
        "a.toml": `${header("r1")}match = [ { fact = "vars.b", op = "IsTrue" } ]\nvars = { a = true }\n\n${header("r2")}match = [ { fact = "vars.a", op = "IsTrue" } ]\nvars = { b = true }\n`,
      }),
    ).toEqual(["a.toml:1: rules read each other's variables in a cycle: r1 → r2 → r1"]);
  });
});
