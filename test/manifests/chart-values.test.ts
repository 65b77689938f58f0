// A kata-deploy values file held to the chart's shape (chart.ts, read.ts): each value of the wrong
// kind is an issue naming its line and key path, and is left out of what is read, so that the
// values map.ts reads are of the types the shape gives them (ValueOf).
import fs from "node:fs";
import { isDeepStrictEqual } from "node:util";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { formatIssue, type InputIssue } from "../../src/input-error.js";
import { CHART, chartDefaults, type Spec } from "../../src/manifests/kata-deploy/chart.js";
import { readChartValues } from "../../src/manifests/kata-deploy/read.js";

function read(lines: string[]) {
  const issues: InputIssue[] = [];
  const chart = readChartValues("values.yaml", `${lines.join("\n")}\n`, CHART, issues);
  return { chart, said: issues.map(formatIssue) };
}

describe("the chart's shape: a value of the wrong kind", () => {
  it("is an issue at its line naming its key path, in a shim, a probe and a custom runtime", () => {
    const { said } = read([
      "shims:", // 1
      "  qemu:", // 2
      "    enabled: sometimes", // 3
      "    containerd: [nydus]", // 4
      "    runtimeClass:", // 5
      "      nodeSelector: { gpu: { vendor: nvidia } }", // 6
      "health:", // 7
      "  startupProbe:", // 8
      "    periodSeconds: 2.5", // 9
      "customRuntimes:", // 10
      "  runtimes:", // 11
      "    mine:", // 12
      "      inheritBaseOverhead: no", // 13
    ]);
    expect(said).toEqual([
      "values.yaml:3: shims.qemu.enabled: expected true, false or ~, got a string",
      "values.yaml:4: shims.qemu.containerd: expected a map, got a list",
      "values.yaml:6: shims.qemu.runtimeClass.nodeSelector: expected a map of strings (quote numbers and booleans), got a map",
      "values.yaml:9: health.startupProbe.periodSeconds: expected a whole number, got a number",
      "values.yaml:13: customRuntimes.runtimes.mine.inheritBaseOverhead: expected true or false, got a string",
    ]);
  });

  it("is left out of the values, while the keys beside it are read as their kinds", () => {
    const { chart, said } = read([
      "shims:",
      "  qemu:",
      "    enabled: sometimes",
      "    supportedArches: [amd64]",
      "  clh:",
      "    enabled: ~",
      "image:",
      "  tag: 4.10", // unquoted: kept as written, not the number 4.1
    ]);
    expect(said).toHaveLength(1);
    expect(chart.values.shims?.qemu).toEqual({ supportedArches: ["amd64"] });
    expect(chart.values.shims?.clh).toEqual({ enabled: null });
    expect(chart.values.image?.tag).toBe("4.10");
    expect(chart.leaves.map((l) => l.join("."))).toEqual([
      "shims.qemu.supportedArches",
      "shims.clh.enabled",
      "image.tag",
    ]);
  });

  it("keys kata-install only passes on, or does not use, are read whole: Kubernetes' objects, NFD's subchart", () => {
    const { chart, said } = read([
      "affinity:",
      "  nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } }",
      "node-feature-discovery:",
      "  enabled: true",
      "  worker: { config: { core: { sleepInterval: 60s } } }",
    ]);
    expect(said).toEqual([]);
    expect(chart.values.affinity).toEqual({
      nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } },
    });
    expect(chart.values["node-feature-discovery"]).toEqual({
      enabled: true,
      worker: { config: { core: { sleepInterval: "60s" } } },
    });
  });
});

describe("the chart's defaults in chart.ts", () => {
  it("are the chart's own values.yaml's, key by key (test/fixtures/kata-deploy/values.yaml @ 4.1.0)", () => {
    const real = parse(fs.readFileSync("test/fixtures/kata-deploy/values.yaml", "utf8"));
    const leaves = (tree: unknown, at: string[] = []): Array<[string, unknown]> =>
      tree !== null && typeof tree === "object" && !Array.isArray(tree) && Object.keys(tree).length > 0
        ? Object.entries(tree).flatMap(([k, v]) => leaves(v, [...at, k]))
        : [[at.join("."), tree]];
    const mine = leaves(chartDefaults());
    expect(mine.length).toBeGreaterThan(40);
    const theirs = (key: string) =>
      key.split(".").reduce<unknown>((t, k) => (t as Record<string, unknown> | undefined)?.[k], real);
    expect(
      mine
        .filter(([key, value]) => !isDeepStrictEqual(theirs(key), value))
        .map(([key]) => [key, theirs(key)]),
    ).toEqual([]);
  });

  it("leave out none of values.yaml's keys (but for the shims', which are the shims' records)", () => {
    const real = parse(fs.readFileSync("test/fixtures/kata-deploy/values.yaml", "utf8"));
    const missing: string[] = [];
    const walk = (tree: unknown, spec: Spec, at: string[]) => {
      for (const [name, value] of Object.entries(tree as Record<string, unknown>)) {
        const child = spec.children?.[name];
        // A subchart's, and maps of the user's keys (each entry's defaults are its record's).
        if (child === undefined || child.kind === "any" || child.each !== undefined) continue;
        if (child.children !== undefined) walk(value ?? {}, child, [...at, name]);
        else if (child.default === undefined) missing.push([...at, name].join("."));
      }
    };
    walk(real, CHART, []);
    expect(missing).toEqual([]);
  });
});
