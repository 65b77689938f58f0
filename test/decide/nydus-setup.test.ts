// EXPERIMENTAL_SETUP_SNAPSHOTTER=nydus decided as kata-deploy decides it: set up on containerd (its
// nydus-for-kata-tee, named with MULTI_INSTALL_SUFFIX), its binaries read and hashed from the
// source directory, ignored on CRI-O and not set up where containerd is edited in place or embedded
// (warnings), an error when the binaries are not there; the TEE shims' default and a mapping to
// "nydus" then name the instance; a kata-deploy takeover with nydus-for-kata-tee carried over.
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { Decision } from "../../src/decide/decision.js";
import { parseEnv } from "../../src/decide/env.js";
import { takeoverSnapshotterChecks } from "../../src/decide/takeover.js";
import { check, decideOn, factsOf } from "../helpers/decide.js";
import {
  amdSnpCrio,
  arm64Containerd20,
  intelContainerd16,
  intelContainerd17,
  k0sNode,
  k3sImportingDropIns,
  rke2Node,
} from "../helpers/nodes.js";
import type { NodeSpec } from "../helpers/test-host.js";

const SOURCE = path.resolve(import.meta.dirname, "../fixtures/nydus-snapshotter");
const SETUP = { EXPERIMENTAL_SETUP_SNAPSHOTTER: "nydus", KATA_INSTALL_NYDUS_SNAPSHOTTER_DIR: SOURCE };
const failing = (decision: Decision) =>
  decision.checks.filter((c) => c.id === "snapshotter-setup" && c.status === "fail");

/** nydus not set up, and one failing check that says why. */
function notSetUp(decision: Decision, severity: string, message: string, hint?: string): void {
  expect(decision.nydus).toBeNull();
  expect(failing(decision)).toEqual([
    expect.objectContaining({ severity, message, ...(hint === undefined ? {} : { hint }) }),
  ]);
}

describe("the variable", () => {
  it("nydus is a name kata-install sets up, beside erofs", () => {
    expect(
      parseEnv({ EXPERIMENTAL_SETUP_SNAPSHOTTER: "nydus, erofs,nydus" }, "x86_64").setupSnapshotters,
    ).toEqual({
      value: ["nydus", "erofs"],
      name: "EXPERIMENTAL_SETUP_SNAPSHOTTER",
    });
  });
});

