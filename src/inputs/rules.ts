// The rule files of a rule directory (every TOML file but the catalogue's), read and handed to
// decide to parse and check.
import fs from "node:fs";
import path from "node:path";
import type { Catalog } from "../decide/catalog.js";
import { parseRules, type RuleSet } from "../decide/rules.js";
import { readDataFile } from "./data-file.js";

const CATALOGUE_FILES = new Set(["shims.toml", "config-values.toml"]);

export function ruleFilesIn(dir: string): string[] {
  return fs
    .readdirSync(dir)
    .filter((name) => name.endsWith(".toml") && !CATALOGUE_FILES.has(name))
    .sort()
    .map((name) => path.join(dir, name));
}

/** The rules of `files`, each problem named by `display` of its file (and line). */
export function loadRules(
  files: string[],
  catalog: Catalog,
  display: (file: string) => string = (f) => f,
): RuleSet {
  return parseRules(files.map(readDataFile), catalog, display);
}
