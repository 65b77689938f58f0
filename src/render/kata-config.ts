// Each chosen shim's Kata configuration: the base file is the release's own, byte for byte (its
// /opt/kata paths moved where INSTALLATION_PREFIX and MULTI_INSTALL_SUFFIX put Kata), and a
// config.d drop-in holds every value the decision set, each with its source. kata-install never
// writes a key it did not decide, so a release's new keys and defaults reach the node as released.
import type { Catalog, ShimSpec } from "../decide/catalog.js";
import type { Decision } from "../decide/decision.js";
import { isKernelCmdlineKey, kernelCmdlineProblem } from "../decide/kernel-cmdline.js";
import {
  DECIDED_DROP_IN,
  debugConfigDir,
  handlerName,
  installDir,
  shimConfigDir,
  shimConfigPath,
  variantConfigDir,
  WRAPPERS_DIR,
} from "../decide/layout.js";
import type { Decided, Source } from "../decide/provenance.js";
import { addsToKernelParams, describeSource, describeSourceOnNode } from "../decide/provenance.js";
import { UserError } from "../errors.js";
import { moveInstallDir, parseKataToml, valueAt } from "../release/config-file.js";
import { baseName, type Release } from "../release/release.js";
import { TemplateBug, type Templates } from "./templates.js";
import { tomlKey } from "./toml-literal.js";

export interface RenderedFile {
  /** Host path. */
  path: string;
  /** The new bytes; null when the file should not exist (a file of ours no longer wanted). */
  content: string | null;
  mode: number;
  /** The template it came from (or the release file it is), for bug reports. */
  template: string;
  reason: string;
  /** What uninstall restores instead of the current bytes (see FileChange.restore). */
  restore?: string | null;
  /** For a file edited in place: its block's suffix (see FileChange.block). */
  block?: string;
}

/** The release's configuration of `shim` as this node gets it: its paths under the install directory. */
export function baseText(release: Release, decision: Decision, shim: string): string | null {
  const shipped = release.shims.get(shim);
  return shipped ? moveInstallDir(shipped.text, installDir(decision)) : null;
}

/** A shim's base configuration as a table, as this node gets it: what a key is when nothing decided it. */
/**
 * What kata-install's drop-in holds for a decided value, and so what Kata reads (a drop-in
 * replaces the key whole): the value itself, or — where kata-deploy's environment adds to the
 * release's own — the release's value with it: kernel parameters appended (proxies, DEBUG), and
 * annotations joined (kata-deploy's merge: sorted, each once). explain shows the same.
 */
export function asWritten(
  key: string,
  entry: Decided<unknown>,
  base: Record<string, unknown>,
): { value: unknown; how: "set" | "appended" | "joined" } {
  if (addsToKernelParams(key, entry.source)) {
    const current = valueAt(base, key);
    return {
      value: [current, entry.value].filter((p) => typeof p === "string" && p !== "").join(" "),
      how: "appended",
    };
  }
  if (key.endsWith(".enable_annotations") && entry.source.kind === "env" && Array.isArray(entry.value)) {
    const current = valueAt(base, key);
    return {
      value: [...new Set([...(Array.isArray(current) ? current : []), ...entry.value].map(String))].sort(),
      how: "joined",
    };
  }
  return { value: entry.value, how: "set" };
}

export function baseTable(
  release: Release | null,
  decision: Decision,
  shim: string,
): Record<string, unknown> | null {
  if (release === null) return null;
  const shipped = release.shims.get(shim);
  if (shipped === undefined) return null;
  return installDir(decision) === "/opt/kata"
    ? shipped.config.table
    : parseKataToml(moveInstallDir(shipped.text, installDir(decision)));
}

/** The shared_fs a shim's configuration has when nothing decided otherwise: the release's; undefined without one. */
export function defaultSharedFs(catalog: Catalog, shim: string): string | undefined {
  const shipped = catalog.release?.shims.get(shim);
  const section = shipped?.hypervisor;
  if (!shipped || !section) return undefined;
  const value = valueAt(shipped.config.table, `hypervisor.${section}.shared_fs`);
  return typeof value === "string" ? value : undefined;
}

