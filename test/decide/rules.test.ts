import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadCatalog } from "../../src/decide/catalog.js";
import { loadRules, ruleFilesIn } from "../../src/decide/rules.js";
import { inputErrorLines } from "../helpers/input-error.js";

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

  it("unknown configuration keys, wrong value types, unknown shims and artifacts", () => {
    expect(
      issues({
        "a.toml": `${header("r1")}match = [ { fact = "kvm.device", op = "IsTrue" } ]\ndrop_shims = [ { name = "kemu" } ]\nartifact_source = { qemux = "distro" }\n[rule.config.qemu]\n"hypervisor.qemu.shared_fss" = "virtio-fs"\n"hypervisor.qemu.default_memory" = "2G"\n[rule.config.clh]\n"hypervisor.qemu.path" = "/x"\n`,
      }),
    ).toEqual([
      'a.toml:6: rule "r1" drop_shims[0].name: unknown shim "kemu" (known: clh, clh-runtime-rs, dragonball, fc, qemu, qemu-coco-dev, qemu-nvidia-gpu, qemu-nvidia-gpu-snp, qemu-nvidia-gpu-tdx, qemu-runtime-rs, qemu-se, qemu-snp, qemu-tdx, remote)',
      'a.toml:7: rule "r1" artifact_source.qemux: unknown artifact "qemux"',
      'a.toml:9: rule "r1" config.qemu."hypervisor.qemu.shared_fss": unknown configuration key "hypervisor.qemu.shared_fss" for shim "qemu"',
      'a.toml:10: rule "r1" config.qemu."hypervisor.qemu.default_memory": expected an integer, got "2G"',
      'a.toml:12: rule "r1" config.clh."hypervisor.qemu.path": unknown configuration key "hypervisor.qemu.path" for shim "clh"',
    ]);
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
