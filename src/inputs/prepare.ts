// Everything the decide stage needs, read and validated in one place, before any stage acts: the
// catalogue and rules (kata-install's own files), kata-deploy's environment, the overrides file,
// the admin's containerd drop-in, nydus-snapshotter's source and the command-line flags. Any
// invalid input stops here with every problem listed; decide then reads no file of its own.

import path from "node:path";
import type { Prepared } from "../decide/decide-for.js";
import { ENGINE_CHECKS } from "../decide/engine-checks.js";
import { parseEnv } from "../decide/env.js";
import { dataPath, packageRoot } from "../package-root.js";
import { loadCatalog } from "./catalog.js";
import { type FlagOptions, parseFlags } from "./flags.js";
import { loadNydusSource } from "./nydus-source.js";
import { readOverrides } from "./overrides.js";
import { loadRules, ruleFilesIn } from "./rules.js";
import { loadUserDropIn } from "./user-drop-in.js";

export interface DecideOptions extends FlagOptions {
  /** The node's root: the default overrides file is read under it. */
  hostRoot: string;
  /** An overrides file; null for none at all (not even the node's default one). */
  overrides?: string | null;
  env?: Readonly<Record<string, string | undefined>>;
  /** Rule directory; kata-install's own rules/ by default. */
  rulesDir?: string;
}

/** Read and check every input that does not need the node. */
export async function prepare(options: DecideOptions): Promise<Prepared> {
  const dir = options.rulesDir ?? dataPath("rules");
  const catalog = loadCatalog(dir);
  const rules = loadRules(ruleFilesIn(dir), catalog, (file) => relativeToPackage(file));
  const env = options.env ?? process.env;
  parseEnv(env, null); // the plain variables, now; the arch-specific ones once the arch is known
  const checkIds = new Set([...rules.checkIds, ...ENGINE_CHECKS]);
  const overrides = await readOverrides(options.overrides, options.hostRoot, catalog, checkIds);
  const userDropIn = loadUserDropIn(env);
  const nydusSource = loadNydusSource(env);
  return { catalog, rules, overrides, flags: parseFlags(options, checkIds), env, userDropIn, nydusSource };
}

function relativeToPackage(file: string): string {
  const relative = path.relative(packageRoot(), file);
  return relative.startsWith("..") ? file : relative;
}