describe("containerd 2.x: set up, the TEE shims on it", () => {
  it("nydus-for-kata-tee, from the source, its binaries hashed; the chart's TEE default names it", async () => {
    const decision = await decideOn(arm64Containerd20(), {
      env: { ...SETUP, SHIMS_AARCH64: "qemu qemu-coco-dev-runtime-rs" },
    });
    expect(failing(decision)).toEqual([]);
    expect(decision.nydus).toMatchObject({
      name: "nydus-for-kata-tee",
      source: { kind: "env", name: "EXPERIMENTAL_SETUP_SNAPSHOTTER" },
      from: { dir: SOURCE, source: { kind: "env", name: "KATA_INSTALL_NYDUS_SNAPSHOTTER_DIR" } },
      criUnits: ["containerd.service"],
    });
    expect(decision.handlers["qemu-coco-dev-runtime-rs"]?.snapshotter?.value).toBe("nydus-for-kata-tee");
    expect(decision.handlers.qemu?.snapshotter).toBeUndefined();
    expect(check(decision, "guest-pull-default")).toBeUndefined();
  });

  it("MULTI_INSTALL_SUFFIX names the instance; a mapping to nydus is written as it, as kata-deploy writes it", async () => {
    const decision = await decideOn(arm64Containerd20(), {
      env: {
        ...SETUP,
        MULTI_INSTALL_SUFFIX: "blue",
        SHIMS_AARCH64: "qemu",
        SNAPSHOTTER_HANDLER_MAPPING_AARCH64: "qemu:nydus",
      },
    });
    expect(decision.nydus?.name).toBe("nydus-for-kata-tee-blue");
    expect(decision.handlers.qemu?.snapshotter).toMatchObject({
      value: "nydus-for-kata-tee-blue",
      source: { kind: "env", name: "SNAPSHOTTER_HANDLER_MAPPING_AARCH64" },
    });
    expect(check(decision, "handler-snapshotter")).toBeUndefined();
  });

  it('a custom runtime\'s snapshotter = "nydus" names the instance too, as kata-deploy writes it; without the setup it stays nydus and is refused', async () => {
    const overrides = '[custom_runtimes.kata-qemu-guest-pull]\nbase = "qemu"\nsnapshotter = "nydus"\n';
    const decision = await decideOn(arm64Containerd20(), {
      env: { ...SETUP, MULTI_INSTALL_SUFFIX: "blue", SHIMS_AARCH64: "qemu" },
      overrides,
    });
    const custom = decision.customRuntimes.find((c) => c.handler === "kata-qemu-guest-pull");
    expect(custom?.settings.snapshotter?.value).toBe("nydus-for-kata-tee-blue");
    expect(check(decision, "handler-snapshotter")).toBeUndefined();
    const without = await decideOn(arm64Containerd20(), { env: { SHIMS_AARCH64: "qemu" }, overrides });
    expect(
      without.customRuntimes.find((c) => c.handler === "kata-qemu-guest-pull")?.settings.snapshotter?.value,
    ).toBe("nydus");
    expect(check(without, "handler-snapshotter")?.message).toContain(
      'custom_runtimes.kata-qemu-guest-pull.snapshotter maps kata-qemu-guest-pull to the snapshotter "nydus", which is not configured on this node',
    );
  });

  it("without the variable, a mapping to nydus on a node without one is refused as before", async () => {
    const decision = await decideOn(arm64Containerd20(), {
      env: { SHIMS_AARCH64: "qemu", SNAPSHOTTER_HANDLER_MAPPING_AARCH64: "qemu:nydus" },
    });
    expect(decision.nydus).toBeNull();
    expect(check(decision, "handler-snapshotter")?.severity).toBe("error");
  });

  it("the binaries not there: an error naming each path and what to do", async () => {
    const decision = await decideOn(arm64Containerd20(), {
      env: { EXPERIMENTAL_SETUP_SNAPSHOTTER: "nydus", KATA_INSTALL_NYDUS_SNAPSHOTTER_DIR: "/nonexistent" },
    });
    notSetUp(
      decision,
      "error",
      "EXPERIMENTAL_SETUP_SNAPSHOTTER=nydus: nydus-snapshotter's files are not there to copy: /nonexistent/containerd-nydus-grpc does not exist; /nonexistent/nydus-overlayfs does not exist; /nonexistent/config-guest-pulling.toml does not exist; /nonexistent/nydus-snapshotter.service does not exist",
      "run kata-install from kata-deploy's image (it carries them in /opt/kata-artifacts/nydus-snapshotter/), or point KATA_INSTALL_NYDUS_SNAPSHOTTER_DIR at a copy of that directory: containerd-nydus-grpc, nydus-overlayfs, config-guest-pulling.toml, nydus-snapshotter.service; or take nydus out of EXPERIMENTAL_SETUP_SNAPSHOTTER",
    );
  });
});

describe("containerd's own file edited in place (containerd 1.x): set up there too, as kata-deploy sets it up", () => {
  it("containerd 1.7: nydus bound to containerd.service, no check failing; the TEE shim's handler maps to it", async () => {
    const decision = await decideOn(intelContainerd17(), { env: { ...SETUP, SHIMS: "qemu qemu-coco-dev" } });
    expect(decision.containerdInPlace.value).toBe(true);
    expect(decision.nydus).toMatchObject({ name: "nydus-for-kata-tee", criUnits: ["containerd.service"] });
    expect(failing(decision)).toEqual([]);
    expect(decision.handlers["qemu-coco-dev"]?.snapshotter?.value).toBe("nydus-for-kata-tee");
  });
});

describe("where it is not set up: said, as a warning", () => {
  it("containerd 1.6: no snapshotter per handler, so no handler could use it; the TEE default falls back as before", async () => {
    const decision = await decideOn(intelContainerd16(), { env: { ...SETUP, SHIMS: "qemu qemu-coco-dev" } });
    notSetUp(
      decision,
      "warning",
      "EXPERIMENTAL_SETUP_SNAPSHOTTER=nydus: containerd 1.6.12 has no snapshotter per runtime handler (1.7 and later have), so no handler could pull through nydus: nydus is not set up here",
    );
    expect(decision.handlers["qemu-coco-dev"]?.snapshotter ?? null).toBeNull();
  });

  it("CRI-O: ignored there, as kata-deploy ignores it", async () => {
    const decision = await decideOn(amdSnpCrio(), { env: SETUP });
    notSetUp(
      decision,
      "warning",
      "EXPERIMENTAL_SETUP_SNAPSHOTTER=nydus: the nydus snapshotter is a containerd proxy plugin, and this node runs CRI-O: ignored here (as kata-deploy ignores it)",
    );
  });

  it("CRI-O: the binaries are not even needed", async () => {
    const decision = await decideOn(amdSnpCrio(), {
      env: { EXPERIMENTAL_SETUP_SNAPSHOTTER: "nydus", KATA_INSTALL_NYDUS_SNAPSHOTTER_DIR: "/nonexistent" },
    });
    expect(failing(decision).map((c) => c.severity)).toEqual(["warning"]);
  });

  it("k3s without a unit file of its own: which unit nydus's must start before is not known; not set up, said", async () => {
    const decision = await decideOn(k3sImportingDropIns(), { env: SETUP });
    expect(decision.nydus).toBeNull();
    expect(failing(decision)[0]?.message).toBe(
      "EXPERIMENTAL_SETUP_SNAPSHOTTER=nydus: nydus's unit must start before the unit that runs k3s's containerd, and no unit file of k3s.service, k3s-agent.service is on this node (looked for in /etc/systemd/system, /run/systemd/system, /usr/local/lib/systemd/system, /usr/lib/systemd/system, /lib/systemd/system): nydus is not set up here",
    );
  });
});

