// The overrides file the cluster's values give every node (a ConfigMap the DaemonSet mounts): written
// as TOML and checked here with the nodes' own reader, so a key no shim has stops `manifests`, not
// every node's install.
import { createHash } from "node:crypto";
import { stringify } from "smol-toml";
import type { Catalog } from "../decide/catalog.js";
import { ENGINE_CHECKS } from "../decide/engine-checks.js";
import { parseOverrides } from "../decide/overrides.js";
import { InputError, type InputIssue } from "../input-error.js";
import { loadRules, ruleFilesIn } from "../inputs/rules.js";
import { dataPath } from "../package-root.js";

export interface OverridesFile {
  text: string;
  /** Rolls the DaemonSet's pods when the file changes (a mounted ConfigMap alone does not). */
  checksum: string;
}

/** The file, or null when the values give none; problems are added to `issues`. */
export function overridesFile(
  table: Record<string, unknown>,
  catalog: Catalog,
  file: string,
  issues: InputIssue[],
): OverridesFile | null {
  if (Object.keys(table).length === 0) return null;
  const text = `# The cluster's overrides, from \`kata-install manifests\`: every node's install reads this file.\n${stringify(table)}`;
  const rules = loadRules(ruleFilesIn(dataPath("rules")), catalog);
  try {
    parseOverrides("overrides", text, catalog, new Set([...rules.checkIds, ...ENGINE_CHECKS]));
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    for (const issue of error.issues)
      issues.push({ file, key: `overrides${issue.key ? `.${issue.key}` : ""}`, message: issue.message });
  }
  return { text, checksum: createHash("sha256").update(text).digest("hex") };
}
