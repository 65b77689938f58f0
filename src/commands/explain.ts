// `explain [KEY…]`: every decided value with its source and what it beat, starting from the
// release: a key's value in the shim's configuration as Kata's release ships it, then each source
// that changed it. A key nothing decided shows the release's value alone. Either is held against
// the admin's own drop-ins of the shim's config.d/ on the node, which Kata reads as well.
import type { Catalog } from "../decide/catalog.js";
import type { Decision } from "../decide/decision.js";
import type { Source } from "../decide/provenance.js";
import { dotted } from "../detect/toml.js";
import { UserError } from "../errors.js";
import { toJson } from "../json-text.js";
import { type Explained, explainDocument, renderExplain, selectExplained } from "../output/explain.js";
import { valueAt } from "../release/config-file.js";
import { baseName, type Release } from "../release/release.js";
import { asWritten, baseTable } from "../render/kata-config.js";
import { ignoredKey } from "../render/kata-loader.js";
import { nodeDropIns, setOnNode } from "../render/node-drop-ins.js";
import { type DecideCommandOptions, runDecide } from "./decide-run.js";

/** The release's file of a shim as a source: where every value starts. */
function releaseSource(release: Release, shim: string): Source {
  return { kind: "default", name: baseName(release, shim) };
}

export async function runExplain(
  keys: string[],
  options: DecideCommandOptions,
  out: (text: string) => void,
): Promise<number> {
  const { decision, catalog, release, host } = await runDecide(options);
  const values = explainDocument(decision).values;
  if (release !== null) withReleaseValues(values, decision, release);
  // Decided values are in kata-install's drop-in; the release's alone are in no drop-in of ours.
  const decided = new Set(values);
  // Where the drop-in joins a decided value with the release's, what Kata reads is said too.
  if (release !== null)
    for (const v of values) {
      if (v.kind !== "config" || v.shim === undefined) continue;
      const base = baseTable(release, decision, v.shim);
      if (base === null) continue;
      const written = asWritten(v.key, { value: v.value, source: v.source, beaten: v.beaten }, base);
      if (written.how !== "set") v.kataReads = { value: written.value, how: written.how };
    }
  // A key that nothing decided has the release's value: show it for each installed shim whose
  // configuration has the key; when none is installed, for every shim of the release that has it,
  // saying why it is not (so that any example works on any node).
  for (const key of keys) {
    if (release === null) break;
    const [shimPart, keyPart] = key.includes(":")
      ? (key.split(":", 2) as [string, string])
      : [undefined, key];
    const named = [...release.shims.keys()]
      .sort()
      .filter((shim) => shimPart === undefined || shim === shimPart);
    const installed = named.filter((shim) => decision.shims.some((s) => s.name === shim));
    const withKey = (list: string[]) => list.filter((shim) => fullKeys(catalog, shim, keyPart).length > 0);
    const shims = withKey(installed).length > 0 ? withKey(installed) : withKey(named);
    for (const shim of shims) {
      const dropped = decision.dropped.find((s) => s.name === shim);
      const optIn = catalog.shims.get(shim)?.opt_in
        ? ": an opt-in shim, installed only when named (SHIMS, --shims or the overrides file)"
        : "";
      const notInstalled = installed.includes(shim)
        ? null
        : `${shim} is not installed on this node${dropped ? `: ${dropped.reason}` : optIn}`;
      const table = baseTable(release, decision, shim) ?? {};
      for (const full of fullKeys(catalog, shim, keyPart)) {
        if (values.some((v) => v.shim === shim && v.key === full)) continue;
        const value = valueAt(table, full);
        const why = [
          value === undefined
            ? "shown commented out in the release's file: Kata's built-in default applies"
            : null,
          notInstalled,
        ];
        const reason = why.filter((w) => w !== null).join("; ");
        values.push({
          kind: "config",
          key: full,
          shim,
          value: value ?? null,
          ...(reason ? { reason } : {}),
          source: releaseSource(release, shim),
          beaten: [],
        });
      }
    }
  }
  // A key Kata reads and does nothing with (the remote hypervisor's kernel_params): said so.
  for (const v of values) {
    if (v.kind !== "config" || v.shim === undefined) continue;
    const why = ignoredKey(v.key, catalog.shims.get(v.shim)?.runtime ?? "go");
    if (why !== null) v.ignoredByKata = why;
  }
  // Held against the admin's own drop-ins on the node: Kata reads them too, and a later one wins.
  const notes: string[] = [];
  if (host !== null) {
    const { dropIns, problems } = await nodeDropIns(host, decision, catalog);
    // Kata refuses a configuration whose drop-in does not parse: no value of it can be told.
    for (const p of problems) notes.push(`${p}: Kata would not load this configuration`);
    // A key only the admin's drop-ins set is a value Kata uses too: shown, from the release's.
    for (const [handler, list] of dropIns)
      for (const key of new Set(list.flatMap((d) => Object.keys(dotted(d.table))))) {
        if (values.some((v) => v.shim === handler && v.key === key)) continue;
        const shipped = release?.shims.has(handler) ? release : null;
        const value =
          shipped === null ? undefined : valueAt(baseTable(shipped, decision, handler) ?? {}, key);
        values.push({
          kind: "config",
          key,
          shim: handler,
          value: value ?? null,
          source:
            shipped === null
              ? { kind: "default", name: "no file kata-install read (the release's is not known here)" }
              : releaseSource(shipped, handler),
          beaten: [],
        });
      }
    for (const v of values) {
      if (v.kind !== "config" || v.shim === undefined) continue;
      const set = setOnNode(dropIns, v.shim, v.key);
      const ours = decided.has(v);
      const applies = set.filter((d) => !ours || d.after);
      const last = applies[applies.length - 1];
      if (set.length > 0)
        v.onNode = set.map((d) => ({
          file: d.file,
          value: d.value,
          applies: d === last,
          why:
            d === last
              ? `read after ${ours ? "kata-install's drop-in" : "the release's file"}: Kata uses this value`
              : ours && !d.after
                ? "read before kata-install's drop-in, which replaces it"
                : "replaced by a drop-in read after it",
        }));
    }
  }
  const { selected, unmatched } = selectExplained(values, keys);
  if (unmatched.length > 0) {
    const hint =
      release === null
        ? "; no release was read (give --artifacts), so only what kata-install decided can be shown"
        : "";
    throw new UserError(
      `nothing decided matches ${unmatched.map((k) => `"${k}"`).join(", ")} (try a key such as hypervisor.qemu.shared_fs, a shim name, or shim:key)${hint}`,
    );
  }
  const json = (v: unknown) => toJson(v, 2);
  if (options.json) out(`${json({ values: selected, ...(notes.length > 0 ? { notes } : {}) })}\n`);
  else out(`${renderExplain(selected)}${notes.map((n) => `note: ${n}\n`).join("")}`);
  return 0;
}

