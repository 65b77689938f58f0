import { describe, expect, it } from "vitest";
import { deployedShim } from "../../src/detect/kata-deploy-handlers.js";
import type { RuntimeHandler } from "../../src/detect/runtime/schema.js";

const DEFAULTS = "/opt/kata/share/defaults/kata-containers";
const kata = { prefix: "/opt/kata", configs: ["configuration-qemu.toml", "configuration-clh.toml"] };
const CONFIG = "/etc/containerd/config.toml";
const handler = (h: Partial<RuntimeHandler> & { name: string }): RuntimeHandler => ({
  runtimeType: `io.containerd.${h.name}.v2`,
  runtimePath: "/opt/kata/bin/containerd-shim-kata-v2",
  configPath: null,
  file: CONFIG,
  ...h,
});

describe("deployedShim: a handler of kata-deploy's, by its shape", () => {
  it("3.x's: the release's file under the prefix; 4.x's: its copy; runtime-rs's too", () => {
    expect(
      deployedShim(
        handler({ name: "kata-qemu", configPath: `${DEFAULTS}/configuration-qemu.toml` }),
        kata,
        [],
      ),
    ).toEqual({
      shim: "qemu",
      config: `${DEFAULTS}/configuration-qemu.toml`,
    });
    expect(
      deployedShim(
        handler({ name: "kata-qemu", configPath: `${DEFAULTS}/runtimes/qemu/configuration-qemu.toml` }),
        kata,
        [],
      )?.shim,
    ).toBe("qemu");
    expect(
      deployedShim(
        handler({
          name: "kata-qemu-runtime-rs",
          runtimePath: "/opt/kata/runtime-rs/bin/containerd-shim-kata-v2",
          configPath: `${DEFAULTS}/runtime-rs/configuration-qemu-runtime-rs.toml`,
        }),
        kata,
        [],
      )?.shim,
    ).toBe("qemu-runtime-rs");
  });

  it("the oldest, with no paths: only for a shim whose configuration the prefix ships", () => {
    expect(deployedShim(handler({ name: "kata-clh", runtimePath: null }), kata, [])).toEqual({
      shim: "clh",
      config: `${DEFAULTS}/configuration-clh.toml`,
    });
    // An admin's handler of that shape, for no configuration of the release's.
    expect(deployedShim(handler({ name: "kata-qemu-mylab", runtimePath: null }), kata, [])).toBeNull();
  });

  it("an admin's handler is not kata-deploy's: another name on a shim's file, a shim elsewhere, a generic runtime type", () => {
    const config = `${DEFAULTS}/configuration-qemu.toml`;
    expect(deployedShim(handler({ name: "kata-qemu-mylab", configPath: config }), kata, [])).toBeNull();
    expect(
      deployedShim(
        handler({ name: "kata-qemu", configPath: config, runtimePath: "/usr/bin/containerd-shim-kata-v2" }),
        kata,
        [],
      ),
    ).toBeNull();
    expect(
      deployedShim(
        handler({ name: "kata-qemu", configPath: config, runtimeType: "io.containerd.kata.v2" }),
        kata,
        [],
      ),
    ).toBeNull();
    expect(
      deployedShim(
        handler({ name: "kata-qemu", configPath: "/etc/kata-containers/configuration.toml" }),
        kata,
        [],
      ),
    ).toBeNull();
  });

  it("MULTI_INSTALL_SUFFIX: kata-<shim>-<suffix> under /opt/kata-<suffix>", () => {
    const suffixed = { prefix: "/opt/kata-blue", configs: [] };
    const configPath = "/opt/kata-blue/share/defaults/kata-containers/configuration-qemu.toml";
    const runtimePath = "/opt/kata-blue/bin/containerd-shim-kata-v2";
    expect(
      deployedShim(handler({ name: "kata-qemu-blue", configPath, runtimePath }), suffixed, [])?.shim,
    ).toBe("qemu");
    expect(
      deployedShim(handler({ name: "kata-qemu-green", configPath, runtimePath }), suffixed, []),
    ).toBeNull();
  });

  it("CRI-O's (runtime type vm): only in kata-deploy's own drop-in", () => {
    const crio = handler({
      name: "kata-qemu",
      runtimeType: "vm",
      configPath: `${DEFAULTS}/configuration-qemu.toml`,
      file: "/etc/crio/crio.conf.d/99-kata-deploy",
    });
    expect(deployedShim(crio, kata, ["/etc/crio/crio.conf.d/99-kata-deploy"])?.shim).toBe("qemu");
    expect(
      deployedShim({ ...crio, file: "/etc/crio/crio.conf.d/10-mine.conf" }, kata, [
        "/etc/crio/crio.conf.d/99-kata-deploy",
      ]),
    ).toBeNull();
  });
});
