// The container runtime's side: one handler per chosen shim, written where that runtime reads them
// safely. containerd 1.x: config.toml edited in place (an imported file there replaces the whole
// CRI table); containerd 2.x: a drop-in of the main file's version, imported from it; k3s/rke2: the
// drop-in directory their template imports; k0s: containerd.d/; microk8s: its template; CRI-O:
// crio.conf.d/. The admin's own files are edited minimally and parsed back before any plan shows them.
import { isDeepStrictEqual } from "node:util";
import { parse } from "smol-toml";
import { itemAt } from "../at.js";
import type { Catalog } from "../decide/catalog.js";
import type { Decision, ErofsSetup } from "../decide/decision.js";
import { type Handler, handlersFor, installDir, variantsDir } from "../decide/layout.js";
import { nydusName } from "../decide/nydus-setup.js";
import { SETUP_VARIABLE } from "../decide/setup-env.js";
import { USER_DROP_IN_VARIABLE } from "../decide/user-drop-in.js";
import type { Facts } from "../detect/facts.js";
import { isOlderNydus } from "../detect/kata.js";
import { RUNTIME_LAYOUTS, type RuntimeRestart } from "../detect/runtime/layouts.js";
import { dig, isTable } from "../detect/toml.js";
import { UserError } from "../errors.js";
import { tomlErrorText } from "../toml-error.js";
import { checkErofs, erofsTables } from "./erofs-config.js";
import { isOurHandler, nodesOwnHandlers } from "./handler-owners.js";
import type { RenderedFile } from "./kata-config.js";
import { revertKeys } from "./key-edit.js";
import { checkNydus, mergeTables, nydusTables } from "./nydus-config.js";
import { checkNydusInPlace, nydusInPlace, nydusSettingPaths } from "./nydus-in-place.js";
import { isKataDeployImportName } from "./stale-imports.js";
import { TemplateBug, type Templates } from "./templates.js";
import {
  dropBlock,
  ensureImport,
  otherInstalls,
  putBlock,
  removeImports,
  removeTables,
} from "./toml-edit.js";
import { tomlString } from "./toml-literal.js";

export interface RuntimeAction {
  kind: "restart-runtime" | "reload-runtime";
  target: string;
  reason: string;
}

export interface RuntimeRender {
  files: RenderedFile[];
  /** What to do once these files changed; none for a runtime that reloads on its own. */
  onChange?: RuntimeAction;
}

/** The runtime drop-in of one install: each MULTI_INSTALL_SUFFIX has its own file. */
function dropInName(suffix: string, ext = "toml"): string {
  return suffix ? `50-kata-install-${suffix}.${ext}` : `50-kata-install.${ext}`;
}
/**
 * The admin's own containerd drop-in (CONTAINERD_USER_DROP_IN_SOURCE_FILE), beside ours: its name
 * sorts after every 50-kata-install*.toml, so containerd loads it after them and its settings win
 * (kata-deploy's is zz-kata-deploy-user.toml).
 */
export function userDropInName(suffix: string): string {
  return suffix ? `zz-kata-install-${suffix}-user.toml` : "zz-kata-install-user.toml";
}

/** The admin's drop-in copied byte for byte into `dir`; none (an earlier one goes) without it or without a shim. */
function userDropInFile(decision: Decision, dir: string, installing: boolean): RenderedFile {
  const dropIn = decision.userDropIn;
  const content = dropIn !== null && installing ? dropIn.text : null;
  return {
    path: `${dir}/${userDropInName(decision.install.suffix.value)}`,
    content,
    mode: 0o644,
    template: "(copied)",
    reason:
      content === null
        ? dropIn === null
          ? `no containerd drop-in of the admin's (${USER_DROP_IN_VARIABLE} is not set)`
          : "no Kata shim is to be installed"
        : `the admin's containerd drop-in, ${dropIn?.file} (${USER_DROP_IN_VARIABLE}), loaded after kata-install's`,
  };
}

const NEW_CONTAINERD_CONFIG = `version = 2

[plugins."io.containerd.grpc.v1.cri".containerd]
  default_runtime_name = "runc"

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
`;

const V3_RUNTIMES = ["plugins", "io.containerd.cri.v1.runtime", "containerd", "runtimes"];
const RUNTIMES_PATHS = [
  ["plugins", "io.containerd.grpc.v1.cri", "containerd", "runtimes"],
  V3_RUNTIMES,
  ["plugins", "cri", "containerd", "runtimes"], // schema 1's short name
];

