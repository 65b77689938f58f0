import { describe, expect, it } from "vitest";
import {
  compileMatch,
  evaluate,
  factScope,
  type MatchError,
  provablyDisjoint,
} from "../../src/decide/match.js";

const scope = factScope(new Set(["virtio-fs"]));
const doc = {
  arch: "x86_64",
  cpu: {
    flags: ["vmx", "lm", "sse4_1"],
    virtualization: "vmx",
    hypervisorGuest: false,
    count: 8,
    model: "Intel Xeon",
  },
  kvm: { device: true, nested: null },
  runtime: { version: "1.7.24", snapshotters: [{ name: "devmapper", kind: "builtin", detail: "pool" }] },
  kernel: { modules: { vhost: { state: "loaded" }, "9p": { state: "missing" } } },
  hypervisors: { qemu: null },
  vars: { "virtio-fs": true },
};
const holds = (raw: unknown) => evaluate(compileMatch(raw, "match", scope), doc);

describe("operators", () => {
  it("In / NotIn on scalars and lists (a list holds when one element is in the values)", () => {
    expect(holds([{ fact: "arch", op: "In", value: ["aarch64", "x86_64"] }])).toBe(true);
    expect(holds([{ fact: "arch", op: "In", value: ["s390x"] }])).toBe(false);
    expect(holds([{ fact: "arch", op: "NotIn", value: ["s390x"] }])).toBe(true);
    expect(holds([{ fact: "cpu.flags", op: "In", value: ["svm", "vmx"] }])).toBe(true);
    expect(holds([{ fact: "cpu.flags", op: "NotIn", value: ["svm"] }])).toBe(true);
    expect(holds([{ fact: "cpu.flags", op: "NotIn", value: ["lm"] }])).toBe(false);
    // An unknown (null) fact is in no list, and so NotIn any.
    expect(holds([{ fact: "kvm.nested", op: "In", value: [true] }])).toBe(false);
    expect(holds([{ fact: "kvm.nested", op: "NotIn", value: [true] }])).toBe(true);
  });

  it("InRegexp", () => {
    expect(holds([{ fact: "cpu.model", op: "InRegexp", value: ["^Intel", "^AMD"] }])).toBe(true);
    expect(holds([{ fact: "cpu.flags", op: "InRegexp", value: ["^sse4"] }])).toBe(true);
    expect(holds([{ fact: "arch", op: "InRegexp", value: ["^arm"] }])).toBe(false);
  });

  it("Exists / DoesNotExist: null and empty lists do not exist", () => {
    expect(holds([{ fact: "cpu.virtualization", op: "Exists" }])).toBe(true);
    expect(holds([{ fact: "kvm.nested", op: "DoesNotExist" }])).toBe(true);
    expect(holds([{ fact: "hypervisors.qemu", op: "DoesNotExist" }])).toBe(true);
  });

  it("Gt / Lt / GtLt", () => {
    expect(holds([{ fact: "cpu.count", op: "Gt", value: 4 }])).toBe(true);
    expect(holds([{ fact: "cpu.count", op: "Gt", value: [8] }])).toBe(false);
    expect(holds([{ fact: "cpu.count", op: "Lt", value: 9 }])).toBe(true);
    expect(holds([{ fact: "cpu.count", op: "GtLt", value: [4, 16] }])).toBe(true);
    expect(holds([{ fact: "cpu.count", op: "GtLt", value: [8, 16] }])).toBe(false);
  });

  it("IsTrue / IsFalse, on facts and variables", () => {
    expect(holds([{ fact: "kvm.device", op: "IsTrue" }])).toBe(true);
    expect(holds([{ fact: "cpu.hypervisorGuest", op: "IsFalse" }])).toBe(true);
    expect(holds([{ fact: "kvm.nested", op: "IsFalse" }])).toBe(false);
    expect(holds([{ fact: "vars.virtio-fs", op: "IsTrue" }])).toBe(true);
  });

  it("VersionAtLeast / VersionBelow, and an unknown version matches neither", () => {
    expect(holds([{ fact: "runtime.version", op: "VersionAtLeast", value: "1.7" }])).toBe(true);
    expect(holds([{ fact: "runtime.version", op: "VersionBelow", value: "2.0" }])).toBe(true);
    expect(holds([{ fact: "runtime.version", op: "VersionAtLeast", value: "1.7.25" }])).toBe(false);
    expect(holds([{ fact: "hypervisors.qemu.version", op: "VersionBelow", value: "99" }])).toBe(false);
  });

  it("all / any / some nesting", () => {
    expect(
      holds({
        any: [
          { fact: "arch", op: "In", value: ["s390x"] },
          { fact: "kvm.device", op: "IsTrue" },
        ],
      }),
    ).toBe(true);
    expect(
      holds({
        all: [
          { fact: "arch", op: "In", value: ["s390x"] },
          { fact: "kvm.device", op: "IsTrue" },
        ],
      }),
    ).toBe(false);
    expect(
      holds([
        {
          some: "runtime.snapshotters",
          where: [
            { fact: "name", op: "In", value: ["devmapper"] },
            { fact: "detail", op: "Exists" },
          ],
        },
      ]),
    ).toBe(true);
    expect(
      holds([{ some: "runtime.snapshotters", where: [{ fact: "name", op: "In", value: ["nydus"] }] }]),
    ).toBe(false);
  });
});

