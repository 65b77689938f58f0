// nydus-snapshotter's source directory read as EXPERIMENTAL_SETUP_SNAPSHOTTER=nydus asks: only then,
// from kata-deploy's image's place or the variable's, its binaries hashed and kata-deploy's two
// texts checked, each problem naming the file.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadNydusSource } from "../../src/inputs/nydus-source.js";

const SOURCE = path.resolve(import.meta.dirname, "../fixtures/nydus-snapshotter");
const SETUP = { EXPERIMENTAL_SETUP_SNAPSHOTTER: "nydus", KATA_INSTALL_NYDUS_SNAPSHOTTER_DIR: SOURCE };

describe("the source directory", () => {
  it("the directory is read only when nydus is named; kata-deploy's image's place by default", () => {
    expect(loadNydusSource({ KATA_INSTALL_NYDUS_SNAPSHOTTER_DIR: SOURCE })).toBeNull();
    expect(loadNydusSource({ EXPERIMENTAL_SETUP_SNAPSHOTTER: "nydus" })).toMatchObject({
      ok: false,
      dir: "/opt/kata-artifacts/nydus-snapshotter",
      variable: null,
    });
    const loaded = loadNydusSource(SETUP);
    expect(loaded).toMatchObject({ ok: true, dir: SOURCE, variable: "KATA_INSTALL_NYDUS_SNAPSHOTTER_DIR" });
    if (loaded?.ok) {
      expect(Object.keys(loaded.files)).toEqual(["containerd-nydus-grpc", "nydus-overlayfs"]);
      expect(loaded.files["nydus-overlayfs"]).toMatchObject({ from: `${SOURCE}/nydus-overlayfs`, size: 81 });
      expect(loaded.files["nydus-overlayfs"].sha256).toMatch(/^[0-9a-f]{64}$/);
      // kata-deploy's own texts beside them, read as they are: their placeholders still unfilled.
      expect(loaded.texts.unit.from).toBe(`${SOURCE}/nydus-snapshotter.service`);
      expect(loaded.texts.unit.text).toContain("WantedBy=@CRI_SERVICE@");
      expect(loaded.texts.config.text).toContain('address = "@SNAPSHOTTER_GRPC_SOCKET_ADDRESS@"');
    }
  });

  /** A copy of the source with `name`'s text replaced. */
  const sourceWith = (name: string, text: string) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nydus-source-"));
    fs.cpSync(SOURCE, dir, { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
    return dir;
  };

  it("kata-deploy's texts are filled in as it fills them, or refused naming the file and the placeholder", () => {
    const unit = fs.readFileSync(path.join(SOURCE, "nydus-snapshotter.service"), "utf8");
    const config = fs.readFileSync(path.join(SOURCE, "config-guest-pulling.toml"), "utf8");
    const problem = (name: string, text: string) => {
      const dir = sourceWith(name, text);
      const loaded = loadNydusSource({ ...SETUP, KATA_INSTALL_NYDUS_SNAPSHOTTER_DIR: dir });
      return loaded?.ok ? null : loaded?.problem.replace(dir, "<dir>");
    };
    expect(problem("nydus-snapshotter.service", unit)).toBeNull();
    expect(problem("nydus-snapshotter.service", `${unit}Environment=X=@NYDUS_LOG_LEVEL@\n`)).toBe(
      "<dir>/nydus-snapshotter.service: @NYDUS_LOG_LEVEL@ is not a placeholder kata-deploy fills in (it fills @CONTAINERD_NYDUS_GRPC_BINARY@, @CONFIG_GUEST_PULLING@, @CRI_SERVICE@)",
    );
    expect(
      problem("nydus-snapshotter.service", unit.replace("@CONTAINERD_NYDUS_GRPC_BINARY@", "/usr/bin/x")),
    ).toBe(
      "<dir>/nydus-snapshotter.service: has no @CONTAINERD_NYDUS_GRPC_BINARY@: kata-install would not run what it copies, where containerd looks for it",
    );
    expect(problem("config-guest-pulling.toml", config.replace("[daemon]", "[daemon"))).toMatch(
      /^<dir>\/config-guest-pulling.toml: is not TOML once filled in: invalid TOML at line 9, /,
    );
  });
});
