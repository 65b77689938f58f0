// Which artifacts the chosen shims need, and whether each comes from Kata's bundled sub-container
// or the host's own package. With the release's images at hand, what a shim needs is read off its
// configuration (the release's file with the decided values over it): the images holding every
// path it names, through the links on the way. Without them (no artifact source), the node's
// installed images, or the capability table's hints when nothing is installed.

import { ReleaseTree } from "../artifacts/listing.js";
import { itemAt } from "../at.js";
import { byText } from "../compare.js";
import { mergeDropIn, moveInstallDir, parseKataToml } from "../release/config-file.js";
import { pathsIn } from "../release/named-paths.js";
import { chainsOf, RELEASE_DIR } from "../release/needs.js";
import type { ArtifactChoice, Check, Chosen } from "./decision.js";
import type { DecideInput } from "./input.js";
import {
  CAPABILITY_TABLE,
  type Decided,
  describeSource,
  isOverride,
  Ladder,
  overridesSource,
  ruleSource,
} from "./provenance.js";
import type { Rule } from "./rules.js";
import { sortByName } from "./shim-choice.js";
import type { Takeover } from "./takeover.js";

export function artifactSources(
  input: DecideInput,
  matched: Rule[],
  takeover: Takeover | null = null,
  warnings: Check[] = [],
): Map<string, Decided<"bundled" | "distro">> {
  const { catalog, overrides } = input;
  const out = new Map<string, Decided<"bundled" | "distro">>();
  for (const name of catalog.artifacts) {
    const ladder = new Ladder<"bundled" | "distro">();
    ladder.offer("bundled", { kind: "default", name: "Kata's bundled artifact" });
    for (const rule of matched) {
      const source = rule.artifactSource[name];
      if (!source) continue;
      // A takeover changes no binary kata-deploy's pods ran on (then, or at a later run), unless
      // the admin says so.
      if (takeover && source === "distro") {
        warnings.push({
          id: "takeover-shim",
          severity: "info",
          status: "fail",
          message: `kata-deploy's bundled ${name} stays on a node taken over from it, though rule ${rule.name} would use the host's: set [artifacts.${name}] source = "distro" in the overrides file to use it`,
          rule: rule.name,
        });
        continue;
      }
      ladder.offer(source, ruleSource(rule));
    }
    const pinned = overrides.artifactSources[name];
    if (pinned)
      ladder.offer(
        pinned,
        overridesSource(overrides, ["artifacts", name, "source"], `artifacts.${name}.source`),
      );
    out.set(name, ladder.resolve() as Decided<"bundled" | "distro">);
  }
  return out;
}

export function chooseArtifacts(
  input: DecideInput,
  shims: Chosen[],
  sources: Map<string, Decided<"bundled" | "distro">>,
  matched: Rule[],
  contradiction: (m: string, r: string) => void,
  config: Record<string, Record<string, Decided<unknown>>>,
  dir: string,
): { artifacts: ArtifactChoice[]; droppedArtifacts: Chosen[] } {
  const release = input.catalog.release;
  if (release?.images && shims.length > 0)
    return withRules(input, fromRelease(input, shims, sources, config, dir, contradiction), matched);
  if (release?.installed && release.installed.length > 0 && shims.length > 0)
    return withRules(
      input,
      {
        artifacts: release.installed.map((name) => ({
          name,
          reason: `installed with Kata ${release.version}; without an artifact source nothing else can be pulled`,
          source: { kind: "default", name: release.where },
          from: "bundled",
          neededBy: [],
        })),
        droppedArtifacts: [],
      },
      matched,
    );
  return withRules(input, fromHints(input, shims, sources, contradiction), matched);
}

