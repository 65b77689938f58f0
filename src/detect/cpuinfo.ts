// /proc/cpuinfo parsing. Its shape differs by architecture (x86 "flags", arm64 "Features", s390x
// "features" in a global block) and the spacing around ":" differs between kernels, so keys are
// matched after trimming and case-folding.

export type CpuinfoBlock = Map<string, string>;

export function parseCpuinfo(text: string): CpuinfoBlock[] {
  const blocks: CpuinfoBlock[] = [];
  let current: CpuinfoBlock = new Map();
  for (const raw of text.split("\n")) {
    const line = raw.trimEnd();
    if (line.trim() === "") {
      if (current.size > 0) blocks.push(current);
      current = new Map();
      continue;
    }
    const colon = line.indexOf(":");
    if (colon < 0) continue;
    const key = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    // The first occurrence wins: s390x repeats "processor N" lines that are distinct keys anyway.
    if (!current.has(key)) current.set(key, value);
  }
  if (current.size > 0) blocks.push(current);
  return blocks;
}

/** The first value of `key` in any block. */
export function cpuinfoValue(blocks: readonly CpuinfoBlock[], ...keys: string[]): string | null {
  for (const block of blocks) {
    for (const key of keys) {
      const value = block.get(key);
      if (value !== undefined) return value;
    }
  }
  return null;
}

/** Number of logical CPUs: x86/arm/ppc have one block per "processor"; s390x says "# processors". */
export function cpuCount(blocks: readonly CpuinfoBlock[]): number {
  const declared = cpuinfoValue(blocks, "# processors");
  if (declared !== null && /^\d+$/.test(declared)) return Number(declared);
  return blocks.filter((block) => block.has("processor")).length;
}

/** The architecture a cpuinfo was written by, by its shape; null when it does not say. */
export function archFromCpuinfo(blocks: readonly CpuinfoBlock[]): string | null {
  const vendor = cpuinfoValue(blocks, "vendor_id");
  if (vendor === "IBM/S390") return "s390x";
  if (vendor !== null && /^(GenuineIntel|AuthenticAMD|HygonGenuine|CentaurHauls|Shanghai)$/.test(vendor)) {
    const flags = (cpuinfoValue(blocks, "flags") ?? "").split(/\s+/);
    return flags.includes("lm") ? "x86_64" : "i686";
  }
  if (cpuinfoValue(blocks, "cpu implementer") !== null) {
    return cpuinfoValue(blocks, "cpu architecture") === "7" ? "armv7l" : "aarch64";
  }
  const cpu = cpuinfoValue(blocks, "cpu");
  if (cpu?.startsWith("POWER")) return "ppc64le";
  const isa = cpuinfoValue(blocks, "isa");
  if (isa?.startsWith("rv64")) return "riscv64";
  return null;
}

const ARM_IMPLEMENTERS: Record<string, string> = {
  "0x41": "ARM",
  "0x42": "Broadcom",
  "0x43": "Cavium",
  "0x46": "Fujitsu",
  "0x48": "HiSilicon",
  "0x4e": "NVIDIA",
  "0x50": "APM",
  "0x51": "Qualcomm",
  "0x61": "Apple",
  "0xc0": "Ampere",
};

export function vendorFromCpuinfo(blocks: readonly CpuinfoBlock[]): string | null {
  const vendor = cpuinfoValue(blocks, "vendor_id");
  if (vendor === "IBM/S390") return "IBM";
  if (vendor !== null) return vendor;
  const implementer = cpuinfoValue(blocks, "cpu implementer");
  if (implementer !== null) return ARM_IMPLEMENTERS[implementer.toLowerCase()] ?? implementer;
  if (cpuinfoValue(blocks, "cpu")?.startsWith("POWER")) return "IBM";
  return null;
}

export function modelFromCpuinfo(blocks: readonly CpuinfoBlock[]): string | null {
  const named = cpuinfoValue(blocks, "model name", "cpu");
  if (named !== null) return named;
  const part = cpuinfoValue(blocks, "cpu part");
  if (part !== null) return `part ${part}`;
  // s390x: "processor 0: version = 00,  identification = 0C7E28,  machine = 8561"
  for (const block of blocks) {
    for (const [key, value] of block) {
      const machine = key.startsWith("processor ") ? /machine\s*=\s*(\w+)/.exec(value) : null;
      if (machine) return `machine ${machine[1]}`;
    }
  }
  return null;
}

export function flagsFromCpuinfo(blocks: readonly CpuinfoBlock[]): string[] {
  const raw = cpuinfoValue(blocks, "flags", "features") ?? "";
  return [...new Set(raw.split(/\s+/).filter(Boolean))].sort();
}
