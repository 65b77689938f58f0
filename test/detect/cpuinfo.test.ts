import { describe, expect, it } from "vitest";
import {
  archFromCpuinfo,
  cpuCount,
  flagsFromCpuinfo,
  modelFromCpuinfo,
  parseCpuinfo,
  vendorFromCpuinfo,
} from "../../src/detect/cpuinfo.js";
import { ARM64_CPUINFO, x86Cpuinfo } from "../helpers/nodes.js";

const S390X = `vendor_id       : IBM/S390
# processors    : 4
bogomips per cpu: 3241.00
max thread id   : 0
features\t: esan3 zarch stfle msa ldisp eimm dfp edat etf3eh highgprs te vx vxd vxe gs sie
facilities      : 0 1 2 3 4 6 7 8 9 10
processor 0: version = 00,  identification = 0C7E28,  machine = 8561
processor 1: version = 00,  identification = 0C7E28,  machine = 8561

cpu number      : 0
cpu MHz dynamic : 5200
`;

const PPC64LE = `processor\t: 0
cpu\t\t: POWER9 (architected), altivec supported
clock\t\t: 2200.000000MHz
revision\t: 2.2 (pvr 004e 1202)

processor\t: 1
cpu\t\t: POWER9 (architected), altivec supported

timebase\t: 512000000
platform\t: pSeries
model\t\t: IBM,9009-22A
`;

describe("cpuinfo", () => {
  it("reads the same facts whether keys are padded with tabs or spaces", () => {
    for (const pad of ["tab", "space"] as const) {
      const blocks = parseCpuinfo(
        x86Cpuinfo({ vendor: "AuthenticAMD", model: "AMD EPYC 7742", flags: "svm sev", cpus: 3, pad }),
      );
      expect(vendorFromCpuinfo(blocks)).toBe("AuthenticAMD");
      expect(modelFromCpuinfo(blocks)).toBe("AMD EPYC 7742");
      expect(cpuCount(blocks)).toBe(3);
      expect(flagsFromCpuinfo(blocks)).toEqual(expect.arrayContaining(["svm", "sev", "lm"]));
      expect(archFromCpuinfo(blocks)).toBe("x86_64");
    }
  });

  it("reads arm64's Features and implementer", () => {
    const blocks = parseCpuinfo(ARM64_CPUINFO);
    expect(archFromCpuinfo(blocks)).toBe("aarch64");
    expect(vendorFromCpuinfo(blocks)).toBe("ARM");
    expect(flagsFromCpuinfo(blocks)).toContain("atomics");
  });

  it("reads s390x's global block, its CPU count and the sie facility", () => {
    const blocks = parseCpuinfo(S390X);
    expect(archFromCpuinfo(blocks)).toBe("s390x");
    expect(vendorFromCpuinfo(blocks)).toBe("IBM");
    expect(cpuCount(blocks)).toBe(4);
    expect(flagsFromCpuinfo(blocks)).toContain("sie");
    expect(modelFromCpuinfo(blocks)).toBe("machine 8561");
  });

  it("reads ppc64le", () => {
    const blocks = parseCpuinfo(PPC64LE);
    expect(archFromCpuinfo(blocks)).toBe("ppc64le");
    expect(cpuCount(blocks)).toBe(2);
    expect(modelFromCpuinfo(blocks)).toBe("POWER9 (architected), altivec supported");
  });

  it("a 32-bit x86 cpuinfo (no lm) is not x86_64, and an unknown shape is null", () => {
    expect(
      archFromCpuinfo(parseCpuinfo("processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: fpu vme\n")),
    ).toBe("i686");
    expect(archFromCpuinfo(parseCpuinfo("hello: world\n"))).toBeNull();
  });
});
