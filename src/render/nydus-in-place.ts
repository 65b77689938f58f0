// nydus where containerd's own file is edited in place (containerd 1.x, microk8s's template): what
// kata-deploy's configure_nydus_snapshotter sets there, set by kata-install so that each part can
// be given back alone. The proxy plugin is a table of its own: it goes in kata-install's block.
// `disable_snapshot_annotations = false` belongs in the CRI images table, which the admin's file
// usually has (a table named twice does not parse): that one line is edited in the admin's table
// (key-edit.ts), or, where the file has no such table, the table joins the block.
import { parse } from "smol-toml";
import type { Decision } from "../decide/decision.js";
import { SETUP_VARIABLE } from "../decide/setup-env.js";
import { dig } from "../detect/toml.js";
import { UserError } from "../errors.js";
import type { ErofsTable } from "./erofs-config.js";
import { setKey } from "./key-edit.js";
import { nydusTables } from "./nydus-config.js";

export interface NydusInPlace {
  /** The admin's text with the annotations line set (unchanged when it is set in our block). */
  text: string;
  /** The tables for kata-install's block. */
  tables: ErofsTable[];
  /** Paths of the settings the edit changes in the admin's file, for the parse-back check. */
  changes: string[][];
}

/**
 * The nydus parts of an in-place edit of `text` (the admin's file of config `version`, kata-install's
 * earlier parts taken out, `parsed` without our block); null without nydus.
 */
export function nydusInPlace(
  decision: Decision,
  text: string,
  parsed: Record<string, unknown> | null,
  version: number,
  path: string,
): NydusInPlace | null {
  const setup = decision.nydus;
  if (setup === null) return null;
  const [annotations, ...proxy] = inPlaceTables(decision, version);
  const setting = annotations?.settings[0];
  if (annotations === undefined || setting === undefined) return null;
  if (dig(parsed, ["proxy_plugins", setup.name]) !== undefined)
    throw new UserError(
      `${path} has a [proxy_plugins."${setup.name}"] table that is not kata-install's: kata-install sets up ${setup.name} with a proxy plugin of that name (${SETUP_VARIABLE}=nydus); remove that table, or take nydus out of ${SETUP_VARIABLE} (nothing was written)`,
    );
  const changes = nydusSettingPaths(version, setup.name);
  const edited = setKey(
    text,
    {
      table: annotations.table,
      key: setting.key,
      literal: String(setting.value),
      why: "the nydus snapshotter reads images' references from these annotations",
    },
    decision.install.suffix.value,
  );
  if (edited === null) return { text, tables: [annotations, ...proxy], changes };
  return { text: edited, tables: proxy, changes };
}

/** The settings nydus's setup changes in a file of config `version`. */
export function nydusSettingPaths(version: number, name: string): string[][] {
  return [
    [...imagesTableOf(version), "disable_snapshot_annotations"],
    ["proxy_plugins", name],
  ];
}

/** Where the annotations setting lives: schema 1 names the CRI plugin "cri" (containerd 1.x reads both). */
function imagesTableOf(version: number): string[] {
  if (version >= 3) return ["plugins", "io.containerd.cri.v1.images"];
  return ["plugins", version === 2 ? "io.containerd.grpc.v1.cri" : "cri", "containerd"];
}

/** nydus's tables, the annotations one first, in a file of config `version`. */
function inPlaceTables(decision: Decision, version: number): ErofsTable[] {
  const setup = decision.nydus;
  if (setup === null) return [];
  const [annotations, ...proxy] = nydusTables(decision, setup, Math.max(version, 2));
  return annotations === undefined ? [] : [{ ...annotations, table: imagesTableOf(version) }, ...proxy];
}

/**
 * nydus's settings read back from the edited file. A file whose CRI settings are written in a
 * shape the line edit does not reach (a dotted key, an inline table) is the admin's to set: said,
 * naming the file and the key, before anything is written.
 */
export function checkNydusInPlace(after: string, decision: Decision, version: number, path: string): void {
  const setup = decision.nydus;
  if (setup === null) return;
  let parsed: Record<string, unknown> | null = null;
  try {
    parsed = parse(after) as Record<string, unknown>;
  } catch {
    parsed = null;
  }
  for (const { table, settings } of inPlaceTables(decision, version))
    for (const { key, value } of settings) {
      if (parsed !== null && dig(parsed, [...table, key]) === value) continue;
      const where = [...table, key].map((p) => (/^[A-Za-z0-9_-]+$/.test(p) ? p : `"${p}"`)).join(".");
      throw new UserError(
        `${path}: kata-install could not set ${where} = ${JSON.stringify(value)} for ${setup.name}: the file writes containerd's settings in a shape kata-install's edit does not reach (a dotted key, an inline table); set it yourself, or take nydus out of ${SETUP_VARIABLE} (nothing was written)`,
      );
    }
}