function isOurTable(
  path: string[],
  catalog: Catalog,
  suffix: string,
  variantOurs: (name: string) => boolean,
  nodesOwn: ReadonlySet<string>,
): boolean {
  return RUNTIMES_PATHS.some(
    (prefix) =>
      path.length > prefix.length &&
      prefix.every((p, i) => path[i] === p) &&
      !nodesOwn.has(itemAt(path, prefix.length, "the handler")) &&
      isOurHandler(itemAt(path, prefix.length, "the handler"), catalog, suffix, variantOurs),
  );
}

/** The CRI plugin's table name: a file without `version` (schema 1, containerd 1.x) uses short names. */
export function pluginFor(version: number): string {
  if (version >= 3) return "io.containerd.cri.v1.runtime";
  return version === 2 ? "io.containerd.grpc.v1.cri" : "cri";
}

/**
 * What the handlers template needs beside the handlers: from config version 3 on, image pulls are
 * the images plugin's, which picks a snapshotter per handler only from its own runtime_platforms
 * (containerd#12836), so a mapped snapshotter is written there too, as kata-deploy does.
 */
function handlersContext(
  version: number,
  handlers: Handler[],
  debugLevel: boolean,
  decision: Decision | null = null,
) {
  const erofs: ErofsSetup | null = decision?.erofs ?? null;
  const nydus = decision?.nydus ?? null;
  return {
    version,
    plugin: pluginFor(version),
    imagesPlugin: version >= 3 ? "io.containerd.cri.v1.images" : null,
    handlers,
    debugLevel,
    // Only a drop-in of kata-install's carries them (see snapshotter-setup.ts, nydus-setup.ts).
    erofs: erofs !== null,
    nydus: nydus?.name ?? null,
    tables: mergeTables([
      ...(erofs === null ? [] : erofsTables(erofs, version)),
      ...(nydus === null || decision === null ? [] : nydusTables(decision, nydus, version)),
    ]),
  };
}

/**
 * The imports that go: on a takeover, kata-deploy's (one of the drop-ins found, or one named as
 * kata-deploy names them); always, one of kata-deploy's whose file is gone (containerd would not
 * start on it). Null when none does.
 */
function importsDropped(
  takeover: Takeover | null,
  gone: ReadonlySet<string>,
): ((entry: string) => boolean) | null {
  if (takeover === null && gone.size === 0) return null;
  return (entry) =>
    gone.has(entry) ||
    (takeover !== null && (takeover.dropIns.includes(entry) || isKataDeployImportName(entry)));
}

/**
 * What containerd's configuration imports to read ours: the directory (a glob, so later drop-ins
 * need no edit of the admin's file) unless files are there that it does not read today, which a
 * glob would make live — then our file by its path.
 */
function importFor(
  dir: string,
  ours: string[],
  runtime: Facts["runtime"] | null,
  takeover: Takeover | null,
): string[] {
  const wouldWake = (runtime?.unimported ?? []).filter(
    (f) => !ours.includes(f) && !takeover?.dropIns.includes(f),
  );
  // Imported by their paths already (by an earlier install): kept so.
  const byPath = ours.some((f) => runtime?.imports.includes(f));
  return wouldWake.length > 0 || byPath ? ours : [`${dir}/*.toml`];
}

/** A node kata-deploy configured: its drop-ins and imports go, its handlers become ours. */
export interface Takeover {
  /** Its runtime drop-ins (the ones under the prefix go with it; the others are deleted). */
  dropIns: string[];
}

export function renderRuntimeConfig(
  decision: Decision,
  facts: Facts,
  catalog: Catalog,
  templates: Templates,
  current: ReadonlyMap<string, string | null>,
  takeover: Takeover | null = null,
  /** kata-deploy's imports (as written) whose file is gone: see stale-imports.ts. */
  gone: ReadonlySet<string> = new Set(),
): RuntimeRender {
  const rendered = renderFor(
    decision,
    facts,
    catalog,
    templates,
    current,
    takeover,
    importsDropped(takeover, gone),
  );
  if (takeover === null || decision.shims.length === 0) return rendered;
  // kata-deploy's backup of a file it edited in place, now what uninstall gives back (restoreOf):
  // its bytes are in kata-install's journal, so kata-deploy's copy goes with its install.
  const backups: RenderedFile[] = rendered.files
    .filter((f) => f.restore != null && f.restore === current.get(backupOf(f.path)))
    .map((f) => ({
      path: backupOf(f.path),
      content: null,
      mode: 0o644,
      template: "(takeover)",
      reason: `kata-deploy's backup of ${f.path}: what uninstall gives back now (kata-install's journal keeps it)`,
      restore: null,
    }));
  // kata-deploy's drop-ins outside the prefix go in the same transaction that writes ours (the
  // one under the prefix goes with its tree): never two definitions of one handler.
  const prefix = installDir(decision);
  const deletions: RenderedFile[] = takeover.dropIns
    .filter((p) => !p.startsWith(`${prefix}/`))
    .map((path) => ({
      path,
      content: null,
      mode: 0o644,
      template: "(takeover)",
      reason: "kata-deploy's runtime handlers: kata-install's replace them, under the same names",
      restore: null,
    }));
  return { ...rendered, files: [...rendered.files, ...deletions, ...backups] };
}

