// The decide stage reads no files (issue 24): src/inputs/ reads what it needs and hands it text,
// bytes and parsed data. Held two ways: no module of src/decide/ imports what reads files, and
// deciding from inputs already read makes no call to fs at all.
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { loadArtifactCatalogue } from "../../src/artifacts/catalogue.js";
import { parseCatalog } from "../../src/decide/catalog.js";
import { decideFor } from "../../src/decide/decide-for.js";
import { ENGINE_CHECKS } from "../../src/decide/engine-checks.js";
import { parseOverrides } from "../../src/decide/overrides.js";
import { parseRules } from "../../src/decide/rules.js";
import { readDataFile } from "../../src/inputs/data-file.js";
import { loadNydusSource } from "../../src/inputs/nydus-source.js";
import { ruleFilesIn } from "../../src/inputs/rules.js";
import { factsOf, RULES, releaseFor } from "../helpers/decide.js";
import { arm64Containerd20 } from "../helpers/nodes.js";

const DECIDE = path.resolve("src/decide");

/** What reads files: Node's fs, the readers of a user's and a host's files, kata-install's data. */
const READERS = [
  /^(node:)?fs(\/promises)?$/,
  /^\.\.\/input-file\.js$/,
  /^\.\.\/host\//,
  /^\.\.\/inputs\//,
  /^\.\.\/package-root\.js$/,
];

function importsOf(text: string): string[] {
  return [...text.matchAll(/\b(?:import|export)\s[^;]*?\bfrom\s*"([^"]+)"|\bimport\s*\(?\s*"([^"]+)"/g)].map(
    (m) => m[1] ?? m[2] ?? "",
  );
}

describe("src/decide/ reads no files", () => {
  it("no module of it imports what reads files", () => {
    const modules = fs.readdirSync(DECIDE).filter((name) => name.endsWith(".ts"));
    expect(modules.length).toBeGreaterThan(10);
    const offending = modules.flatMap((name) =>
      importsOf(fs.readFileSync(path.join(DECIDE, name), "utf8"))
        .filter((from) => READERS.some((reader) => reader.test(from)))
        .map((from) => `${name}: ${from}`),
    );
    expect(offending).toEqual([]);
  });

  it("the import scan sees each form of import", () => {
    expect(
      importsOf(
        'import fs from "node:fs";\nimport {\n  a,\n} from "../host/host.js";\nexport { b } from "../inputs/x.js";\nimport "../toml-data.js";\nawait import("node:fs/promises");',
      ),
    ).toEqual(["node:fs", "../host/host.js", "../inputs/x.js", "../toml-data.js", "node:fs/promises"]);
  });

  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("parsing the inputs read and deciding for a node call no fs function", async () => {
    const env = {
      EXPERIMENTAL_SETUP_SNAPSHOTTER: "nydus",
      KATA_INSTALL_NYDUS_SNAPSHOTTER_DIR: path.resolve("test/fixtures/nydus-snapshotter"),
      SHIMS_AARCH64: "qemu qemu-coco-dev-runtime-rs",
    };
    // Everything read first: the node, the release, kata-install's data, the nydus source.
    const facts = await factsOf(arm64Containerd20(), env);
    const release = releaseFor(facts.arch);
    const shims = readDataFile(path.join(RULES, "shims.toml"));
    const values = readDataFile(path.join(RULES, "config-values.toml"));
    const artifacts = loadArtifactCatalogue();
    const ruleTexts = ruleFilesIn(RULES).map(readDataFile);
    const nydusSource = loadNydusSource(env);
    const calls: string[] = [];
    for (const name of [
      "readFileSync",
      "readSync",
      "openSync",
      "readdirSync",
      "statSync",
      "lstatSync",
      "existsSync",
      "readlinkSync",
      "realpathSync",
    ] as const)
      vi.spyOn(fs, name).mockImplementation((() => {
        calls.push(name);
        throw new Error(`decide called fs.${name}`);
      }) as never);
    const catalog = parseCatalog({ shims, artifacts, values });
    const rules = parseRules(ruleTexts, catalog);
    const checkIds = new Set([...rules.checkIds, ...ENGINE_CHECKS]);
    const overrides = parseOverrides(
      "/etc/kata-containers/kata-install.toml",
      '[config.qemu]\n"hypervisor.qemu.default_vcpus" = 2\n',
      catalog,
      checkIds,
    );
    const prepared = {
      catalog,
      rules,
      overrides,
      flags: { ignorePreflightErrors: [] },
      env,
      userDropIn: null,
      nydusSource,
    };
    const { decision } = decideFor(prepared, facts, release);
    vi.restoreAllMocks();
    expect(calls).toEqual([]);
    expect(decision.nydus?.name).toBe("nydus-for-kata-tee");
    expect(decision.config.qemu?.["hypervisor.qemu.default_vcpus"]?.value).toBe(2);
  });
});
