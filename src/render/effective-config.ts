// Each handler's Kata configuration as Kata will load it once a plan is applied: the base file its
// handler names (the plan's, else the node's) and every entry of the config.d/ beside it (the
// plan's files counted), through Kata's own loading rules (kata-loader.ts). Reads the node only.
import path from "node:path";
import type { Changeset } from "../changeset.js";
import type { Catalog } from "../decide/catalog.js";
import type { Check, Decision } from "../decide/decision.js";
import { type Handler, handlersFor, installDir } from "../decide/layout.js";
import type { TomlTable } from "../detect/toml.js";
import type { Host } from "../host/host.js";
import { parseKataToml } from "../release/config-file.js";
import { readConfigEntries } from "../release/drop-in-dir.js";
import type { Release } from "../release/release.js";
import { type KataFlavour, type KnownKeys, knownKeysOf, type Loaded, loadKataConfig } from "./kata-loader.js";

export interface EffectiveConfig extends Loaded {
  /** The shim, or for a variant (debug, custom) its handler's name. */
  name: string;
  flavour: KataFlavour;
  /** The base file; null when it is neither planned nor on the node. */
  base: string | null;
}

/** The keys each runtime of the release knows, from every configuration it ships for it. */
export function releaseKeys(release: Release | null): Record<KataFlavour, KnownKeys> {
  const of = (flavour: KataFlavour) =>
    knownKeysOf(
      release === null
        ? []
        : [...release.shims.values()]
            .filter((s) => s.runtime === flavour)
            .map((s) => s.config.table as TomlTable),
    );
  return { go: of("go"), rust: of("rust") };
}

/** What a failure names: the shim, or for a variant (debug, custom), the handler. */
export function checkedName(handler: Handler): string {
  return handler.variant !== null ? handler.name : handler.shim;
}

export async function effectiveConfigs(
  host: Host,
  decision: Decision,
  changeset: Changeset,
  catalog: Catalog,
  release: Release | null,
): Promise<EffectiveConfig[]> {
  const planned = new Map(changeset.changes.map((c) => [c.path, c.after]));
  const known = releaseKeys(release);
  // A takeover moves kata-deploy's tree under the install directory aside: there, only what the
  // plan writes is read.
  const prefix = installDir(decision);
  const takingOver = changeset.actions.some((a) => a.kind === "take-over");
  const out: EffectiveConfig[] = [];
  for (const handler of handlersFor(decision, catalog)) {
    const flavour = catalog.shims.get(handler.shim)?.runtime ?? "go";
    const name = checkedName(handler);
    // Kata resolves the base file's links and reads the config.d/ beside the file it reaches.
    const base = await resolvedBase(host, handler.configPath, planned);
    let table: TomlTable | null = null;
    const refusals: Loaded["refusals"] = [];
    if (base.text !== null) {
      try {
        table = parseKataToml(base.text);
      } catch (error) {
        refusals.push({
          file: base.file,
          reason: `does not parse: ${(error as Error).message.split("\n")[0]}`,
        });
      }
    }
    if (table === null) {
      out.push({
        name,
        flavour,
        base: base.text === null ? null : base.file,
        config: {},
        refusals,
        ignored: [],
      });
      continue;
    }
    const dir = `${path.posix.dirname(base.file)}/config.d`;
    const entries = await readConfigEntries(
      host,
      dir,
      planned,
      !(takingOver && dir.startsWith(`${prefix}/`)),
    );
    out.push({
      name,
      flavour,
      base: base.file,
      ...loadKataConfig({ file: base.file, table }, entries, flavour, known[flavour]),
    });
  }
  return out;
}

/** The file a handler's ConfigPath reaches (the plan's text where the plan writes it). */
async function resolvedBase(
  host: Host,
  configPath: string,
  planned: ReadonlyMap<string, string | null>,
): Promise<{ file: string; text: string | null }> {
  if (planned.has(configPath)) return { file: configPath, text: planned.get(configPath) ?? null };
  let file = configPath;
  try {
    const real = await host.resolve(configPath);
    file = host.hostPathOf(real) ?? configPath;
  } catch {
    // a link out of the host root: read as given, and refused as the read says
  }
  if (planned.has(file)) return { file, text: planned.get(file) ?? null };
  const read = await host.readText(file);
  return { file, text: read.ok ? read.text : null };
}

/**
 * The plan's checks on what Kata would make of its configurations: an error for each handler whose
 * configuration Kata would refuse (a drop-in it cannot read, decode or take), naming the file and
 * Kata's reason; a warning for what it would read and ignore.
 */
export function kataConfigChecks(configs: readonly EffectiveConfig[]): Check[] {
  const refused = configs.flatMap((c) =>
    c.refusals.map(
      (r) => `${c.name} (Kata's ${c.flavour === "go" ? "Go" : "Rust"} runtime): ${r.file}: ${r.reason}`,
    ),
  );
  const ignored = configs.flatMap((c) => c.ignored.map((i) => `${c.name}: ${i.key}: ${i.why}`));
  return [
    ...(refused.length === 0
      ? []
      : [
          {
            id: "kata-config",
            severity: "error" as const,
            status: "fail" as const,
            message: `Kata would refuse the configuration it reads, so every pod of that handler fails to start: ${refused.join("; ")}`,
            hint: "mend or move that file out of config.d/ (Kata reads every entry there, whatever its name), or give the value in the overrides file ([config.<shim>]), where it is checked; then plan again",
            rule: "install",
          },
        ]),
    ...(ignored.length === 0
      ? []
      : [
          {
            id: "kata-config-ignored",
            severity: "warning" as const,
            status: "fail" as const,
            message: `Kata reads these and does nothing with them: ${ignored.join("; ")}`,
            hint: "take them out (or, for a key no configuration names, check its spelling)",
            rule: "install",
          },
        ]),
  ];
}