function renderFor(
  decision: Decision,
  facts: Facts,
  catalog: Catalog,
  templates: Templates,
  current: ReadonlyMap<string, string | null>,
  takeover: Takeover | null,
  dropImport: ((entry: string) => boolean) | null,
): RuntimeRender {
  const handlers = handlersFor(decision, catalog);
  const ours = ownTables(decision, facts, catalog, handlers, takeover);
  const kind = decision.runtime.value;
  // No runtime to configure: the container-runtime check has failed the plan already.
  if (kind === null) return { files: [] };
  const layout = RUNTIME_LAYOUTS[kind];
  // Detected facts describe the runtime found; the overrides file may name another kind.
  const runtime = facts.runtime.kind === kind ? facts.runtime : null;
  const target: Target = {
    decision,
    templates,
    current,
    takeover,
    dropImport,
    handlers,
    ours,
    runtime,
    suffix: decision.install.suffix.value,
    // kata-deploy's DEBUG raises the runtime's own log level too.
    debug: decision.install.debug.value,
  };
  const onChange = restartAction(layout.restart);
  const version = (fallback: number) => runtime?.configVersion ?? fallback;
  const placement = layout.handlers;
  switch (placement.kind) {
    case "containerd":
      return {
        files: containerdFiles(
          target,
          runtime?.configPath ?? layout.config,
          placement.dir,
          placement.defaultVersion,
        ),
        onChange,
      };
    case "imported-dir": {
      // Refused by the runtime-drop-in-dir check when their template imports no directory.
      const dir = runtime?.dropInDir ?? null;
      if (dir === null) return { files: [] };
      return { files: dropInFiles(target, dir, version(placement.defaultVersion)), onChange };
    }
    case "drop-in-dir":
      return { files: dropInFiles(target, placement.dir, version(placement.defaultVersion)), onChange };
    case "template": {
      const template = runtime?.templatePath ?? itemAt(layout.templates, 0, "the layout's template");
      return { files: [editInPlaceOf(target, template)], onChange };
    }
    case "crio":
      return { files: [crioFile(target, placement.dir)], onChange };
    default:
      return unreachable(placement);
  }
}

/** What every placement renders from: the handlers, who owns which table, the files as they are. */
interface Target {
  decision: Decision;
  templates: Templates;
  current: ReadonlyMap<string, string | null>;
  takeover: Takeover | null;
  dropImport: ((entry: string) => boolean) | null;
  handlers: Handler[];
  /** Whether a table of the runtime's configuration is kata-install's to replace. */
  ours: (path: string[]) => boolean;
  runtime: Facts["runtime"] | null;
  suffix: string;
  debug: boolean;
}

/**
 * Which of the runtime's handler tables are kata-install's; refuses a plan whose variant handler
 * (DEBUG's, a custom runtime's) would take the name of a handler of the node's own.
 */
