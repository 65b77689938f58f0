// kata-install's own TOML (rules/, artifacts/catalogue.toml: ~60 kB) parsed when the bundle is
// built, into dist/data.json keyed by each file's sha256: a run looks its text up there instead of
// parsing it again. Keyed by content, an edited file is simply not found and parsed as usual.
import fs from "node:fs";
import { parse } from "smol-toml";
import { hash } from "./hash.js";
import { dataPath } from "./package-root.js";

let built: Record<string, unknown> | null | undefined;

/** The build's table of `text`; undefined when the build did not parse it (edited, or no build). */
export function builtTable(text: string): Record<string, unknown> | undefined {
  if (built === undefined) {
    try {
      built = JSON.parse(fs.readFileSync(dataPath("dist", "data.json"), "utf8")) as Record<string, unknown>;
    } catch {
      built = null; // running from source, or a bundle built without it
    }
  }
  return built?.[hash(text)] as Record<string, unknown> | undefined;
}

/** `text` parsed as TOML; throws as smol-toml does for text that is not TOML. */
export function parseTomlText(text: string): Record<string, unknown> {
  return builtTable(text) ?? (parse(text) as Record<string, unknown>);
}

export { hash as sha256 };
