// The TOML the bundle parsed at build time reads back exactly as parsing the file now would, and
// a file edited since is parsed afresh (the lookup is by content).
import fs from "node:fs";
import path from "node:path";
import { parse } from "smol-toml";
import { describe, expect, it } from "vitest";
import { parseTomlText, sha256 } from "../src/toml-data.js";

const files = [
  ...fs
    .readdirSync("rules")
    .filter((f) => f.endsWith(".toml"))
    .map((f) => path.join("rules", f)),
  "artifacts/catalogue.toml",
];

describe("kata-install's TOML, parsed at build time", () => {
  it("is in dist/data.json by content, and reads back as parsing it now", () => {
    const built = JSON.parse(fs.readFileSync("dist/data.json", "utf8")) as Record<string, unknown>;
    for (const file of files) {
      const text = fs.readFileSync(file, "utf8");
      expect(built[sha256(text)], file).toBeDefined();
      expect(parseTomlText(text), file).toEqual(parse(text));
    }
  });

  it("a file edited since the build is parsed as it is now", () => {
    const text = fs
      .readFileSync("rules/shims.toml", "utf8")
      .replace('[host_part.qemu]\nfact = "qemu"', '[host_part.qemu]\nfact = "qemu-kvm"');
    expect((parseTomlText(text).host_part as Record<string, { fact: string }>).qemu?.fact).toBe("qemu-kvm");
  });
});
