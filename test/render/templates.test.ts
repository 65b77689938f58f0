import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadTemplates, parseRendered, TemplateBug } from "../../src/render/templates.js";

const copy = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-templates-"));
fs.cpSync(path.resolve("templates"), copy, { recursive: true });
afterAll(() => fs.rmSync(copy, { recursive: true, force: true }));

describe("templates", () => {
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
