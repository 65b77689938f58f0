import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadTemplates, parseRendered, TemplateBug } from "../../src/render/templates.js";

const copy = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-templates-"));
fs.cpSync(path.resolve("templates"), copy, { recursive: true });
afterAll(() => fs.rmSync(copy, { recursive: true, force: true }));

const context = {
  handlers: [
    {
      shim: "qemu",
      name: "kata-qemu",
      runtimeType: "io.containerd.kata-qemu.v2",
      runtimePath: "/opt/kata/bin/x",
      configPath: "/c.toml",
      pullImage: true,
    },
  ],
  plugin: "io.containerd.grpc.v1.cri",
  version: 2,
};

describe("templates", () => {
  it("the build's precompiled templates render exactly as the sources do", async () => {
    expect(fs.existsSync(path.resolve("dist/templates.js"))).toBe(true);
    const built = await loadTemplates();
    const source = await loadTemplates(copy);
    for (const name of ["containerd/drop-in.toml.njk", "crio/kata.conf.njk"]) {
      expect(built.render(name, context)).toBe(source.render(name, context));
    }
  });

  it("an undefined variable is a bug naming the template, not an empty string", async () => {
    fs.writeFileSync(path.join(copy, "broken.njk"), "x = {{ nothing | toml }}\n");
    const source = await loadTemplates(copy);
    expect(() => source.render("broken.njk", {})).toThrow(TemplateBug);
    expect(() => source.render("broken.njk", {})).toThrow(
      /^template broken\.njk: .*undefined.*a kata-install bug/,
    );
  });

  it("invalid rendered TOML is a bug naming the template", () => {
    expect(() => parseRendered("[a\n", "kata/x.njk", "qemu")).toThrow(
      /^template kata\/x\.njk: rendered invalid TOML for qemu: /,
    );
  });
});