function ownTables(
  decision: Decision,
  facts: Facts,
  catalog: Catalog,
  handlers: Handler[],
  takeover: Takeover | null,
): (path: string[]) => boolean {
  // A variant handler (DEBUG's -debug ones, the admin's custom runtimes) is ours when this install
  // writes it, or when its configuration is a variant's of this prefix (custom-runtimes/: written
  // by kata-install, or by kata-deploy, whose tree a takeover makes ours).
  const variants = `${variantsDir(decision)}/`;
  const installedVariants = new Set(
    facts.runtime.handlers.filter((h) => h.configPath?.startsWith(variants)).map((h) => h.name),
  );
  const writing = new Set(handlers.filter((h) => h.variant !== null).map((h) => h.name));
  const variantOurs = (name: string) => installedVariants.has(name) || writing.has(name);
  // A handler of kata-install's name that points elsewhere is the node's own: kept as it is. One
  // whose name this plan writes is shown replaced, and the runtime-handlers check refuses the plan.
  const written = new Set(handlers.map((h) => h.name));
  const nodes = new Set(
    nodesOwnHandlers(facts.runtime.handlers, decision, catalog)
      .map((h) => h.name)
      .filter((name) => !written.has(name)),
  );
  // A handler of the admin's own (its configuration elsewhere) with a name a variant needs: never
  // replaced, and never doubled.
  const taken = facts.runtime.handlers.filter((h) => writing.has(h.name) && !installedVariants.has(h.name));
  if (taken.length > 0 && takeover === null)
    throw new UserError(
      taken
        .map((h) => {
          const debug = handlers.find((mine) => mine.name === h.name)?.variant === "debug";
          return `${h.name} (${h.file}) is a handler of the node's own, for ${h.configPath ?? "no configuration"}; ${debug ? "DEBUG's debug handler" : "a custom runtime of the overrides file"} needs the name: rename it, or ${debug ? "leave DEBUG unset" : "name the custom runtime otherwise"}`;
        })
        .join("; ")
        .concat(" (nothing was written)"),
    );
  const suffix = decision.install.suffix.value;
  return (p: string[]) => isOurTable(p, catalog, suffix, variantOurs, nodes);
}

/** containerd: its main file edited in place, or kata-install's drop-in (and the admin's) imported from it. */
function containerdFiles(
  t: Target,
  main: string,
  defaultDir: string,
  defaultVersion: number,
): RenderedFile[] {
  const { decision, runtime, handlers, current } = t;
  if (decision.containerdInPlace.value) return [editInPlaceOf(t, main)];
  const dir = runtime?.dropInDir ?? defaultDir;
  const v = runtime?.configVersion ?? defaultVersion;
  const own = `${dir}/${dropInName(t.suffix)}`;
  const user = userDropInFile(decision, dir, handlers.length > 0);
  const files = [dropIn(own, v, handlers, t.templates, t.debug, decision), user];
  const cleaned = cleanMain(
    main,
    current.get(main) ?? null,
    (runtime?.dropInDir ?? null) === null
      ? importFor(dir, [own, ...(user.content !== null ? [user.path] : [])], runtime, t.takeover)
      : null,
    v,
    t.ours,
    t.dropImport,
    [own, user.path],
  );
  if (cleaned) files.push(cleaned);
  return files;
}

/** A runtime that reads a directory of drop-ins: kata-install's, and the admin's. */
function dropInFiles(t: Target, dir: string, version: number): RenderedFile[] {
  return [
    dropIn(`${dir}/${dropInName(t.suffix)}`, version, t.handlers, t.templates, t.debug, t.decision),
    userDropInFile(t.decision, dir, t.handlers.length > 0),
  ];
}

function crioFile(t: Target, dir: string): RenderedFile {
  const { runtime, handlers, current, takeover } = t;
  const name = "crio/kata.conf.njk";
  // CRI-O mounts the image store's home privately unless told not to; kata-deploy tells it so.
  // An admin's own storage_option stays theirs: CRI-O would take our list instead of it.
  const own = `${dir}/${dropInName(t.suffix, "conf")}`;
  const adminStorage = [runtime?.configPath ?? null, ...(runtime?.imports ?? [])].some((file) => {
    if (file === null || file === own || takeover?.dropIns.includes(file)) return false;
    const text = current.get(file);
    return text != null && dig(parseOrNull(text), ["crio", "storage_option"]) !== undefined;
  });
  const content =
    handlers.length === 0
      ? null
      : t.templates.render(name, { handlers, debugLevel: t.debug, storageOption: !adminStorage });
  if (content !== null) checkCrio(content, name, handlers);
  return {
    path: own,
    content,
    mode: 0o644,
    template: name,
    reason: "CRI-O runtime handlers for the chosen shims",
  };
}

/** A kind of placement the switch above does not handle fails to compile here. */
function unreachable(placement: never): never {
  throw new Error(`no rendering for handler placement ${JSON.stringify(placement)}`);
}

