// The readable facts: each source's lines, in the order of the sources, whatever the node knows.
import { afterAll, describe, expect, it } from "vitest";
import { detectFacts, type Facts, SCHEMA_VERSION } from "../../src/detect/facts.js";
import { SOURCES } from "../../src/detect/sources.js";
import { renderFactsSummary } from "../../src/output/facts-summary.js";
import { intelContainerd16 } from "../helpers/nodes.js";
import { buildHost, removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);

const labels = (text: string) =>
  text
    .split("\n")
    .slice(1)
    .filter((line) => line.startsWith("  "))
    .map((line) => line.trim().split(/\s{2,}/)[0]);

describe("the facts summary", () => {
  it("shows each source's lines in the order of the sources", async () => {
    const facts = await detectFacts(buildHost(intelContainerd16()).host);
    expect(labels(renderFactsSummary(facts, "/"))).toEqual([
      "arch",
      "os",
      "kernel",
      "modules loaded",
      "modules builtin",
      "modules available",
      "modules missing",
      "filesystems",
      "hugepages",
      "cpu",
      "kvm",
      "confidential",
      "hypervisors",
      "runtime",
      "drop-ins",
      "handlers",
      "snapshotters",
      "pci",
      "storage",
      "kata",
      "local facts",
    ]);
  });

  it("shows a node of which nothing is known as unknown or none, with why", () => {
    const facts = {
      schemaVersion: SCHEMA_VERSION,
      ...Object.fromEntries(SOURCES.map((source) => [source.key, source.unknown])),
      problems: [{ source: "kvm", reason: "detector failed: Error: boom" }],
    } as Facts;
    expect(renderFactsSummary(facts, "/host")).toBe(`Node facts (host root /host)
  arch          unknown
  os            unknown
  kernel        unknown · loadable modules: no · build config: not found
  filesystems   9p: no · virtiofs: no · fuse: no · overlay: no · erofs: no
  hugepages     default ? kB · reserved: none
  cpu           unknown · 0 CPUs · virtualisation: none · node is a VM: unknown
  kvm           /dev/kvm: no · module: none · nested: unknown
  confidential  sev: no · sev-es: no · sev-snp: no · tdx: no · sgx: no · se: no
  hypervisors   qemu: none · cloud-hypervisor: none · firecracker: none · virtiofsd: none
  runtime       none found
  pci           0 devices · GPUs: 0 (NVIDIA 0) · SR-IOV capable: 0 · IOMMU: off
  storage       no physical block devices
  kata          not installed
  local facts   none

Could not read (1):
  - kvm: detector failed: Error: boom
`);
  });
});