describe("compile errors name the key and say what is wrong", () => {
  const error = (raw: unknown) => {
    try {
      compileMatch(raw, "match", scope);
    } catch (e) {
      return { key: (e as MatchError).key, message: (e as Error).message };
    }
    throw new Error("compiled");
  };

  it("an unknown fact path", () => {
    expect(error([{ fact: "cpu.flagz", op: "Exists" }])).toEqual({
      key: "match[0].fact",
      message:
        'unknown fact "cpu.flagz": cpu has no "flagz" (it has: vendor, model, count, flags, virtualization, hypervisorGuest)',
    });
    expect(error([{ fact: "vars.nope", op: "IsTrue" }]).message).toBe(
      'unknown variable "nope": no rule sets it',
    );
  });

  it("an unknown operator", () => {
    expect(error([{ fact: "arch", op: "Equals", value: ["x"] }])).toMatchObject({
      key: "match[0].op",
      message: expect.stringMatching(/^unknown operator "Equals"/),
    });
  });

  it("malformed values", () => {
    expect(error([{ fact: "arch", op: "In", value: "x86_64" }]).message).toBe(
      "In: expected a non-empty list of values",
    );
    expect(error([{ fact: "arch", op: "Exists", value: true }]).message).toBe("Exists: takes no value");
    expect(error([{ fact: "cpu.count", op: "GtLt", value: [8, 4] }]).message).toBe(
      "GtLt: expected [low, high] with low < high",
    );
    expect(error([{ fact: "runtime.version", op: "VersionAtLeast", value: "two" }]).message).toBe(
      'VersionAtLeast: expected a version such as "2.0"',
    );
    expect(error([{ fact: "arch", op: "InRegexp", value: ["(unclosed"] }]).message).toMatch(
      /^InRegexp: invalid regular expression/,
    );
  });

  it("a value an enum fact never takes, and an operator that does not fit the fact's type", () => {
    expect(error([{ fact: "kernel.modules.vhost.state", op: "In", value: ["lodaed"] }]).message).toMatch(
      /is never "lodaed"/,
    );
    expect(error([{ fact: "arch", op: "IsTrue" }])).toMatchObject({
      key: "match[0].op",
      message: 'IsTrue needs a boolean fact, and "arch" is a string',
    });
  });

  it("nested errors carry their path", () => {
    expect(
      error([
        {
          any: [
            { fact: "arch", op: "Exists" },
            { fact: "kvm.device", op: "Nope" },
          ],
        },
      ]).key,
    ).toBe("match[0].any[1].op");
    expect(error([{ some: "arch", where: [] }]).message).toBe('"arch" is not a list of facts');
    expect(error([]).message).toMatch(/empty list matches every node/);
  });
});

describe("disjointness", () => {
  const c = (raw: unknown) => compileMatch(raw, "m", scope);
  it("is proved for contradicting requirements, and not claimed otherwise", () => {
    expect(
      provablyDisjoint(
        c([{ fact: "vars.virtio-fs", op: "IsTrue" }]),
        c([{ fact: "vars.virtio-fs", op: "IsFalse" }]),
      ),
    ).toBe(true);
    expect(
      provablyDisjoint(
        c([{ fact: "arch", op: "In", value: ["x86_64"] }]),
        c([{ fact: "arch", op: "In", value: ["aarch64"] }]),
      ),
    ).toBe(true);
    expect(
      provablyDisjoint(
        c([{ fact: "arch", op: "In", value: ["x86_64"] }]),
        c([{ fact: "arch", op: "NotIn", value: ["x86_64"] }]),
      ),
    ).toBe(true);
    // Two flags can both be present: In on a list is no contradiction.
    expect(
      provablyDisjoint(
        c([{ fact: "cpu.flags", op: "In", value: ["vmx"] }]),
        c([{ fact: "cpu.flags", op: "In", value: ["svm"] }]),
      ),
    ).toBe(false);
    expect(
      provablyDisjoint(
        c([{ fact: "arch", op: "In", value: ["x86_64"] }]),
        c([{ fact: "kvm.device", op: "IsTrue" }]),
      ),
    ).toBe(false);
  });
});
