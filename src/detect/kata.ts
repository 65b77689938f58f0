// An existing Kata install: kata-deploy's, a package's, or ours (recognised by our journal).

import path from "node:path";
import * as z from "zod/mini";
import { JOURNAL_DIR } from "../state/places.js";
import { versionIn } from "../version.js";
import type { DetectContext } from "./context.js";
import { deployEdits } from "./kata-deploy-edits.js";
import { type HandlerPlacement, RUNTIME_LAYOUTS } from "./runtime/layouts.js";
import { defineSource } from "./source.js";
import { dotted, isTable, readToml } from "./toml.js";

const DEFAULTS_DIR = "share/defaults/kata-containers";

/**
 * kata-deploy's custom runtimes (the chart's customRuntimes): the handler, its base shim, the
 * values of its own drop-ins (50-overrides.toml, the devkit's); the snapshotter its runtime table
 * names is the runtime's facts'. Its -debug handlers are DEBUG's, not here.
 */
const CustomRuntimes = z.array(
  z.object({
    handler: z.string(),
    base: z.string(),
    file: z.string(),
    values: z.record(z.string(), z.unknown()),
  }),
);

/**
 * What a takeover carried of kata-deploy's: the shims it served and what it wrote in their
 * config.d, its custom runtimes — kept in the journal, so that every later plan keeps those
 * handlers and values (their files are gone with kata-deploy's tree).
 */
export const CarriedSettings = z.object({
  shims: z.array(z.string()),
  settings: z.array(
    z.object({ shim: z.string(), file: z.string(), values: z.record(z.string(), z.unknown()) }),
  ),
  /** Absent: none, or a journal (facts) written before they were carried. */
  customRuntimes: z.optional(CustomRuntimes),
});

export const KataFacts = z.object({
  installed: z.boolean(),
  prefix: z.nullable(z.string()),
  version: z.nullable(z.string()),
  /** configuration-<shim>.toml files shipped under <prefix>/share/defaults/kata-containers. */
  configs: z.array(z.string()),
  /** The admin's own configuration, which Kata prefers over the shipped ones. */
  etcConfig: z.nullable(z.string()),
  managedBy: z.nullable(z.enum(["kata-install", "kata-deploy", "other"])),
  /**
   * Ours, after a takeover: the shims kata-deploy served and what it wrote in their config.d, as
   * the journal keeps them (later plans keep those handlers and values). Absent: none.
   */
  carried: z.optional(CarriedSettings),
  /**
   * kata-deploy's runtime drop-ins for this prefix where kata-deploy's install is not (its tree
   * gone, or kata-install's now): they would replace kata-install's handlers, so an install
   * removes them (uninstall gives them back). Absent: none.
   */
  deployLeftovers: z.optional(z.array(z.string())),
  /**
   * What kata-deploy left on the node, for a takeover: its container-runtime drop-ins (and the
   * imports that name them), and the shims it configured under the prefix. Optional: facts saved
   * before it was recorded still load.
   */
  deploy: z.optional(
    z.object({
      dropIns: z.array(z.string()),
      shims: z.array(z.string()),
      /**
       * The drop-ins kata-deploy wrote in each shim's config.d (the chart's dropIn as
       * 50-user-overrides.toml, the proxy as 30-kernel-params.toml, …), with their values as
       * dotted keys: what a takeover carries over. Absent in facts saved before it was recorded.
       */
      settings: z.optional(
        z.array(
          z.object({
            shim: z.string(),
            file: z.string(),
            values: z.record(z.string(), z.unknown()),
          }),
        ),
      ),
      /**
       * Snapshotters kata-deploy set up (EXPERIMENTAL_SETUP_SNAPSHOTTER): nydus's unit and binaries,
       * and what its containerd drop-in configures (the proxy plugin, erofs), by path.
       */
      snapshotters: z.optional(z.array(z.object({ name: z.string(), paths: z.array(z.string()) }))),
      /** kata-deploy's custom runtimes (CustomRuntimes). Absent in facts saved before. */
      customRuntimes: z.optional(CustomRuntimes),
    }),
  ),
});
export type KataFacts = z.infer<typeof KataFacts>;

