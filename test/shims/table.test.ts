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
import { LINKS } from "../../src/release/links.js";
import { type ChartShim, DEFAULT_SHIM, SHIMS, type ShimRecord } from "../../src/shims/table.js";
import { TEE_KEYS, TEES } from "../../src/shims/tees.js";
import { RULES } from "../helpers/decide.js";
import { objects } from "../helpers/manifests.js";
import { readList } from "../helpers/release.js";

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
const catalogue = loadArtifactCatalogue(path.resolve("artifacts/catalogue.toml"));

/**
 * Release directories an artifact puts files in that the prefix deliberately does not link
 * through `current`, each with why.
 */
const UNLINKED: Record<string, string> = {
  // The release's configurations (meta) are read in `current` by kata-install; the prefix's
  // share/defaults holds the configurations it renders (decide/layout.ts), a directory of its own.
  "share/defaults": "kata-install renders the prefix's own configurations there",
};

/** The directory a release file is reached through: share/<dir> under share/, else its top one; null for a top-level file. */
function linkedDir(file: string): string | null {
  const parts = file.split("/");
  if (parts.length < 2) return null;
  return parts[0] === "share" ? `share/${parts[1]}` : (parts[0] as string);
}
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

  it("links every release directory an artifact puts files in, but those deliberately not", () => {
    // A shim whose artifact brings a directory of its own (share/kata-qemu) without it in the
    // shim's `links` would find nothing there: its configuration names <prefix>/share/….
    const lists = fs.readdirSync(path.resolve("test/fixtures/release")).filter((f) => f.endsWith(".list"));
    /** Directory → the first file found in it. */
    const unlinked = new Map<string, string>();
    const seen = new Set<string>();
    for (const list of lists)
      for (const entry of readList(list.replace(/\.list$/, ""))) {
        const file = entry.path.replace(/^opt\/kata\//, "");
        const dir = linkedDir(file);
        if (entry.type === "d" || dir === null || catalogue.ownerOf(file).kind !== "artifact") continue;
        seen.add(dir);
        if (!LINKS.includes(dir) && !(dir in UNLINKED) && !unlinked.has(dir)) unlinked.set(dir, file);
      }
    // And every directory an artifact's paths name, files of it in the release lists or not yet
    // (a shim added before its release's lists are in the fixtures).
    for (const spec of catalogue.values())
      for (const glob of spec.paths) {
        const dir = linkedDir(glob);
        if (dir === null || /[*?[{]/.test(dir)) continue;
        if (!LINKS.includes(dir) && !(dir in UNLINKED) && !unlinked.has(dir))
          unlinked.set(dir, `artifact ${spec.name}: ${glob}`);
      }
    expect([...unlinked].map(([dir, file]) => `${dir} (${file})`)).toEqual([]);
    // Each left unlinked is in the release, and not linked after all: the list cannot go stale.
    for (const dir of Object.keys(UNLINKED)) {
      expect(seen.has(dir), dir).toBe(true);
      expect(LINKS, dir).not.toContain(dir);
    }
  });

  it("the chart's RuntimeClasses, as rendered, have their shims' overheads", () => {
    const manifest = fs.readFileSync("test/fixtures/kata-deploy/helm-release/manifest.yaml", "utf8");
    const classes = objects(manifest).filter((o) => o?.kind === "RuntimeClass");
    expect(classes.length).toBeGreaterThan(0);
    for (const rc of classes) {
      const shim = rc.metadata.name.replace(/^kata-/, "");
      expect((rc.overhead as { podFixed: unknown }).podFixed, shim).toEqual(
        SHIMS.get(shim)?.runtimeClass.overhead,
      );
    }
  });

  it("a chart shim's record must name its overhead; only a shim the chart lacks takes the default", () => {
    const parts = { vetting: "none", tee: "none", links: "none" } as const;
    const chart = { arches: ["amd64"], snapshotter: "", guestPull: false, enabled: true } satisfies ChartShim;
    const halfAdded: ShimRecord = {
      ...parts,
      chart,
      // @ts-expect-error: the chart's runtimeclasses template sets an overhead for each of its shims
      runtimeClass: { overhead: "default", nodeSelector: "none" },
    };
    const notInChart: ShimRecord = {
      ...parts,
      chart: "none",
      runtimeClass: { overhead: "default", nodeSelector: "none" },
    };
    // The check is tsc's (npm test type-checks the tests): were a chart shim allowed the default,
    // the directive above would be unused, an error.
    expect([halfAdded, notInChart].map((r) => r.chart === "none")).toEqual([false, true]);
  });
});
