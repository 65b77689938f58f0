// Which artifacts the chosen shims need (through the catalogue's dependencies), and whether each
// comes from Kata's bundled sub-container or the host's own package.
import { byText } from "../compare.js";
import type { DecideInput } from "./decide.js";
import type { ArtifactChoice, Chosen } from "./decision.js";
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

export function artifactSources(
  input: DecideInput,
  matched: Rule[],
): Map<string, Decided<"bundled" | "distro">> {
  const { catalog, overrides } = input;
  const out = new Map<string, Decided<"bundled" | "distro">>();
  for (const name of catalog.artifacts) {
    const ladder = new Ladder<"bundled" | "distro">();
    ladder.offer("bundled", { kind: "default", name: "Kata's bundled artifact" });
    for (const rule of matched) {
      const source = rule.artifactSource[name];
      if (source) ladder.offer(source, ruleSource(rule));
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