/** Each decided key of a shim starts from the release's value: the last of what it beat. */
function withReleaseValues(values: Explained[], decision: Decision, release: Release): void {
  const tables = new Map<string, Record<string, unknown> | null>();
  for (const v of values) {
    if (v.kind !== "config" || v.shim === undefined) continue;
    const shim = release.shims.has(v.shim)
      ? v.shim
      : decision.customRuntimes.find((c) => c.handler === v.shim)?.base;
    if (shim === undefined || !release.shims.has(shim)) continue;
    if (!tables.has(shim)) tables.set(shim, baseTable(release, decision, shim));
    const value = valueAt(tables.get(shim) ?? {}, v.key);
    v.beaten = [
      ...v.beaten,
      { value: value ?? "(not set: Kata's built-in default)", source: releaseSource(release, shim) },
    ];
  }
}

/** The full keys `key` names for `shim`: itself, or a short name ("shared_fs") in the shim's sections. */
function fullKeys(catalog: Catalog, shim: string, key: string): string[] {
  if (catalog.keyInfo(shim, key) !== undefined) return [key];
  if (key.includes(".")) return [];
  const keys = catalog.release?.shims.get(shim)?.config.keys;
  return [...(keys?.keys() ?? [])].filter((full) => full.slice(full.lastIndexOf(".") + 1) === key);
}