const NOT_INSTALLED: KataFacts = {
  installed: false,
  prefix: null,
  version: null,
  configs: [],
  etcConfig: null,
  managedBy: null,
};

export const kata = defineSource({
  key: "kata",
  schema: KataFacts,
  startsProcesses: true,
  unknown: NOT_INSTALLED,
  async detect(ctx: DetectContext): Promise<KataFacts> {
    const etcConfig = (await ctx.exists("kata", "/etc/kata-containers/configuration.toml"))
      ? "/etc/kata-containers/configuration.toml"
      : null;
    const prefix = ctx.kataPrefix;
    const runtimeBinary = `${prefix}/bin/kata-runtime`;
    const shimBinary = `${prefix}/bin/containerd-shim-kata-v2`;
    const hasRuntime = await ctx.exists("kata", runtimeBinary);
    const hasShim = await ctx.exists("kata", shimBinary);
    const configs = (await ctx.list("kata", `${prefix}/${DEFAULTS_DIR}`)).filter((name) =>
      /^configuration.*\.toml$/.test(name),
    );
    if (!hasRuntime && !hasShim && configs.length === 0) {
      const left = await deployLeftovers(ctx, prefix);
      return { ...NOT_INSTALLED, etcConfig, ...(left.length > 0 ? { deployLeftovers: left } : {}) };
    }
    const probe = hasRuntime ? runtimeBinary : hasShim ? shimBinary : null;
    const run = probe === null ? null : await ctx.run("kata", probe, ["--version"]);
    const journal = (await ctx.exists("kata", `${prefix}/${JOURNAL_DIR}`))
      ? await readJournal(ctx, prefix)
      : null;
    // A journal that records nothing installed — a takeover rolled back by a later run, a restart
    // still owed — does not make kata-deploy's install there kata-install's.
    const traces = journal === null || !journal.records ? await kataDeployTraces(ctx, prefix) : null;
    const ours = journal !== null && traces === null;
    const deploy = ours ? null : traces;
    const carried = ours ? (journal?.carried ?? null) : null;
    return {
      installed: true,
      prefix,
      // The runtime's answer; else the release's VERSION file (kata-deploy copies it in).
      version: run?.ok ? versionIn(run.stdout) : await versionFile(ctx, prefix),
      configs,
      etcConfig,
      managedBy: ours ? "kata-install" : deploy !== null ? "kata-deploy" : "other",
      ...(deploy !== null ? { deploy } : {}),
      ...(carried !== null ? { carried } : {}),
      ...(await leftoversOf(ctx, prefix, deploy === null)),
    };
  },
});

/** The runtime drop-ins kata-deploy 4.x writes (its MULTI_INSTALL_SUFFIX variants too), per runtime. */
const CONTAINERD_DROP_IN = /^kata-deploy(-[\w.-]+)?\.toml$/;
const { containerd, crio, k3s, rke2, k0s } = RUNTIME_LAYOUTS;
/** Where each runtime's layout has its drop-in directory (k3s and rke2: both of their templates'). */
const dirOf = (placement: HandlerPlacement) => ("dir" in placement ? placement.dir : "");
const DEPLOY_DROP_IN_DIRS: Array<{ dir: string; name: RegExp; content?: (text: string) => boolean }> = [
  { dir: dirOf(containerd.handlers), name: CONTAINERD_DROP_IN },
  { dir: dirOf(crio.handlers), name: /^99-kata-deploy(-[\w.-]+)?$/ },
  // Written at every CRI-O configure, empty unless DEBUG: kata-deploy's only while it holds just that.
  {
    dir: dirOf(crio.handlers),
    name: /^100-debug$/,
    content: (text) => /^\s*(\[crio\.runtime\]\s*log_level\s*=\s*"debug"\s*)?$/.test(text),
  },
  ...[k3s, rke2].flatMap((layout) =>
    ["config.toml.d", "config-v3.toml.d"].map((d) => ({
      dir: `${path.posix.dirname(layout.config)}/${d}`,
      name: CONTAINERD_DROP_IN,
    })),
  ),
  { dir: dirOf(k0s.handlers), name: CONTAINERD_DROP_IN },
];
/**
 * kata-deploy's mark in each shim's configuration copy: a line of the comment block it puts before
 * the release's text (install.rs KATA_DEPLOY_CONFIG_WARNING @ 4.1.0: a `# ====` rule first; older
 * releases began with the line itself). Looked for anywhere in the leading comments, not at byte 0.
 */
