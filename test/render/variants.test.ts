// templates/kata/variants.toml is read through its schema: a typo there is an error that names
// it, not a shim rendered with the defaults.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadTemplates } from "../../src/render/templates.js";
import { loadVariants } from "../../src/render/variants.js";
import { catalog } from "../helpers/decide.js";

const made: string[] = [];
afterAll(() => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});

async function templatesWith(edit: (text: string) => string) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-variants-"));
  made.push(dir);
  fs.cpSync(path.resolve("templates"), dir, { recursive: true });
  const file = path.join(dir, "kata", "variants.toml");
  fs.writeFileSync(file, edit(fs.readFileSync(file, "utf8")));
  return loadTemplates(dir);
}

describe("templates/kata/variants.toml", () => {
  it("gives each shim the defaults with its own values over them, and each architecture its own", async () => {
    const variants = loadVariants(await loadTemplates(), catalog);
    expect(variants.forShim("fc")).toMatchObject({ shared_fs: "none", kernel: "vmlinux.container" });
    expect(variants.forArch("aarch64").qemu_firmware).toBe("aavmf/AAVMF_CODE.fd");
    expect(variants.forArch("riscv64").qemu_binary).toBe("qemu-system-x86_64");
  });

  it("a misspelt shim, an unknown key, a wrong type: each named with its line", async () => {
    const typo = await templatesWith((text) =>
      text.replace("[shim.fc]", "[shim.firecraker]").replace("[shim.clh]\n", "[shim.clh]\nshared-fs = 1\n"),
    );
    expect(() => loadVariants(typo, catalog)).toThrow(/variants\.toml:\d+: shim\.clh: .*shared-fs/);
    const types = await templatesWith((text) => text.replace("[shim.fc]", "[shim.firecraker]"));
    expect(() => loadVariants(types, catalog)).toThrow(
      /variants\.toml:\d+: shim\.firecraker: no shim "firecraker"/,
    );
    const wrong = await templatesWith((text) =>
      text.replace("agent_dial_timeout = 45", 'agent_dial_timeout = "45"'),
    );
    expect(() => loadVariants(wrong, catalog)).toThrow(/variants\.toml:\d+: default\.agent_dial_timeout: /);
  });
});
