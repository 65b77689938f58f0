// Plan on a test host through the same stage functions as `kata-install plan`, without the CLI.

import type { Changeset } from "../../src/changeset.js";
import { decide } from "../../src/decide/decide.js";
import type { Decision } from "../../src/decide/decision.js";
import { parseEnv } from "../../src/decide/env.js";
import type { Flags } from "../../src/decide/input.js";
import { installDir } from "../../src/decide/layout.js";
import { emptyOverrides, parseOverrides } from "../../src/decide/overrides.js";
import { detectOptionsFromEnv } from "../../src/detect/context.js";
import { detectFacts, type Facts } from "../../src/detect/facts.js";
import type { Host } from "../../src/host/host.js";
import { loadNydusSource } from "../../src/inputs/nydus-source.js";
import { loadUserDropIn } from "../../src/inputs/user-drop-in.js";
import { installedState, journalFor } from "../../src/install/journal.js";
import type { Release } from "../../src/release/release.js";
import { render } from "../../src/render/render.js";
import { loadTemplates } from "../../src/render/templates.js";
import { catalog, checkIds, releaseFor, rules } from "./decide.js";

export const templates = await loadTemplates();

export interface PlanOn {
  overrides?: string;
  env?: Record<string, string>;
  flags?: Partial<Flags>;
  /** The release planned for: Kata 4.1.0 of the node's architecture by default; null for none. */
  release?: Release | null;
}

export async function planOn(
  host: Host,
  options: PlanOn = {},
): Promise<{ facts: Facts; decision: Decision; changeset: Changeset }> {
  // As the pipeline detects: what of the environment says where to look, too.
  const facts = await detectFacts(host, detectOptionsFromEnv(options.env ?? {}));
  const overrides =
    options.overrides === undefined
      ? emptyOverrides()
      : parseOverrides("/etc/kata-containers/kata-install.toml", options.overrides, catalog, checkIds);
  const release = options.release === undefined ? releaseFor(facts.arch) : options.release;
  const withRelease = catalog.withRelease(release);
  const decision = decide({
    facts,
    catalog: withRelease,
    rules,
    overrides,
    env: parseEnv(options.env ?? {}, facts.arch),
    flags: { ignorePreflightErrors: [], ...options.flags },
    userDropIn: loadUserDropIn(options.env ?? {}),
    nydusSource: loadNydusSource(options.env ?? {}),
  });
  const installed = await installedState(journalFor(host, installDir(decision)));
  const changeset = await render(decision, facts, withRelease, templates, host, installed);
  return { facts, decision, changeset };
}

export const changeAt = (changeset: Changeset, path: string) =>
  changeset.changes.find((c) => c.path === path);