describe("the distributions that embed containerd: bound to the unit that runs it, as kata-deploy binds it", () => {
  const withUnits = (spec: NodeSpec, units: string[]) => {
    for (const unit of units) spec.files = { ...spec.files, [unit]: "[Service]\nExecStart=/bin/true\n" };
    return spec;
  };

  it("a k3s agent: nydus's unit before k3s-agent.service, wanted by it", async () => {
    const decision = await decideOn(
      withUnits(k3sImportingDropIns(), ["/etc/systemd/system/k3s-agent.service"]),
      {
        env: SETUP,
      },
    );
    expect(failing(decision)).toEqual([]);
    expect(decision.nydus?.criUnits).toEqual(["k3s-agent.service"]);
  });

  it("rke2's server, its unit where rke2's installer puts it", async () => {
    const decision = await decideOn(
      withUnits(rke2Node(), ["/usr/local/lib/systemd/system/rke2-server.service"]),
      { env: SETUP },
    );
    expect(failing(decision)).toEqual([]);
    expect(decision.nydus?.criUnits).toEqual(["rke2-server.service"]);
  });

  it("k0s, a controller that also runs workloads with both units: both, in the layout's order", async () => {
    const decision = await decideOn(
      withUnits(k0sNode(), [
        "/etc/systemd/system/k0scontroller.service",
        "/etc/systemd/system/k0sworker.service",
      ]),
      { env: SETUP },
    );
    expect(failing(decision)).toEqual([]);
    expect(decision.nydus?.criUnits).toEqual(["k0sworker.service", "k0scontroller.service"]);
  });

  it("the unit files are looked for only when nydus is asked for", async () => {
    const spec = withUnits(k3sImportingDropIns(), ["/etc/systemd/system/k3s.service"]);
    expect((await factsOf(spec, {})).runtime.units).toBeUndefined();
    expect((await factsOf(spec, SETUP)).runtime.units).toEqual(["k3s.service"]);
  });
});

describe("a kata-deploy takeover", () => {
  const takeover = (paths: string[]) => ({
    shims: ["qemu"],
    settings: [],
    done: false,
    snapshotters: [{ name: "nydus", paths }],
  });
  const deployed = [
    "/opt/kata/nydus-for-kata-tee",
    "/etc/systemd/system/nydus-for-kata-tee.service",
    '/opt/kata/containerd/config.d/kata-deploy.toml: [proxy_plugins."nydus-for-kata-tee"]',
  ];

  it("nydus-for-kata-tee refuses it unless nydus is set up; then it is carried over", () => {
    expect(takeoverSnapshotterChecks(takeover(deployed), [])[0]?.message).toContain(
      "which kata-install sets up only when EXPERIMENTAL_SETUP_SNAPSHOTTER names nydus",
    );
    expect(takeoverSnapshotterChecks(takeover(deployed), ["nydus-for-kata-tee"])).toEqual([]);
  });

  it("3.x's nydus-snapshotter is replaced by nydus-for-kata-tee, as kata-deploy 4.x's upgrade does: a warning naming only it", () => {
    const checks = takeoverSnapshotterChecks(
      takeover([...deployed, "/etc/systemd/system/nydus-snapshotter.service"]),
      ["nydus-for-kata-tee"],
    );
    expect(checks).toEqual([expect.objectContaining({ id: "takeover-snapshotter", severity: "warning" })]);
    expect(checks[0]?.message).toContain(
      "kata-deploy 3.x set its nydus-snapshotter up here (/etc/systemd/system/nydus-snapshotter.service); the takeover replaces it by nydus-for-kata-tee",
    );
    // Without nydus set up, 3.x's is refused as 4.x's is.
    expect(
      takeoverSnapshotterChecks(takeover(["/etc/systemd/system/nydus-snapshotter.service"]), [])[0]?.severity,
    ).toBe("error");
  });
});
