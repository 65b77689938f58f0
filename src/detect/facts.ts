// The Facts document: every source's value under its key, plus the problems met on the way. It is a
// contract (saved with `facts --json`, replayed with `--facts FILE`): add fields freely, rename or
// remove one only with a schema version bump.
import * as z from "zod/mini";
import "../schema.js";
import { byText } from "../compare.js";
import type { Host } from "../host/host.js";
import { arch } from "./arch.js";
import { DetectContext, type DetectOptions } from "./context.js";
import { cpu } from "./cpu.js";
import { hypervisors } from "./hypervisors.js";
import { iommu } from "./iommu.js";
import { kata } from "./kata.js";
import { kernel } from "./kernel.js";
import { kvm } from "./kvm.js";
import { local } from "./local.js";
import { os } from "./os.js";
import { pci } from "./pci.js";
import type { ProbeCache } from "./probe-cache.js";
import { Problem } from "./problems.js";
import { runtime } from "./runtime/index.js";
import { security } from "./security.js";
import { storage } from "./storage.js";

export const SCHEMA_VERSION = 1;

/** In the order of the document. Sources share reads through the context, so order is not a dependency. */
export const SOURCES = {
  arch,
  os,
  kernel,
  cpu,
  kvm,
  security,
  hypervisors,
  runtime,
  pci,
  iommu,
  storage,
  kata,
  local,
};

const STARTS_PROCESSES = ["hypervisors", "runtime", "kata", "local"];

export const Facts = z.object({
  schemaVersion: z.literal(SCHEMA_VERSION),
  arch: arch.schema,
  os: os.schema,
  kernel: kernel.schema,
  cpu: cpu.schema,
  kvm: kvm.schema,
  security: security.schema,
  hypervisors: hypervisors.schema,
  runtime: runtime.schema,
  pci: pci.schema,
  iommu: iommu.schema,
  storage: storage.schema,
  kata: kata.schema,
  local: local.schema,
  problems: z.array(Problem),
});
export type Facts = z.infer<typeof Facts>;

export async function detectFacts(host: Host, options: DetectOptions = {}): Promise<Facts> {
  const ctx = new DetectContext(host, options);
  const run = async (key: string) => {
    try {
      return [key, await SOURCES[key as keyof typeof SOURCES].detect(ctx)] as const;
    } catch (error) {
      // A detector bug must not hide the rest of the node: record it, and let validation below
      // name the key that is missing.
      ctx.problem(key, `detector failed: ${(error as Error).stack ?? String(error)}`);
      return [key, undefined] as const;
    }
  };
  // Host file reads are synchronous (see Host), so sources interleave only at their awaits. The
  // ones that start processes go alone first, until their processes are running; the rest read
  // files while those processes work.
  const early = STARTS_PROCESSES.map(run);
  await new Promise((resolve) => setImmediate(resolve));
  const late = Object.keys(SOURCES)
    .filter((key) => !STARTS_PROCESSES.includes(key))
    .map(run);
  const values = new Map(await Promise.all([...early, ...late]));
  const entries = Object.keys(SOURCES).map((key) => [key, values.get(key)] as const);
  const document = { schemaVersion: SCHEMA_VERSION, ...Object.fromEntries(entries), problems: ctx.problems };
  // Sorting makes the document stable whatever order the parallel sources finished in.
  document.problems.sort((a, b) =>
    byText(`${a.source}\0${a.path ?? a.command ?? ""}`, `${b.source}\0${b.path ?? b.command ?? ""}`),
  );
  return Facts.parse(document);
}

/**
 * Ask Kata's installed binaries, the hypervisors and the runtime again (after an install changed
 * the node), through `probes`, so that the next detection finds their answers there.
 */
export async function probeInstalled(host: Host, probes: ProbeCache): Promise<void> {
  const ctx = new DetectContext(host, { probes });
  await Promise.all([SOURCES.kata.detect(ctx), SOURCES.hypervisors.detect(ctx), SOURCES.runtime.detect(ctx)]);
}