/** The capability table's hints (src/shims/table.ts artifacts), through the catalogue's dependencies. */
function fromHints(
  input: DecideInput,
  shims: Chosen[],
  sources: Map<string, Decided<"bundled" | "distro">>,
  contradiction: (m: string, r: string) => void,
): { artifacts: ArtifactChoice[]; droppedArtifacts: Chosen[] } {
  const { catalog, facts } = input;
  // Which shims need each artifact, and through which artifacts when not directly (a guest image
  // extension needs its base image; every shim binary, the release's version files).
  const needs = new Map<string, string[]>();
  const through = new Map<string, Set<string>>();
  for (const shim of shims) {
    for (const direct of catalog.directArtifacts(shim.name, facts.arch)) {
      for (const artifact of catalog.dependencies(direct)) {
        if (!(needs.get(artifact) ?? []).includes(shim.name))
          needs.set(artifact, [...(needs.get(artifact) ?? []), shim.name]);
        if (artifact !== direct) through.set(artifact, (through.get(artifact) ?? new Set()).add(direct));
      }
    }
  }
  const via = (name: string) => {
    const by = [...(through.get(name) ?? [])].sort(byText);
    return by.length > 0 ? ` (what ${by.join(", ")} depend${by.length === 1 ? "s" : ""} on)` : "";
  };
  const artifacts: ArtifactChoice[] = [];
  const droppedArtifacts: Chosen[] = [];
  for (const [name, neededBy] of [...needs].sort(([a], [b]) => byText(a, b))) {
    const source = sources.get(name) as Decided<"bundled" | "distro">;
    if (source.value === "distro") {
      const part = catalog.hostParts.get(name);
      const hostCopy = part === undefined ? null : facts.hypervisors[part.fact];
      if (isOverride(source.source) && hostCopy?.origin !== "distro") {
        contradiction(
          `${describeSource(source.source)} uses the host's ${name}, but none was found on this node`,
          "decide",
        );
      }
      // Only shims that may run on the host's binary stop needing the bundled one.
      const stillBundled = neededBy.filter((s) => !catalog.shims.get(s)?.host_parts.includes(name));
      const where = hostCopy ? ` (${hostCopy.path}, ${hostCopy.version ?? "version unknown"})` : "";
      if (stillBundled.length === 0) {
        droppedArtifacts.push({
          name,
          reason: `the host's own ${name}${where} is used instead`,
          source: source.source,
        });
        artifacts.push({
          name,
          reason: `the host's ${name}${where}, for ${neededBy.join(", ")}`,
          source: source.source,
          from: "distro",
          neededBy,
        });
        continue;
      }
      artifacts.push({
        name,
        reason: `needed by ${stillBundled.join(", ")}, which cannot use the host's ${name}`,
        source: CAPABILITY_TABLE,
        from: "bundled",
        neededBy: stillBundled,
      });
      continue;
    }
    artifacts.push({
      name,
      reason: `needed by ${neededBy.join(", ")}${via(name)}`,
      source: source.source.kind === "default" ? CAPABILITY_TABLE : source.source,
      from: "bundled",
      neededBy,
    });
  }
  return { artifacts, droppedArtifacts };
}

/** The rules' own additions and removals, over what the shims need. */
function withRules(
  _input: DecideInput,
  chosen: { artifacts: ArtifactChoice[]; droppedArtifacts: Chosen[] },
  matched: Rule[],
): { artifacts: ArtifactChoice[]; droppedArtifacts: Chosen[] } {
  const { artifacts, droppedArtifacts } = chosen;
  for (const rule of matched) {
    for (const add of rule.addArtifacts) {
      if (!artifacts.some((a) => a.name === add.name))
        artifacts.push({
          name: add.name,
          reason: add.reason,
          source: ruleSource(rule),
          from: "bundled",
          neededBy: [],
        });
    }
    for (const drop of rule.dropArtifacts) {
      const i = artifacts.findIndex((a) => a.name === drop.name && a.from === "bundled");
      if (i >= 0) {
        artifacts.splice(i, 1);
        droppedArtifacts.push({ name: drop.name, reason: drop.reason, source: ruleSource(rule) });
      }
    }
  }
  return { artifacts: sortByName(artifacts), droppedArtifacts: sortByName(droppedArtifacts) };
}

/**
 * What is pulled though no configuration names it: the admin's asks ([artifacts.<name>] pull =
 * true) and, with DEBUG on and a shim of the Go runtime chosen, the admin tools (go-tools:
 * kata-runtime exec reaches a debug guest's console). Only what the release has: a layout split
 * before go-tools was carved out of base holds the tools in base, which the node pulls anyway.
 */
export function askedArtifacts(
  input: DecideInput,
  shims: Chosen[],
  artifacts: ArtifactChoice[],
  debug: Decided<boolean>,
): ArtifactChoice[] {
  const { catalog, overrides } = input;
  const release = catalog.release;
  const available = (name: string) =>
    release?.images
      ? release.images.has(name)
      : release?.installed && release.installed.length > 0
        ? release.installed.includes(name)
        : true;
  const out = [...artifacts];
  const add = (name: string, reason: string, source: ArtifactChoice["source"]) => {
    for (const dep of catalog.dependencies(name))
      if (available(dep) && !out.some((a) => a.name === dep))
        out.push({
          name: dep,
          reason: dep === name ? reason : `${reason} (with ${name})`,
          source,
          from: "bundled",
          neededBy: [],
        });
  };
  for (const name of overrides.artifactPulls ?? [])
    add(
      name,
      "asked for by the overrides file",
      overridesSource(overrides, ["artifacts", name, "pull"], `artifacts.${name}.pull`),
    );
  const goShims = shims.filter((s) => catalog.shims.get(s.name)?.runtime === "go").map((s) => s.name);
  if (debug.value && goShims.length > 0)
    for (const name of [...catalog.debugArtifacts].sort(byText))
      add(
        name,
        `DEBUG is on: kata-runtime exec reaches the debug console of ${goShims.join(", ")}`,
        debug.source,
      );
  return sortByName(out);
}

