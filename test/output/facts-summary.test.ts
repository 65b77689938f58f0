// The readable facts: each source's lines, in the order of the sources, whatever the node knows.
import { afterAll, describe, expect, it } from "vitest";
import { detectFacts, type Facts, SCHEMA_VERSION } from "../../src/detect/facts.js";
import { SOURCES } from "../../src/detect/sources.js";
import { renderFactsSummary, rowsOf } from "../../src/output/facts-summary.js";
import { TEES } from "../../src/shims/tees.js";
import { intelContainerd16 } from "../helpers/nodes.js";
import { buildHost, removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);

const labels = (text: string) =>
  text
    .split("\n")
    .slice(1)
    .filter((line) => line.startsWith("  "))
    .map((line) => line.trim().split(/\s{2,}/)[0] ?? "");

describe("the facts summary", () => {
  it("shows each source's lines in the order of the sources", async () => {
    const facts = await detectFacts(buildHost(intelContainerd16()).host);
    const shown = labels(renderFactsSummary(facts, { hostRoot: "/" }));
    // Every source's rows, source after source as SOURCES has them: a new source joins by itself.
    expect(shown).toEqual(SOURCES.flatMap((source) => rowsOf(facts, source.key).map(([label]) => label)));
    // And the rows a reader looks for are there, in that order.
    const order = ["arch", "kernel", "cpu", "kvm", "confidential", "hypervisors", "runtime", "pci", "kata"];
    expect(shown.filter((label) => order.includes(label))).toEqual(order);
  });

  it("says whose an installed Kata is: kata-install's, kata-deploy's, or neither", async () => {
    const facts = await detectFacts(buildHost(intelContainerd16()).host);
    const shown = (managedBy: Facts["kata"]["managedBy"]) =>
      rowsOf(
        {
          ...facts,
          kata: { ...facts.kata, installed: true, version: "3.9.0", prefix: "/opt/kata", managedBy },
        },
        "kata",
      )[0]?.[1];
    expect(shown("kata-install")).toBe("3.9.0 at /opt/kata (kata-install's)");
    expect(shown("kata-deploy")).toBe("3.9.0 at /opt/kata (kata-deploy's)");
    expect(shown("other")).toBe("3.9.0 at /opt/kata (not kata-install's)");
  });

  it("shows a node of which nothing is known as unknown or none, with why", () => {
    const facts = {
      schemaVersion: SCHEMA_VERSION,
      ...Object.fromEntries(SOURCES.map((source) => [source.key, source.unknown])),
      problems: [{ source: "kvm", reason: "detector failed: Error: boom" }],
    } as Facts;
    const text = renderFactsSummary(facts, { hostRoot: "/host" });
    // Each source's lines as written when it was added; a source added since is only held to
    // saying something for each of its rows.
    const LINES: Partial<Record<(typeof SOURCES)[number]["key"], string[]>> = {
      arch: ["arch          unknown"],
      os: ["os            unknown"],
      kernel: [
        "kernel        unknown · loadable modules: no · build config: not found",
        "filesystems   9p: no · virtiofs: no · fuse: no · overlay: no · erofs: no",
        "hugepages     default ? kB · reserved: none",
      ],
      cpu: ["cpu           unknown · 0 CPUs · virtualisation: none · node is a VM: unknown"],
      kvm: ["kvm           /dev/kvm: no · module: none · nested: unknown"],
      security: [
        `confidential  ${Object.values(TEES)
          .map((t) => `${t.label}: no`)
          .join(" · ")}`,
      ],
      hypervisors: [
        "hypervisors   qemu: none · cloud-hypervisor: none · firecracker: none · virtiofsd: none",
      ],
      runtime: ["runtime       none found"],
      pci: ["pci           0 devices · GPUs: 0 (NVIDIA 0) · SR-IOV capable: 0 · IOMMU: off"],
      storage: ["storage       no physical block devices"],
      kata: ["kata          not installed"],
      local: ["local facts   none"],
    };
    // The label column's width is the longest label's: compared with the gap after it as two spaces.
    const gap = (line: string) => line.trim().replace(/^(\S+(?: \S+)*?)\s{2,}/, "$1  ");
    const lines = text.split("\n").map(gap);
    expect(lines[0]).toBe("Node facts (host root /host)");
    // Facts replayed from a file are said to be that file's, not a host root's.
    expect(renderFactsSummary(facts, { file: "node.json" }).split("\n")[0]).toBe(
      "Node facts (saved in node.json)",
    );
    for (const source of SOURCES) {
      const rows = rowsOf(facts, source.key);
      const expected = LINES[source.key];
      if (expected !== undefined) for (const line of expected) expect(lines).toContain(gap(line));
      else for (const [label, value] of rows) expect(value, `${source.key}: ${label}`).not.toBe("");
    }
    expect(text.endsWith("\n\nCould not read (1):\n  - kvm: detector failed: Error: boom\n")).toBe(true);
  });
});