function dropIn(
  path: string,
  version: number,
  handlers: Handler[],
  templates: Templates,
  debugLevel: boolean,
  decision: Decision,
): RenderedFile {
  const name = "containerd/drop-in.toml.njk";
  // No shim to install: no drop-in either (an earlier one of ours goes).
  if (handlers.length === 0)
    return { path, content: null, mode: 0o644, template: name, reason: "no Kata shim is to be installed" };
  const content = templates.render(name, handlersContext(version, handlers, debugLevel, decision));
  checkContainerd(content, name, handlers, version);
  checkErofs(parseOrNull(content) ?? {}, decision.erofs, version, name);
  checkNydus(parseOrNull(content) ?? {}, decision, version, name);
  const set = [
    ...(decision.erofs === null ? [] : ["the erofs snapshotter"]),
    ...(decision.nydus === null ? [] : [`the nydus snapshotter's proxy plugin ${decision.nydus.name}`]),
  ];
  return {
    path,
    content,
    mode: 0o644,
    template: name,
    reason: `containerd runtime handlers for the chosen shims${set.length === 0 ? "" : `, and ${set.join(" and ")} (${SETUP_VARIABLE})`}`,
  };
}

/**
 * containerd 1.x (and microk8s's template): our handlers into the admin's file, nothing else
 * changed but, with nydus, the one line that turns snapshot annotations on (nydus-in-place.ts).
 */
function editInPlaceOf(t: Target, path: string): RenderedFile {
  const { handlers, suffix, decision } = t;
  const text = t.current.get(path) ?? null;
  const name = "containerd/in-place.toml.njk";
  // No file yet: containerd's defaults apply, and a runtimes table of ours would replace its map
  // (runc included), so a new file names runc too.
  const before = text ?? NEW_CONTAINERD_CONFIG;
  const parsedBefore = parseAdmin(path, before);
  // No `version` line: schema 1, which containerd 1.x still reads (with short plugin names).
  const version = typeof parsedBefore?.version === "number" ? parsedBefore.version : 1;
  // kata-deploy's imports go with the drop-ins they name (a takeover), or because their file is
  // gone: containerd refuses to start on an import of a missing file.
  const withoutImports = t.dropImport ? removeImports(before, t.dropImport) : before;
  // kata-deploy's proxy plugin for nydus goes with a takeover: replaced by ours where kata-install
  // sets nydus up, else gone with the unit the takeover ends (a plugin on a socket nothing serves).
  const deployNydus =
    t.takeover !== null
      ? deployNydusPlugins(parsedBefore, decision.nydus?.name ?? nydusName(suffix))
      : new Set<string>();
  const ours = (p: string[]) => t.ours(p) || (p[0] === "proxy_plugins" && deployNydus.has(p[1] ?? ""));
  const tablesOut = removeTables(withoutImports, ours);
  // The file without this install: its edited line given back, or handed, as it is, to another
  // install of the file still there (which found it set and set nothing of its own).
  const without = revertKeys(tablesOut, suffix, otherInstalls(tablesOut, suffix)[0] ?? null);
  // What this plan edits: with nydus staying, its own line given back only to be set again.
  const cleaned = decision.nydus !== null && handlers.length > 0 ? revertKeys(tablesOut, suffix) : without;
  // No shim to install: nothing of ours in the file (and no file created for nothing).
  if (handlers.length === 0) {
    return {
      path,
      content: text === null ? null : dropBlock(cleaned, path, suffix),
      block: suffix,
      mode: 0o644,
      template: name,
      reason: "no Kata shim is to be installed",
    };
  }
  const admins = parseOrNull(dropBlock(cleaned, path, suffix));
  const nydus = nydusInPlace(decision, cleaned, admins, version, path);
  // The log level joins our block only where the admin has no [debug] table of their own: theirs
  // is theirs to set (a second [debug] table would not parse).
  const adminsDebug = admins?.debug !== undefined;
  // containerd 1.x takes a runtimes table in the file for its whole map: where the admin's file has
  // none, the default runtime (runc) lived in containerd's built-in map and goes into our block too.
  const keep = defaultRuntimeToKeep(admins, version);
  const block = t.templates.render(name, {
    ...handlersContext(version, handlers, t.debug && !adminsDebug),
    nydus: nydus === null ? null : (decision.nydus?.name ?? null),
    tables: nydus?.tables ?? [],
    defaultRuntime: keep,
  });
  const after = putBlock(nydus?.text ?? cleaned, block, path, suffix);
  if (nydus !== null) checkNydusInPlace(after, decision, version, path);
  checkContainerd(after, name, handlers, version);
  checkDefaultRuntime(admins, after, name, version);
  // Without a [debug] table of the admin's, one there is ours (an earlier block's, or this one's).
  checkUntouched(parsedBefore, after, name, ours, [
    ...(adminsDebug ? [] : [["debug"]]),
    // The default runtime as containerd's defaults define it, written with ours (or by an earlier block).
    ...(keep === null && !ownsDefaultRuntime(before, path, suffix, version)
      ? []
      : [["plugins", pluginFor(version), "containerd", "runtimes", DEFAULT_RUNTIME.name]]),
    ...(withoutImports !== before ? [["imports"]] : []),
    // kata-deploy's nydus plugins, replaced by ours (a takeover).
    ...[...deployNydus].map((name) => ["proxy_plugins", name]),
    // nydus's settings, set now or by an earlier install (given back now).
    ...(nydus?.changes ?? (cleaned !== withoutImports ? nydusSettingPaths(version, nydusName(suffix)) : [])),
  ]);
  const set = nydus === null ? "" : `, and the nydus snapshotter ${decision.nydus?.name} (${SETUP_VARIABLE})`;
  return {
    path,
    content: after,
    mode: 0o644,
    // What uninstall gives back: the admin's file without kata-install's parts (nor another
    // installer's, a takeover's). Taken as it is now whenever the admin edited it since the last
    // install (install/apply.ts), so that an edit between two installs is never lost.
    ...(text !== null ? { restore: restoreOf(t, path, dropBlock(without, path, suffix)) } : {}),
    block: suffix,
    template: name,
    reason:
      text === null
        ? `containerd's configuration, with the Kata handlers${set}`
        : `the Kata handlers${set}, added to containerd's own configuration${withoutImports !== before ? IMPORTS_GONE : ""}`,
  };
}

