// The shim catalogue's files read from a rule directory (rules/shims.toml, config-values.toml when
// there is one, and artifacts/catalogue.toml beside the directory), handed to decide to check.
import fs from "node:fs";
import path from "node:path";
import { type ArtifactCatalogue, loadArtifactCatalogue } from "../artifacts/catalogue.js";
import { type Catalog, parseCatalog } from "../decide/catalog.js";
import { InputError, type InputIssue } from "../input-error.js";
import { readDataFile } from "./data-file.js";

export function loadCatalog(dir: string): Catalog {
  const valuesFile = path.join(dir, "config-values.toml");
  return parseCatalog({
    shims: readDataFile(path.join(dir, "shims.toml")),
    artifacts: artifactCatalogue(path.join(dir, "..", "artifacts", "catalogue.toml")),
    values: fs.existsSync(valuesFile) ? readDataFile(valuesFile) : null,
  });
}

/** The artifact catalogue (each artifact's `depends`, `with_debug`), or its problems: they join the shims'. */
function artifactCatalogue(file: string): ArtifactCatalogue | InputIssue[] {
  try {
    return loadArtifactCatalogue(file);
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    return error.issues;
  }
}
