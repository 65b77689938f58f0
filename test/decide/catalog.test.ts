// The capability table (src/shims/table.ts, with rules/shims.toml's host parts) is what the decide
// stage trusts: what it names must exist, or it does not load, each problem named with its file,
// line and key.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadCatalog } from "../../src/inputs/catalog.js";
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

describe("the capability table", () => {
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

  it("a host part a shim names that shims.toml does not describe, or a key it does not take: each named", () => {
    const dir = rulesWith((text) =>
      text.replace("[host_part.qemu]", 'default_shim = "qemu"\n\n[host_part.qemu]'),
    );
    let message = "";
    try {
      loadCatalog(dir);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/shims\.toml: Unrecognized key: "default_shim"/);
    // What the TOML says is checked first; the table's names against it once it loads.
    const parts = rulesWith((text) => text.replace(/\[host_part\.virtiofsd\]\n(?:\w+ = .*\n)*/, ""));
    try {
      loadCatalog(parts);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(
      /src\/shims\/table\.ts: clh\.vetting\.host_parts: no \[host_part\.virtiofsd\] in rules\/shims\.toml/,
    );
  });
});