/**
 * kata-deploy's nydus proxy plugins in a file it edited in place: 4.x's, of the name kata-install
 * sets up, and 3.x's (named plain "nydus", known by its nydus-snapshotter socket), which the
 * takeover replaces as kata-deploy 4.x replaces it on an upgrade (takeover.ts says so).
 */
/**
 * What uninstall gives back of the admin's file after a takeover: kata-deploy's backup of it
 * (`<file>.bak`, what kata-deploy's own uninstall restores: containerd.rs @ 4.1.0) when the file
 * without kata-deploy's parts is that backup but for the settings kata-deploy sets in place (the
 * log level of its DEBUG, nydus's snapshot annotations) — so those go back too, byte for byte.
 * Else (the admin edited the file since) the file as it is without kata-deploy's parts.
 */
function restoreOf(t: Target, path: string, stripped: string): string {
  const backup = t.takeover === null ? null : (t.current.get(backupOf(path)) ?? null);
  if (backup === null) return stripped;
  const a = parseOrNull(stripped);
  const b = parseOrNull(backup);
  if (a === null || b === null) return stripped;
  for (const table of [a, b]) {
    const debug = dig(table, ["debug"]);
    if (isTable(debug)) delete debug.level;
    for (const plugin of ["io.containerd.grpc.v1.cri", "cri"]) {
      const containerd = dig(table, ["plugins", plugin, "containerd"]);
      if (isTable(containerd)) delete containerd.disable_snapshot_annotations;
    }
  }
  return isDeepStrictEqual(a, b) ? backup : stripped;
}

/** kata-deploy's backup of a containerd configuration it edits in place (containerd.rs @ 4.1.0). */
export function backupOf(path: string): string {
  return `${path}.bak`;
}

function deployNydusPlugins(parsed: Record<string, unknown>, name: string): Set<string> {
  const proxies = dig(parsed, ["proxy_plugins"]);
  const older = Object.entries(isTable(proxies) ? proxies : {})
    .filter(([, p]) => isTable(p) && isOlderNydus(p))
    .map(([n]) => n);
  return new Set([name, ...older]);
}

/** The runtime containerd 1.x's CRI plugin defines and names default_runtime_name when its file does not. */
const DEFAULT_RUNTIME = { name: "runc", runtimeType: "io.containerd.runc.v2" } as const;

/** The CRI plugin's containerd table of a parsed containerd file (its short name in schema 1). */
function criContainerd(
  parsed: Record<string, unknown> | null,
  version: number,
): Record<string, unknown> | null {
  const table = dig(parsed ?? {}, ["plugins", pluginFor(version), "containerd"]);
  return isTable(table) ? table : null;
}

/**
 * The default runtime our block must define: containerd's own (runc) when the admin's file has no
 * runtimes table, so that runc lived in containerd's built-in map, which a table of ours replaces
 * whole on 1.x (the CRI plugin then fails: "no corresponding runtime configured in
 * containerd.runtimes for containerd default_runtime_name"). Null when the admin's file defines its
 * runtimes itself, or names another default (theirs to define: containerd fails on it already).
 */
