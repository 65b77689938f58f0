// The runtime layouts are the one place a container runtime is described: every kind has one, is
// detected, and what the stages read of it holds together.
import { describe, expect, it } from "vitest";
import { IN_PLACE_VAR } from "../../../src/decide/decide.js";
import { evaluate } from "../../../src/decide/match.js";
import {
  containerdVersion,
  DETECTION_ORDER,
  layoutFacts,
  RUNTIME_LAYOUTS,
  restartFor,
} from "../../../src/detect/runtime/layouts.js";
import { RuntimeKind } from "../../../src/detect/runtime/schema.js";
import { rules } from "../../helpers/decide.js";

describe("runtime layouts", () => {
  it("every kind is detected, once, and its record is its own", () => {
    expect([...DETECTION_ORDER].sort()).toEqual([...RuntimeKind.options].sort());
    for (const kind of RuntimeKind.options) expect(RUNTIME_LAYOUTS[kind].kind).toBe(kind);
  });

  it("a runtime whose handlers live in a template names it; one restarted by name is found by it", () => {
    for (const layout of Object.values(RUNTIME_LAYOUTS)) {
      if (layout.handlers.kind === "template")
        expect(layout.templates.length, layout.kind).toBeGreaterThan(0);
      if (layout.restart.kind !== "none") expect(restartFor(layout.restart.target)).toBe(layout.restart);
    }
    expect(restartFor("k3s")).toMatchObject({ kind: "systemd", units: ["k3s", "k3s-agent"] });
    expect(restartFor("nothing")).toBeNull();
  });

  it("the variable decide reads for containerd's placement is one the rules set", () => {
    expect(rules.vars.has(IN_PLACE_VAR)).toBe(true);
  });

  it("a kind more specific than another is of its family, and detected before it", () => {
    for (const layout of Object.values(RUNTIME_LAYOUTS)) {
      if (layout.moreSpecificThan === "none") continue;
      expect(layout.family, layout.kind).toBe(RUNTIME_LAYOUTS[layout.moreSpecificThan].family);
      expect(DETECTION_ORDER.indexOf(layout.kind), layout.kind).toBeLessThan(
        DETECTION_ORDER.indexOf(layout.moreSpecificThan),
      );
    }
    // The order detection had before it was derived, kept for the kinds of then (a new one may go anywhere).
    const before = ["k0s", "k3s", "rke2", "microk8s", "crio", "containerd"];
    expect(DETECTION_ORDER.filter((k) => before.includes(k))).toEqual(before);
  });

  it("a kind of a family other than the family's own runtime embeds it: more specific than it, so detected first", () => {
    // A new containerd-based kind left as "none" would be detected after containerd, whose evidence
    // (its binary, its socket) a node of that kind may show too.
    for (const layout of Object.values(RUNTIME_LAYOUTS))
      expect(layout.moreSpecificThan, layout.kind).toBe(
        layout.kind === layout.family ? "none" : layout.family,
      );
  });

  it("a kind reports its family's version exactly when it is the family's own runtime; only containerd's is containerd's", () => {
    // An embedding distribution prints its own (k3s v1.31), which says nothing of its containerd's.
    for (const layout of Object.values(RUNTIME_LAYOUTS))
      expect(layout.versionOf, layout.kind).toBe(layout.kind === layout.family ? "family" : "distribution");
    expect(containerdVersion({ kind: "containerd", version: "2.1.5" })).toEqual([2, 1, 5]);
    expect(containerdVersion({ kind: "k3s", version: "1.31.2" })).toBeNull();
    expect(containerdVersion({ kind: "crio", version: "1.31.2" })).toBeNull();
    expect(containerdVersion({ kind: "containerd", version: null })).toBeNull();
  });

  it("the kinds with a kubelet of their own keep the default directories; the embedding ones name theirs", () => {
    // A kind that embeds its family's runtime is a distribution: it embeds the kubelet too, and
    // kata-deploy knows it by a K8S_DISTRIBUTION of its own. Only the family's own runtime is "own".
    for (const layout of Object.values(RUNTIME_LAYOUTS)) {
      const embeds = layout.moreSpecificThan !== "none";
      expect(layout.kubelet, layout.kind).toBe(embeds ? "embedded" : "own");
      expect(layout.distribution === "none", layout.kind).toBe(!embeds);
    }
  });

  // The data-loss path: containerd 1.6 and 1.7 replace the main file's CRI table with an imported
  // one's. Every kind whose handlers go into containerd's own config.toml meets the rule that keeps
  // them there, by its placement, whatever it is called; the others never do.
  it.each(Object.values(RUNTIME_LAYOUTS).map((l) => [l.kind, l] as const))(
    "%s: containerd 1.6 edits config.toml in place exactly when its handlers go there",
    (kind, layout) => {
      const inPlace = rules.rules.filter((r) => r.vars[IN_PLACE_VAR] === true);
      const facts = { runtime: { kind, ...layoutFacts(kind), version: "1.6.12", configExists: true } };
      const met = inPlace.some((rule) => evaluate(rule.match, { ...facts, vars: {} }));
      expect(met).toBe(layout.handlers.kind === "containerd");
    },
  );
});
