// The runtime layouts are the one place a container runtime is described: every kind has one, is
// detected, and what the stages read of it holds together.
import { describe, expect, it } from "vitest";
import { IN_PLACE_VAR } from "../../../src/decide/decide.js";
import { DETECTION_ORDER, RUNTIME_LAYOUTS, restartFor } from "../../../src/detect/runtime/layouts.js";
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
      if (layout.restart) expect(restartFor(layout.restart.target)).toBe(layout.restart);
    }
    expect(restartFor("k3s")?.units).toEqual(["k3s", "k3s-agent"]);
    expect(restartFor("nothing")).toBeNull();
  });

  it("the variable decide reads for containerd's placement is one the rules set", () => {
    expect(rules.vars.has(IN_PLACE_VAR)).toBe(true);
  });
});