const DEPLOY_MARK = "IMPORTANT: This file is managed by kata-deploy";

/** Whether `text` begins with a comment block carrying kata-deploy's mark. */
export function hasDeployMark(text: string): boolean {
  for (const line of text.split("\n")) {
    const trimmed = line.trim();
    if (trimmed === "") continue;
    if (!trimmed.startsWith("#")) return false;
    if (trimmed.includes(DEPLOY_MARK)) return true;
  }
  return false;
}

/** The drop-ins kata-deploy 4.x writes into a shim's config.d (its install.rs). */
export const KATA_DEPLOY_DROP_INS = [
  "10-installation-prefix.toml",
  "20-debug.toml",
  "22-k0s-kubelet-root.toml",
  "25-devkit.toml",
  "30-kernel-params.toml",
  "50-user-overrides.toml",
  "50-overrides.toml",
];

/**
 * kata-deploy's traces: its per-shim configuration copies (runtimes/<shim>/, with its header) and
 * the runtime drop-ins it wrote. Null when there are none: an install of another kind.
 */
async function kataDeployTraces(
  ctx: DetectContext,
  prefix: string,
): Promise<NonNullable<KataFacts["deploy"]> | null> {
  const shims: string[] = [];
  const settings: NonNullable<NonNullable<KataFacts["deploy"]>["settings"]> = [];
  for (const base of [
    `${prefix}/${DEFAULTS_DIR}/runtimes`,
    `${prefix}/${DEFAULTS_DIR}/runtime-rs/runtimes`,
  ]) {
    for (const shim of await ctx.list("kata", base)) {
      const copy = `${base}/${shim}/configuration-${shim}.toml`;
      const text = await ctx.read("kata", copy);
      if (text === null || !hasDeployMark(text)) continue;
      shims.push(shim);
      // What kata-deploy set in the copy itself (the annotations it allows, forced guest pull).
      const edits = await editsIn(ctx, copy);
      if (edits !== null) settings.push({ shim, file: copy, values: edits });
      for (const name of await ctx.list("kata", `${base}/${shim}/config.d`)) {
        if (!KATA_DEPLOY_DROP_INS.includes(name)) continue;
        const file = `${base}/${shim}/config.d/${name}`;
        const table = await readToml(ctx, "kata", file);
        if (table !== null) settings.push({ shim, file, values: dotted(table) });
      }
    }
  }
  const dropIns: string[] = [];
  const own = `${prefix}/containerd/config.d/kata-deploy.toml`;
  if (await ctx.exists("kata", own)) dropIns.push(own);
  dropIns.push(...(await deployRuntimeDropIns(ctx, prefix)));
  if (shims.length === 0 && dropIns.length === 0) return null;
  const snapshotters = await deploySnapshotters(ctx, prefix, dropIns);
  const customRuntimes = await deployCustomRuntimes(ctx, prefix, shims);
  return {
    dropIns: dropIns.sort(),
    shims: shims.sort(),
    settings,
    ...(snapshotters.length > 0 ? { snapshotters } : {}),
    ...(customRuntimes.length > 0 ? { customRuntimes } : {}),
  };
}

/**
 * kata-deploy's runtime drop-ins outside the prefix that are this prefix's install's: of its names
 * (kata-deploy[-<suffix>].toml, 99-kata-deploy[-<suffix>]) and naming files under the prefix — so
 * a second install's (MULTI_INSTALL_SUFFIX, /opt/kata-blue) is never taken for this one's. CRI-O's
 * 100-debug names no path: kata-deploy's while it holds only its debug level.
 */
async function deployRuntimeDropIns(ctx: DetectContext, prefix: string): Promise<string[]> {
  const found: string[] = [];
  for (const { dir, name, content } of DEPLOY_DROP_IN_DIRS)
    for (const entry of await ctx.list("kata", dir)) {
      if (!name.test(entry)) continue;
      const text = (await ctx.read("kata", `${dir}/${entry}`)) ?? "\0";
      if (content ? !content(text) : !text.includes(`"${prefix}/`)) continue;
      found.push(`${dir}/${entry}`);
    }
  return found.sort();
}

