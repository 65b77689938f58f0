// Every shim is one record (src/shims/table.ts), held here to its shape as Renovate's index test
// holds each manager to its own: every field present or "none", and every shim kata-install meets —
// the capability table's, the chart's, each of the release fixtures' — one of them. A shim added
// half-way (a record without its TEE's feature, a chart entry without its overhead, a release shim
// without a record) fails here, naming the shim and the part.
import fs from "node:fs";
import path from "node:path";
import { parse } from "smol-toml";
import { describe, expect, it } from "vitest";
import * as z from "zod/mini";
import { loadArtifactCatalogue } from "../../src/artifacts/catalogue.js";
import { loadCatalog } from "../../src/inputs/catalog.js";
import { CHART_SHIMS } from "../../src/manifests/kata-deploy/chart.js";
import { DEFAULT_SHIM, SHIMS } from "../../src/shims/table.js";
import { TEE_KEYS, TEES } from "../../src/shims/tees.js";
import { RULES } from "../helpers/decide.js";

const none = z.literal("none");
const strings = z.array(z.string());
const labels = z.record(z.string(), z.string());
/** The record's shape at run time: what the type says at compile time, with nothing optional. */
const Record = z.strictObject({
  vetting: z.union([
    none,
    z.strictObject({
      description: z.string(),
      hypervisor: z.string(),
      runtime: z.enum(["go", "rust"]),
      arches: z.array(z.enum(["x86_64", "aarch64", "s390x", "ppc64le"])),
      shared_fs: strings,
      block_device_drivers: strings,
      vfio_hotplug: z.boolean(),
      vfio_coldplug: z.boolean(),
      virtio_mem: z.boolean(),
      memory_hotplug: z.boolean(),
      seccomp: z.boolean(),
      rate_limiters: z.boolean(),
      snapshotter: z.string(),
      agent_transport: z.enum(["vsock", "hybrid-vsock", "remote"]),
      requires: strings,
      artifacts: strings,
      arch_artifacts: z.union([none, z.record(z.string(), strings)]),
      host_parts: strings,
      opt_in: z.boolean(),
    }),
  ]),
  tee: z.union([none, z.enum(TEE_KEYS as [string, ...string[]])]),
  runtimeClass: z.strictObject({
    overhead: z.union([z.literal("default"), z.strictObject({ memory: z.string(), cpu: z.string() })]),
    nodeSelector: z.union([none, labels]),
  }),
  chart: z.union([
    none,
    z.strictObject({
      arches: z.array(z.enum(["amd64", "arm64", "s390x", "ppc64le"])),
      snapshotter: z.string(),
      guestPull: z.boolean(),
      enabled: z.boolean(),
    }),
  ]),
  links: z.union([none, strings]),
});

const records = [...SHIMS];
const catalog = loadCatalog(RULES);

/** The shims of every release fixture: each configuration-<shim>.toml of each architecture. */
function releaseShims(): Map<string, string> {
  const root = path.resolve("test/fixtures/release/configs");
  const out = new Map<string, string>();
  for (const file of fs.readdirSync(root, { recursive: true }).map(String)) {
    const name = /configuration-(.+)\.toml$/.exec(path.basename(file))?.[1];
    if (name !== undefined && !out.has(name)) out.set(name, file);
  }
  return out;
}

/** Feature variable → the facts its rules in rules/features.toml read. */
function featureRules(): Map<string, string[]> {
  const file = parse(fs.readFileSync(path.join(RULES, "features.toml"), "utf8")) as {
    rule: Array<{ vars?: Record<string, unknown>; match?: Array<{ fact?: string }> }>;
  };
  const out = new Map<string, string[]>();
  for (const rule of file.rule)
    for (const name of Object.keys(rule.vars ?? {}))
      out.set(name, [
        ...(out.get(name) ?? []),
        ...(rule.match ?? []).flatMap((m) => (m.fact ? [m.fact] : [])),
      ]);
  return out;
}

describe.each(records)("shim %s", (name, record) => {
  it("has every field, each a value or explicitly none", () => {
    const result = Record.safeParse(record);
    expect(result.success ? [] : result.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`)).toEqual(
      [],
    );
  });

  it("is vetted exactly when the capability table has it", () => {
    expect(catalog.shims.has(name)).toBe(record.vetting !== "none");
  });

  it("requires its TEE's feature, and no other TEE's", () => {
    const required = record.vetting === "none" ? null : record.vetting.requires;
    if (required === null) return;
    const teeFeatures: string[] = TEE_KEYS.map((k) => TEES[k].feature).filter((f) => f !== "none");
    const own = record.tee === "none" ? [] : [TEES[record.tee].feature];
    expect(required.filter((f) => teeFeatures.includes(f))).toEqual(own);
  });

  it("as a chart shim: has the chart's overhead, in the chart's order; a TEE one pulls in the guest", () => {
    expect(CHART_SHIMS.includes(name)).toBe(record.chart !== "none");
    if (record.chart === "none") return;
    expect(record.runtimeClass.overhead).not.toBe("default");
    if (record.tee !== "none") expect(record.chart.guestPull).toBe(true);
  });

  it("a node selector of its own has its TEE's label in it", () => {
    const selector = record.runtimeClass.nodeSelector;
    if (selector === "none" || record.tee === "none") return;
    const label = TEES[record.tee].runtimeClassSelector;
    if (label !== "none") expect(selector[label]).toBe("true");
  });

  it("links only directories an artifact of the catalogue holds", () => {
    if (record.links === "none") return;
    const catalogue = loadArtifactCatalogue(path.resolve("artifacts/catalogue.toml"));
    const paths = [...catalogue.values()].flatMap((a) => a.paths);
    for (const link of record.links)
      expect(
        paths.some((p) => p.startsWith(`${link}/`)),
        link,
      ).toBe(true);
  });
});

describe("the shim table", () => {
  it("has a record for every shim of the release fixtures", () => {
    const missing = [...releaseShims()].filter(([name]) => !SHIMS.has(name)).map(([n, f]) => `${n} (${f})`);
    expect(missing).toEqual([]);
  });

  it("has the default shim among the vetted ones", () => {
    expect(catalog.shims.has(DEFAULT_SHIM)).toBe(true);
  });

  it("every TEE a shim runs on has its feature set by rules/features.toml from its security fact", () => {
    const rules = featureRules();
    for (const key of new Set(records.map(([, r]) => r.tee))) {
      if (key === "none") continue;
      const feature = TEES[key].feature;
      expect(feature, key).not.toBe("none");
      expect(rules.get(feature), `${key}: no rule sets ${feature}`).toContain(`security.${key}.usable`);
    }
  });
});