function defaultRuntimeToKeep(
  admins: Record<string, unknown> | null,
  version: number,
): typeof DEFAULT_RUNTIME | null {
  const cri = criContainerd(admins, version);
  if (cri !== null && cri.runtimes !== undefined) return null;
  const named = cri?.default_runtime_name;
  return named === undefined || named === DEFAULT_RUNTIME.name ? DEFAULT_RUNTIME : null;
}

/** Whether kata-install's block in `text` (an earlier install's) holds the default runtime's table. */
function ownsDefaultRuntime(text: string, path: string, suffix: string, version: number): boolean {
  const all = parseOrNull(text);
  const admins = parseOrNull(dropBlock(text, path, suffix));
  const has = (parsed: Record<string, unknown> | null) => {
    const runtimes = criContainerd(parsed, version)?.runtimes;
    return isTable(runtimes) && runtimes[DEFAULT_RUNTIME.name] !== undefined;
  };
  return has(all) && !has(admins);
}

/**
 * The file as written still defines the runtime default_runtime_name names (runc unless set), as
 * the admin's file did (itself, or through containerd's built-in map): without it containerd 1.x's
 * CRI plugin does not start, and every pod of the node fails, not only Kata's.
 */
function checkDefaultRuntime(
  admins: Record<string, unknown> | null,
  content: string,
  template: string,
  version: number,
): void {
  const served = (parsed: Record<string, unknown> | null) => {
    const cri = criContainerd(parsed, version);
    const named =
      typeof cri?.default_runtime_name === "string" ? cri.default_runtime_name : DEFAULT_RUNTIME.name;
    if (!isTable(cri?.runtimes)) return named === DEFAULT_RUNTIME.name;
    return named in (cri.runtimes as Record<string, unknown>);
  };
  if (served(admins) && !served(parseOrNull(content)))
    throw new TemplateBug(template, "the runtimes table no longer defines containerd's default runtime");
}

/** Said of a file whose kata-deploy imports go. */
const IMPORTS_GONE = "; kata-deploy's imports out (containerd does not start on an import of a missing file)";

/** containerd 2.x's main file: our old handlers out, and the import of the drop-in directory in. */
function cleanMain(
  path: string,
  text: string | null,
  imports: readonly string[] | null,
  version: number,
  ours: (tablePath: string[]) => boolean,
  dropImport: ((entry: string) => boolean) | null,
  /** Every file of kata-install's its imports may name (its drop-in, the admin's copied one). */
  ownEntries: readonly string[] = [],
): RenderedFile | null {
  if (text === null) {
    if (imports === null) return null;
    const content = `version = ${version}\nimports = [${imports.map(tomlString).join(", ")}]\n`;
    return {
      path,
      content,
      mode: 0o644,
      template: "(import line)",
      reason: "containerd's configuration, importing the Kata handlers",
    };
  }
  const parsedBefore = parseAdmin(path, text);
  // kata-deploy's imports of its drop-ins go (one would dangle once /opt/kata is ours: its #13141),
  // and any whose file is gone already.
  const withoutImports = dropImport ? removeImports(text, dropImport) : text;
  const cleanedBase = removeTables(withoutImports, ours);
  let after = cleanedBase;
  for (const entry of imports ?? []) after = ensureImport(after, entry, tomlString);
  if (after === text) return null;
  const parsed = parseOrNull(after);
  if (parsed === null) throw new TemplateBug("(import line)", `editing ${path} produced invalid TOML`);
  checkUntouched(parsedBefore, after, "(import line)", ours, [["imports"]]);
  return {
    path,
    content: after,
    mode: 0o644,
    // The admin's file without kata-install's imports (nor kata-deploy's): see editInPlaceOf.
    restore: removeImports(cleanedBase, (entry) => ownEntries.includes(entry)),
    template: "(import line)",
    reason: `containerd's configuration: imports the Kata handlers' drop-in${withoutImports !== text ? IMPORTS_GONE : ""}`,
  };
}

/**
 * The admin's file, parsed before kata-install edits it: one that does not parse is the admin's to
 * fix (containerd cannot read it either), said with its line, never taken for a bug of ours.
 */
function parseAdmin(path: string, text: string): Record<string, unknown> {
  try {
    return parse(text) as Record<string, unknown>;
  } catch (error) {
    throw new UserError(
      `${path} is not valid TOML (${tomlErrorText(error)}): containerd cannot read it either; fix it, then plan again (nothing was written)`,
    );
  }
}