/**
 * kata-deploy's runtime drop-ins for this prefix where kata-deploy's install is not (its tree gone
 * — wiped, an uninstall cut short — or kata-install's now): handlers naming files that are not
 * kata-deploy's any more, read after kata-install's drop-in (kata-deploy.toml sorts after
 * 50-kata-install.toml), so they would replace kata-install's handlers. CRI-O's shared 100-debug
 * is not one of them.
 */
async function deployLeftovers(ctx: DetectContext, prefix: string): Promise<string[]> {
  return (await deployRuntimeDropIns(ctx, prefix)).filter((f) => !f.endsWith("/100-debug"));
}

async function leftoversOf(
  ctx: DetectContext,
  prefix: string,
  noDeploy: boolean,
): Promise<{ deployLeftovers?: string[] }> {
  if (!noDeploy) return {};
  const left = await deployLeftovers(ctx, prefix);
  return left.length > 0 ? { deployLeftovers: left } : {};
}

/** The drop-ins of a custom runtime's config.d that are the admin's (install.rs: 50-overrides.toml, 25-devkit.toml). */
const CUSTOM_DROP_INS = ["25-devkit.toml", "50-overrides.toml"];

/**
 * kata-deploy's custom runtimes: each directory of custom-runtimes/ holding a configuration copy
 * with its mark (install.rs setup_custom_runtime @ 4.1.0), but DEBUG's kata-<shim>-debug ones.
 */
async function deployCustomRuntimes(
  ctx: DetectContext,
  prefix: string,
  shims: string[],
): Promise<NonNullable<NonNullable<KataFacts["deploy"]>["customRuntimes"]>> {
  const dir = `${prefix}/${DEFAULTS_DIR}/custom-runtimes`;
  const out: NonNullable<NonNullable<KataFacts["deploy"]>["customRuntimes"]> = [];
  // DEBUG's handlers are kata-<shim>[-<suffix>]-debug, the suffix MULTI_INSTALL_SUFFIX's (the
  // install directory's /opt/kata-<suffix>).
  const base = path.posix.basename(prefix);
  const suffix = base.startsWith("kata-") ? `-${base.slice("kata-".length)}` : "";
  for (const handler of await ctx.list("kata", dir)) {
    if (shims.some((shim) => handler === `kata-${shim}${suffix}-debug`)) continue;
    const copy = (await ctx.list("kata", `${dir}/${handler}`)).find((n) =>
      /^configuration-.+\.toml$/.test(n),
    );
    if (copy === undefined) continue;
    const text = await ctx.read("kata", `${dir}/${handler}/${copy}`);
    if (text === null || !hasDeployMark(text)) continue;
    const on = copy.slice("configuration-".length, -".toml".length);
    const values: Record<string, unknown> = {};
    let file = `${dir}/${handler}/config.d/50-overrides.toml`;
    for (const name of CUSTOM_DROP_INS) {
      const path = `${dir}/${handler}/config.d/${name}`;
      const read = await readToml(ctx, "kata", path);
      if (read === null) continue;
      Object.assign(values, dotted(read));
      file = path;
    }
    out.push({ handler, base: on, file, values });
  }
  return out;
}

/** kata-deploy's nydus (4.x: nydus-for-kata-tee; 3.x: nydus-snapshotter), with any suffix. */
const NYDUS_NAMES = ["nydus-for-kata-tee", "nydus-snapshotter"];

/**
 * The snapshotters kata-deploy set up: nydus (its unit, its binaries under the prefix, its proxy
 * plugin) and erofs (the snapshotter and differ settings in its drop-in).
 */