/** The decided values of one shim as a table, to lay over its base configuration. */
export function decidedTable(decided: Record<string, Decided<unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, entry] of Object.entries(decided)) {
    const parts = key.split(".");
    let at = out;
    for (const part of parts.slice(0, -1)) {
      if (typeof at[part] !== "object" || at[part] === null) at[part] = {};
      at = at[part] as Record<string, unknown>;
    }
    at[itemAt(parts, -1, "the last key")] = entry.value;
  }
  return out;
}

/**
 * The images the shims' configurations name, as the release holds them; the host's own
 * packages, where a shim's configuration points at one instead, listed as such.
 */
function fromRelease(
  input: DecideInput,
  shims: Chosen[],
  sources: Map<string, Decided<"bundled" | "distro">>,
  config: Record<string, Record<string, Decided<unknown>>>,
  dir: string,
  contradiction: (m: string, r: string) => void,
): { artifacts: ArtifactChoice[]; droppedArtifacts: Chosen[] } {
  const { catalog, facts } = input;
  const release = catalog.release;
  const images = release?.images;
  if (!release || !images) return { artifacts: [], droppedArtifacts: [] };
  const owner = new Map<string, string>();
  for (const [image, listing] of images) for (const e of listing) owner.set(e.path, image);
  const tree = new ReleaseTree(images.values());
  const needs = new Map<string, Map<string, string[]>>(); // image → shim → keys
  const need = (image: string, shim: string, key: string) => {
    const byShim = needs.get(image) ?? new Map<string, string[]>();
    byShim.set(shim, [...(byShim.get(shim) ?? []), key]);
    needs.set(image, byShim);
  };
  for (const { name } of shims) {
    const shipped = release.shims.get(name);
    if (shipped === undefined) continue;
    // The release's file as it will be installed here (its paths moved with the prefix), then
    // what was decided over it: what Kata will read.
    const base =
      dir === RELEASE_DIR
        ? structuredClone(shipped.config.table)
        : parseKataToml(moveInstallDir(shipped.text, dir));
    const effective = mergeDropIn(base, decidedTable(config[name] ?? {}));
    need("meta", name, "its configuration");
    for (const chain of chainsOf(pathsIn(name, effective), shipped.runtime, dir, tree))
      for (const p of chain.reached.through) {
        const image = owner.get(p);
        if (image !== undefined)
          for (const dep of catalog.dependencies(image))
            if (images.has(dep)) need(dep, name, dep === image ? chain.key : `with ${image}`);
      }
  }
  const artifacts: ArtifactChoice[] = [];
  const droppedArtifacts: Chosen[] = [];
  for (const [image, byShim] of [...needs].sort(([a], [b]) => byText(a, b))) {
    const neededBy = [...byShim.keys()].sort(byText);
    const keys = [...new Set([...byShim.values()].flat())].sort(byText);
    // Bundled by a rule's or the admin's word (a host's qemu not used): that is its source.
    const chosen = sources.get(image)?.source;
    artifacts.push({
      name: image,
      reason: `needed by ${neededBy.join(", ")} (${keys.join(", ")})`,
      source:
        chosen !== undefined && chosen.kind !== "default"
          ? chosen
          : { kind: "default", name: `Kata ${release.version}'s configuration` },
      from: "bundled",
      neededBy,
    });
  }
  // A host package standing in: the configurations point at it now, so no image holds it.
  for (const [name, part] of catalog.hostParts) {
    const source = sources.get(name);
    if (source?.value !== "distro") continue;
    const users = shims
      .filter((s) => catalog.shims.get(s.name)?.host_parts.includes(name))
      .map((s) => s.name);
    const hostCopy = facts.hypervisors[part.fact];
    if (isOverride(source.source) && hostCopy?.origin !== "distro")
      contradiction(
        `${describeSource(source.source)} uses the host's ${name}, but none was found on this node`,
        "decide",
      );
    // Still needed from the release by a shim that cannot run on the host's: the image stays.
    if (users.length === 0 || hostCopy?.origin !== "distro" || needs.has(name)) continue;
    const where = ` (${hostCopy.path}, ${hostCopy.version ?? "version unknown"})`;
    artifacts.push({
      name,
      reason: `the host's ${name}${where}, for ${users.join(", ")}`,
      source: source.source,
      from: "distro",
      neededBy: users,
    });
    droppedArtifacts.push({
      name,
      reason: `the host's own ${name}${where} is used instead`,
      source: source.source,
    });
  }
  return { artifacts: sortByName(artifacts), droppedArtifacts: sortByName(droppedArtifacts) };
}