/** Why `text` is not TOML, as the parser says it (its line). */
function parseProblem(text: string): string {
  try {
    parse(text);
    return "it parses";
  } catch (error) {
    return tomlErrorText(error);
  }
}

function parseOrNull(text: string): Record<string, unknown> | null {
  try {
    return parse(text) as Record<string, unknown>;
  } catch {
    return null;
  }
}

/** Parse back: each handler is there, with its type, path and configuration file. */
function checkContainerd(content: string, template: string, handlers: Handler[], version: number): void {
  const parsed = parseOrNull(content);
  if (parsed === null) throw new TemplateBug(template, `rendered invalid TOML (${parseProblem(content)})`);
  const runtimes = dig(parsed, ["plugins", pluginFor(version), "containerd", "runtimes"]) as
    | Record<string, Record<string, unknown>>
    | undefined;
  for (const h of handlers) {
    const got = runtimes?.[h.name];
    if (
      got?.runtime_type !== h.runtimeType ||
      got?.runtime_path !== h.runtimePath ||
      dig(got, ["options", "ConfigPath"]) !== h.configPath
    ) {
      throw new TemplateBug(template, `handler ${h.name} does not read back as rendered`);
    }
  }
}

function checkCrio(content: string, template: string, handlers: Handler[]): void {
  const parsed = parseOrNull(content);
  if (parsed === null) throw new TemplateBug(template, "rendered invalid TOML");
  for (const h of handlers) {
    const got = dig(parsed, ["crio", "runtime", "runtimes", h.name]) as Record<string, unknown> | undefined;
    if (
      got?.runtime_path !== h.runtimePath ||
      got?.runtime_config_path !== h.configPath ||
      got?.runtime_type !== "vm"
    ) {
      throw new TemplateBug(template, `handler ${h.name} does not read back as rendered`);
    }
  }
}

/** Everything of the admin's (all but our handlers, and the settings at `except`) reads back the same. */
function checkUntouched(
  before: Record<string, unknown> | null,
  afterText: string,
  template: string,
  ours: (tablePath: string[]) => boolean,
  except: string[][] = [],
): void {
  if (before === null) return; // an unparsable file: the runtime check already refused it
  const after = parseOrNull(afterText);
  const strip = (table: Record<string, unknown> | null) => {
    const copy = structuredClone(table ?? {});
    for (const path of except) {
      const parent = dig(copy, path.slice(0, -1));
      if (parent !== null && typeof parent === "object")
        delete (parent as Record<string, unknown>)[path.at(-1) ?? ""];
    }
    for (const path of RUNTIMES_PATHS) {
      const runtimes = dig(copy, path) as Record<string, unknown> | undefined;
      if (runtimes)
        for (const name of Object.keys(runtimes)) if (ours([...path, name])) delete runtimes[name];
    }
    // From version 3 on, a handler's snapshotter is the images plugin's too (handlersContext).
    const platforms = dig(copy, ["plugins", "io.containerd.cri.v1.images", "runtime_platforms"]);
    if (platforms !== null && typeof platforms === "object")
      for (const name of Object.keys(platforms))
        if (ours([...V3_RUNTIMES, name])) delete (platforms as Record<string, unknown>)[name];
    return pruneEmpty(copy);
  };
  if (JSON.stringify(strip(before)) !== JSON.stringify(strip(after))) {
    throw new TemplateBug(template, "the edit changed settings of the admin's, not only the Kata handlers");
  }
}

/** Tables left empty (the parents our handlers created) say nothing: drop them on both sides. */
function pruneEmpty(table: Record<string, unknown>): Record<string, unknown> {
  for (const [key, value] of Object.entries(table)) {
    if (value !== null && typeof value === "object" && !Array.isArray(value) && !(value instanceof Date)) {
      pruneEmpty(value as Record<string, unknown>);
      if (Object.keys(value).length === 0) delete table[key];
    }
  }
  return table;
}

/** The action a plan shows for the runtime's restart; undefined when it picks changes up by itself. */
function restartAction(restart: RuntimeRestart): RuntimeAction | undefined {
  switch (restart.kind) {
    case "systemd":
      return {
        kind: restart.verb === "reload" ? "reload-runtime" : "restart-runtime",
        target: restart.target,
        reason: restart.reason,
      };
    case "command":
      return { kind: "restart-runtime", target: restart.target, reason: restart.reason };
    case "none":
      return undefined;
    default:
      return unreachable(restart);
  }
}