export function renderKataConfigs(
  decision: Decision,
  catalog: Catalog,
  templates: Templates,
): RenderedFile[] {
  const release = catalog.release;
  const files: RenderedFile[] = [];
  const wrappers = new Map<string, RenderedFile>();
  // Without the release there is no base to write: the plan says so (the "release" check).
  if (release === null) return [];
  for (const { name } of decision.shims) {
    const spec = catalog.shims.get(name) as ShimSpec;
    const text = baseText(release, decision, name);
    if (text === null) continue; // not shipped: decide said so
    const wrapper = qemuWrapper(decision, name, templates);
    if (wrapper) wrappers.set(wrapper.path, wrapper);
    const base: RenderedFile = {
      path: shimConfigPath(decision, name, spec.runtime),
      content: text,
      mode: 0o644,
      template: baseName(release, name),
      reason: `${baseName(release, name)}, as the release ships it`,
    };
    files.push(base);
    const table = baseTable(release, decision, name) ?? {};
    const decided = decision.config[name] ?? {};
    const dir = shimConfigDir(decision, name, spec.runtime);
    if (Object.keys(decided).length > 0) files.push(renderDecided(dir, spec, decided, table, templates));
    if (decision.install.debug.value) {
      // kata-deploy's -debug variant: the same base, and the decided values with guest debug on.
      const variant = debugConfigDir(decision, name);
      files.push({
        ...base,
        path: `${variant}/configuration-${name}.toml`,
        reason: `${baseName(release, name)}, for its debug handler (DEBUG)`,
      });
      const debugged = withGuestDebug(spec, decided, catalog, decision.install.debug.source);
      files.push(
        renderDecided(variant, spec, debugged, table, templates, `${handlerName(decision, name)}-debug`),
      );
    }
  }
  // The admin's custom runtimes: their base shim's configuration, and its values with theirs over them.
  for (const custom of decision.customRuntimes) {
    const spec = catalog.shims.get(custom.base) as ShimSpec;
    const base = files.find((f) => f.path === shimConfigPath(decision, custom.base, spec.runtime));
    if (base === undefined) continue; // not installed: decide left it out already
    const dir = variantConfigDir(decision, custom.handler);
    files.push({
      ...base,
      path: `${dir}/configuration-${custom.base}.toml`,
      reason: `${baseName(release, custom.base)}, for the custom runtime ${custom.handler}`,
    });
    if (Object.keys(custom.config).length > 0)
      files.push(
        renderDecided(
          dir,
          spec,
          custom.config,
          baseTable(release, decision, custom.base) ?? {},
          templates,
          custom.handler,
        ),
      );
  }
  return [...files, ...wrappers.values()];
}

/**
 * Outside /opt/kata (INSTALLATION_PREFIX, MULTI_INSTALL_SUFFIX), Kata's qemu does not find its
 * firmware where it was built to look: a wrapper passes -L, as kata-deploy's does. Decide points
 * the shim's configuration at it; this writes it.
 */
function qemuWrapper(decision: Decision, shim: string, templates: Templates): RenderedFile | null {
  const dir = installDir(decision);
  const path = decision.config[shim]?.["hypervisor.qemu.path"]?.value;
  if (typeof path !== "string" || !path.startsWith(`${dir}/${WRAPPERS_DIR}/`)) return null;
  const binary = path.slice(`${dir}/${WRAPPERS_DIR}/`.length).replace(/-installation-prefix$/, "");
  // qemu-system-x86_64-snp-experimental's firmware is under share/kata-qemu-snp-experimental.
  const suffix = binary.replace(/^qemu-system-[^-]+/, "");
  const template = "kata/qemu-wrapper.sh.njk";
  return {
    path,
    content: templates.render(template, {
      dir,
      share: `kata-qemu${suffix}`,
      qemu: `${dir}/bin/${binary}`,
      datadir: `${dir}/share/kata-qemu${suffix}/qemu/`,
    }),
    mode: 0o755,
    template,
    reason: `Kata's qemu, told where its firmware is under ${dir}`,
  };
}

