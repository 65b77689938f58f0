// install's and uninstall's text, rendered from the result objects their --json prints: each line
// says what a field holds, and nothing the object does not.
import { describe, expect, it } from "vitest";
import { type InstallResult, installChanged, renderInstall } from "../../src/output/install.js";
import { renderUninstall, type UninstallDone } from "../../src/output/uninstall.js";

const nothing: InstallResult = {
  recovered: false,
  artifacts: { staged: null, switched: false, repaired: 0 },
  pulled: null,
  files: { written: [], removed: [], setAside: [], runtimeChanged: false },
  restarted: null,
  served: "not-asked",
  kept: [],
  warnings: [],
};

describe("renderInstall", () => {
  it("a no-op: the files line and nothing to do", () => {
    expect(installChanged(nothing)).toBe(false);
    expect(renderInstall(nothing, { prefix: "/opt/kata" })).toBe(
      "Files: 0 written, 0 removed.\nNothing to do: the node is as the plan wants it.\n",
    );
  });

  it("each field its line: the rollback, the switch, what was kept and set aside, the restart", () => {
    const result: InstallResult = {
      ...nothing,
      recovered: true,
      savedPlan: "applied",
      artifacts: {
        staged: { id: "abc", dir: "/opt/kata/versions/abc", files: 3, bytes: 42, copied: true },
        switched: true,
        repaired: 0,
      },
      files: {
        written: ["/etc/containerd/config.toml"],
        removed: [],
        setAside: [{ path: "/a", to: "/a.edited" }],
        runtimeChanged: true,
      },
      restarted: { kind: "restart-runtime", target: "containerd" } as InstallResult["restarted"],
      served: "handlers",
      kept: ["/opt/kata/versions/old.kept/bin/my-tool"],
    };
    expect(installChanged(result)).toBe(true);
    expect(renderInstall(result, { plan: "n1.plan.json", prefix: "/opt/kata" }).split("\n")).toEqual([
      "An earlier install had been cut short: it was rolled back first.",
      "The saved plan n1.plan.json is applied already: the node is as it leaves it, and the plan made again now changes nothing.",
      "Artifacts: version abc (3 files, 42 bytes) switched in.",
      "  kept /opt/kata/versions/old.kept/bin/my-tool: not kata-install's (it was /opt/kata/bin/my-tool); the version it was in is gone",
      "Files: 1 written, 0 removed.",
      "  set aside /a as /a.edited: edited since kata-install wrote it, with the edit in it",
      "Runtime: restarted containerd, and it serves the Kata handlers.",
      "",
    ]);
  });
});

describe("renderUninstall", () => {
  const base: UninstallDone = {
    nothingInstalled: false,
    restored: ["/etc/containerd/config.toml"],
    removed: ["/etc/containerd/conf.d/50-kata-install.toml"],
    leftEdited: [],
    unloadable: [],
    runtimeChanged: true,
    restartOwed: false,
    recovered: false,
    restarted: { kind: "restart-runtime", target: "containerd" } as UninstallDone["restarted"],
    heldRuntime: null,
    takenOverFromKataDeploy: false,
    goneHandlers: [],
  };

  it("what was given back and the restart", () => {
    expect(renderUninstall(base)).toBe(
      "Restored 1 file(s), removed 1, and the artifacts.\nRuntime: restarted containerd, and it answers.",
    );
  });

  it("a takeover's node says it has no Kata now; a runtime held on an unloadable file is named", () => {
    const text = renderUninstall({
      ...base,
      restarted: null,
      unloadable: ["/etc/containerd/config.toml"],
      heldRuntime: "containerd",
      takenOverFromKataDeploy: true,
      goneHandlers: ["kata-qemu"],
    });
    expect(text).toContain("kata-deploy's install is not restored");
    expect(text).toContain("(kata-qemu gone)");
    expect(text).toContain(
      "Runtime: not restarted: it would not start on /etc/containerd/config.toml; it runs on what it loaded before",
    );
    expect(text).not.toContain("Runtime: restarted");
  });
});
