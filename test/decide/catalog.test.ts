// The capability table is data the decide stage trusts: what it names must exist, or it does not
// load, each problem named with its file, line and key.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadCatalog } from "../../src/decide/catalog.js";
import { RULES } from "../helpers/decide.js";

const made: string[] = [];
afterAll(() => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});

/** A copy of rules/ (and artifacts/ beside it), with shims.toml edited. */
function rulesWith(edit: (shims: string) => string): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-catalog-"));
  made.push(root);
  fs.cpSync(RULES, path.join(root, "rules"), { recursive: true });
  fs.cpSync(path.join(RULES, "..", "artifacts"), path.join(root, "artifacts"), { recursive: true });
  const file = path.join(root, "rules", "shims.toml");
  fs.writeFileSync(file, edit(fs.readFileSync(file, "utf8")));
  return path.join(root, "rules");
}

describe("rules/shims.toml", () => {
  it("holds the default shim and the parts a host's package may stand in for", () => {
    const catalog = loadCatalog(RULES);
    expect(catalog.defaultShim).toBe("qemu");
    expect(catalog.hostParts.get("qemu")).toEqual({
      fact: "qemu",
      path_keys: ["path"],
      list_keys: ["valid_hypervisor_paths"],
    });
    expect(catalog.shims.get("qemu")?.host_parts).toEqual(["qemu", "virtiofsd"]);
    expect(catalog.shims.get("qemu-tdx")?.host_parts).toEqual([]);
  });

  it("a default shim or a host part that does not exist: every one named, with its line", () => {
    const dir = rulesWith((text) =>
      text
        .replace('default_shim = "qemu"', 'default_shim = "kemu"')
        .replace(
          /(\[shim\.clh\][\s\S]*?)host_parts = \["virtiofsd"\]/,
          '$1host_parts = ["virtiofsd", "qemu", "ovmf"]',
        ),
    );
    let message = "";
    try {
      loadCatalog(dir);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/shims\.toml:\d+: default_shim: no shim "kemu"/);
    expect(message).toMatch(/shims\.toml:\d+: shim\.clh\.host_parts: "qemu" is not one of its artifacts/);
    expect(message).toMatch(/shims\.toml:\d+: shim\.clh\.host_parts: no \[host_part\.ovmf\]/);
  });
});