export async function deploySnapshotters(
  ctx: DetectContext,
  prefix: string,
  dropIns: string[],
): Promise<Array<{ name: string; paths: string[] }>> {
  const suffix = /^kata-(.+)$/.exec(path.posix.basename(prefix))?.[1];
  const nydus: string[] = [];
  const units = "/etc/systemd/system";
  // The directories `systemctl enable` links units into (its WantedBy=, 3.x's RequiredBy=).
  const enableDirs = (await ctx.list("kata", units)).filter((d) => /\.(wants|requires)$/.test(d));
  for (const base of NYDUS_NAMES) {
    const name = suffix ? `${base}-${suffix}` : base;
    if (await ctx.exists("kata", `${prefix}/${base}`)) nydus.push(`${prefix}/${base}`);
    // A unit of that name is kata-deploy's only when it runs kata-deploy's binary: nydus-snapshotter
    // is also the name nydus's own installs give theirs, which is the admin's, not kata-deploy's.
    const unit = `${units}/${name}.service`;
    if (!((await ctx.read("kata", unit)) ?? "").includes(`${prefix}/${base}/`)) continue;
    nydus.push(unit);
    for (const dir of enableDirs)
      if ((await ctx.list("kata", `${units}/${dir}`)).includes(`${name}.service`))
        nydus.push(`${units}/${dir}/${name}.service`);
  }
  const erofs: string[] = [];
  for (const file of dropIns.filter((f) => f.endsWith(".toml"))) {
    const table = await readToml(ctx, "kata", file);
    const proxies = table?.proxy_plugins;
    for (const [name, plugin] of Object.entries(isTable(proxies) ? proxies : {}))
      if (isTable(plugin) && (NYDUS_NAMES.some((n) => name.startsWith(n)) || isOlderNydus(plugin)))
        nydus.push(`${file}: [proxy_plugins."${name}"]`);
    const plugins = table?.plugins;
    if (isTable(plugins) && isTable(plugins["io.containerd.snapshotter.v1.erofs"]))
      erofs.push(`${file}: [plugins."io.containerd.snapshotter.v1.erofs"]`);
  }
  return [
    ...(nydus.length > 0 ? [{ name: "nydus", paths: nydus }] : []),
    ...(erofs.length > 0 ? [{ name: "erofs", paths: erofs }] : []),
  ];
}

/** 3.x's proxy plugin, named plain "nydus": known by the socket of its nydus-snapshotter unit. */
export function isOlderNydus(plugin: Record<string, unknown>): boolean {
  return typeof plugin.address === "string" && plugin.address.startsWith("/run/nydus-snapshotter");
}

/** kata-deploy's edits in a shim's configuration file; null when it has none (or is unreadable). */
export async function editsIn(ctx: DetectContext, file: string): Promise<Record<string, unknown> | null> {
  const table = await readToml(ctx, "kata", file);
  const edits = table === null ? {} : deployEdits(table);
  return Object.keys(edits).length > 0 ? edits : null;
}

async function versionFile(ctx: DetectContext, prefix: string): Promise<string | null> {
  const text = (await ctx.read("kata", `${prefix}/VERSION`))?.trim();
  return text && /^\d+\.\d+/.test(text) ? text : null;
}

/**
 * What kata-detect needs of kata-install's journal: whether it records anything installed (or a
 * run cut short), and what a takeover carried over. One that does not parse is taken as recording
 * an install: install itself refuses it, by name.
 */
async function readJournal(
  ctx: DetectContext,
  prefix: string,
): Promise<{ records: boolean; carried: KataFacts["carried"] | null }> {
  const text = await ctx.read("kata", `${prefix}/${JOURNAL_DIR}/journal.json`);
  if (text === null) return { records: true, carried: null };
  try {
    const doc = JSON.parse(text) as {
      carried?: unknown;
      files?: Record<string, unknown>;
      artifacts?: { version?: unknown };
      transaction?: unknown;
      pendingSwitch?: unknown;
      staging?: unknown;
    };
    const records =
      Object.keys(doc.files ?? {}).length > 0 ||
      (doc.artifacts?.version ?? null) !== null ||
      (doc.transaction ?? null) !== null ||
      (doc.pendingSwitch ?? null) !== null ||
      (doc.staging ?? null) !== null;
    const parsed = KataFacts.shape.carried.safeParse(doc.carried);
    return { records, carried: parsed.success && parsed.data !== undefined ? parsed.data : null };
  } catch {
    ctx.problem("kata", "kata-install's journal is not JSON: what a takeover carried over is not known", {
      path: `${prefix}/${JOURNAL_DIR}/journal.json`,
    });
    return { records: true, carried: null };
  }
}
