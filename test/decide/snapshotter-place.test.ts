// Where erofs and nydus can be set up, for every runtime kind the layouts know: only a drop-in of
// kata-install's own carries them, so a kind's handler placement decides it.
import { describe, expect, it } from "vitest";
import { setupCheck, snapshotterPlace } from "../../src/decide/snapshotter-place.js";
import { RUNTIME_LAYOUTS } from "../../src/detect/runtime/layouts.js";
import { RuntimeKind } from "../../src/detect/runtime/schema.js";

describe("snapshotterPlace", () => {
  it.each(RuntimeKind.options)("%s: from its layout's handler placement", (kind) => {
    const placement = RUNTIME_LAYOUTS[kind].handlers.kind;
    const expected = placement === "crio" ? "crio" : placement === "template" ? "template" : "drop-in";
    expect(snapshotterPlace(kind, false)).toBe(expected);
    // containerd's own file edited in place carries nothing of a snapshotter's, whatever the kind.
    expect(snapshotterPlace(kind, true)).toBe(expected === "drop-in" ? "in-place" : expected);
  });

  it("the kinds that embed containerd get the drop-in, CRI-O and microk8s do not", () => {
    expect(RuntimeKind.options.filter((k) => snapshotterPlace(k, false) === "drop-in").sort()).toEqual(
      RuntimeKind.options.filter((k) => !["crio", "microk8s"].includes(k)).sort(),
    );
  });

  it("a setup check is the decide stage's, failed, under snapshotter-setup unless named", () => {
    expect(setupCheck("warning", "m", "h")).toEqual({
      id: "snapshotter-setup",
      severity: "warning",
      status: "fail",
      message: "m",
      hint: "h",
      rule: "decide",
    });
    expect(setupCheck("error", "m", "h", "erofs-utils").id).toBe("erofs-utils");
  });
});