/** kata-deploy's guest debug settings (its 20-debug.toml and debug kernel parameters). */
function withGuestDebug(
  spec: ShimSpec,
  decided: Record<string, Decided<unknown>>,
  catalog: Catalog,
  source: Source,
): Record<string, Decided<unknown>> {
  const hv = `hypervisor.${spec.hypervisor}`;
  const out = { ...decided };
  // Only keys this shim's configuration has: a debug switch it lacks is not invented.
  const set = (key: string, value: unknown, from: Source = source) => {
    if (catalog.hasKey(spec.name, key) !== false) out[key] = { value, source: from, beaten: [] };
  };
  for (const key of ["runtime.enable_debug", "agent.kata.enable_debug", `${hv}.enable_debug`]) set(key, true);
  set("agent.kata.debug_console_enabled", true);
  // Added to the command line as the environment's parameters are: after what is there already.
  const params = "agent.log=debug initcall_debug";
  const kernel = decided[`${hv}.kernel_params`];
  if (kernel === undefined) set(`${hv}.kernel_params`, params);
  else set(`${hv}.kernel_params`, `${String(kernel.value)} ${params}`, kernel.source);
  return out;
}

function renderDecided(
  dir: string,
  spec: ShimSpec,
  decided: Record<string, Decided<unknown>>,
  base: Record<string, unknown>,
  templates: Templates,
  /** A variant handler's drop-in: its name (for the header and explain). */
  handler?: string,
): RenderedFile {
  const sections = new Map<string, Array<{ name: string; value: unknown; source: string }>>();
  for (const [key, entry] of Object.entries(decided)) {
    const dot = key.lastIndexOf(".");
    const section = key.slice(0, dot);
    const value = asWritten(key, entry, base).value;
    // Whatever decided it (a takeover's carried value, a rule's fact), nothing that would split or
    // cut the guest kernel's command line is written: the last check before any file is.
    const cmdline = isKernelCmdlineKey(key) ? kernelCmdlineProblem(value) : null;
    if (cmdline !== null)
      throw new UserError(
        `${describeSource(entry.source)} sets ${key} for ${handler ?? spec.name}: the value ${cmdline}; nothing was written`,
      );
    const list = sections.get(section) ?? [];
    list.push({ name: key.slice(dot + 1), value, source: describeSourceOnNode(entry.source) });
    sections.set(section, list);
  }
  const template = "kata/decided.toml.njk";
  const content = templates.render(template, {
    shim: spec.name,
    subject: handler ? `the handler ${handler} (on the "${spec.name}" shim)` : `the "${spec.name}" shim`,
    explain: handler ?? spec.name,
    sections: [...sections].map(([name, keys]) => ({
      name,
      header: name.split(".").map(tomlKey).join("."),
      keys,
    })),
  });
  let table: Record<string, unknown>;
  try {
    table = parseKataToml(content);
  } catch (error) {
    throw new TemplateBug(
      template,
      `rendered invalid TOML for ${spec.name}: ${(error as Error).message.split("\n")[0]}`,
    );
  }
  for (const [section, keys] of sections) {
    for (const key of keys) {
      const read = valueAt(table, `${section}.${key.name}`);
      if (comparable(read) !== comparable(key.value)) {
        throw new TemplateBug(
          template,
          `${section}.${key.name} reads back as ${comparable(read)}, not the decided ${comparable(key.value)}`,
        );
      }
    }
  }
  return {
    path: `${dir}/config.d/${DECIDED_DROP_IN}`,
    content,
    mode: 0o644,
    template,
    reason: `what kata-install decided for ${handler ?? spec.name} on this node`,
  };
}

/** A value as text to compare and show (bigints too). */
function comparable(value: unknown): string {
  return JSON.stringify(value, (_, v) => (typeof v === "bigint" ? `${v}n` : v)) ?? "undefined";
}

export { valueAt as valueAtKey };
