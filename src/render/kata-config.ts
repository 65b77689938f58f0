// Each chosen shim's Kata configuration: the base file from kata-install's templates (defaults
// only), and a config.d drop-in with every value the decision set, each with its source. Both are
// parsed back before they can be part of a plan.
import { parse } from "smol-toml";
import type { Catalog, ShimSpec } from "../decide/catalog.js";
import type { Decision } from "../decide/decision.js";
import type { Decided, Source } from "../decide/provenance.js";
import { describeSource } from "../decide/provenance.js";
import { DEFAULT_PREFIX } from "../detect/context.js";
import {
  DECIDED_DROP_IN,
  debugConfigDir,
  handlerName,
  installDir,
  shimConfigDir,
  shimConfigPath,
  variantConfigDir,
  WRAPPERS_DIR,
} from "./layout.js";
import { parseRendered, TemplateBug, type Templates } from "./templates.js";
import { tomlKey } from "./toml-literal.js";
import { type ArchVariant, loadVariants, type Variant } from "./variants.js";

export interface RenderedFile {
  /** Host path. */
  path: string;
  /** The new bytes; null when the file should not exist (a file of ours no longer wanted). */
  content: string | null;
  mode: number;
  /** The template it came from, for bug reports. */
  template: string;
  reason: string;
  /** What uninstall restores instead of the current bytes (see FileChange.restore). */
  restore?: string | null;
  /** For a file edited in place: its block's suffix (see FileChange.block). */
  block?: string;
}

/** The shared_fs a shim's configuration has when nothing decided otherwise (templates/kata/variants.toml). */
export function defaultSharedFs(templates: Templates, catalog: Catalog, shim: string): string {
  return loadVariants(templates, catalog).forShim(shim).shared_fs;
}

export function renderKataConfigs(
  decision: Decision,
  catalog: Catalog,
  templates: Templates,
): RenderedFile[] {
  const variants = loadVariants(templates, catalog);
  const arch = variants.forArch(decision.arch);
  const files: RenderedFile[] = [];
  const wrappers = new Map<string, RenderedFile>();
  for (const { name } of decision.shims) {
    const spec = catalog.shims.get(name) as ShimSpec;
    const v = variants.forShim(name);
    const wrapper = qemuWrapper(decision, spec, v, arch, templates);
    if (wrapper) wrappers.set(wrapper.path, wrapper);
    const base = renderBase(decision, spec, v, arch, templates, catalog, wrapper);
    files.push(base);
    const decided = decision.config[name] ?? {};
    const baseTable = parse(base.content ?? "");
    const dir = shimConfigDir(decision, name, spec.runtime);
    if (Object.keys(decided).length > 0) files.push(renderDecided(dir, spec, decided, baseTable, templates));
    if (decision.install.debug.value) {
      // kata-deploy's -debug variant: the same base, and the decided values with guest debug on.
      const variant = debugConfigDir(decision, name);
      files.push({
        ...base,
        path: `${variant}/configuration-${name}.toml`,
        reason: `Kata's configuration for ${name}, for its debug handler (DEBUG)`,
      });
      const debugged = withGuestDebug(spec, decided, catalog, decision.install.debug.source);
      files.push(
        renderDecided(variant, spec, debugged, baseTable, templates, `${handlerName(decision, name)}-debug`),
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
      reason: `Kata's configuration for ${custom.base}, for the custom runtime ${custom.handler}`,
    });
    if (Object.keys(custom.config).length > 0)
      files.push(
        renderDecided(dir, spec, custom.config, parse(base.content ?? ""), templates, custom.handler),
      );
  }
  return [...files, ...wrappers.values()];
}

/**
 * Outside /opt/kata (INSTALLATION_PREFIX, MULTI_INSTALL_SUFFIX), Kata's qemu does not find its
 * firmware where it was built to look: a wrapper passes -L, as kata-deploy's does. Not for a
 * host's qemu, which the decided values point at instead.
 */
function qemuWrapper(
  decision: Decision,
  spec: ShimSpec,
  v: Variant,
  arch: ArchVariant,
  templates: Templates,
): RenderedFile | null {
  const dir = installDir(decision);
  if (spec.hypervisor !== "qemu" || dir === DEFAULT_PREFIX) return null;
  if (decision.config[spec.name]?.["hypervisor.qemu.path"] !== undefined) return null;
  const suffix = v.qemu_suffix;
  const binary = `${arch.qemu_binary}${suffix}`;
  const template = "kata/qemu-wrapper.sh.njk";
  return {
    path: `${dir}/${WRAPPERS_DIR}/${binary}-installation-prefix`,
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

/**
 * A shim's base configuration as this node would get it, parsed: what a key is when nothing
 * decided it (explain shows it). For any shim of the catalogue, installed here or not.
 */
export function templateDefaults(
  decision: Decision,
  shim: string,
  catalog: Catalog,
  templates: Templates,
): Record<string, unknown> {
  const spec = catalog.shims.get(shim);
  if (spec === undefined) return {};
  const variants = loadVariants(templates, catalog);
  const v = variants.forShim(shim);
  const arch = variants.forArch(decision.arch);
  const base = renderBase(
    decision,
    spec,
    v,
    arch,
    templates,
    catalog,
    qemuWrapper(decision, spec, v, arch, templates),
  );
  return parse(base.content ?? "") as Record<string, unknown>;
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
  const set = (key: string, value: unknown, from: Source = source) => {
    if (catalog.keyType(spec.name, key) !== undefined) out[key] = { value, source: from, beaten: [] };
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

function renderBase(
  decision: Decision,
  spec: ShimSpec,
  v: Variant,
  arch: ArchVariant,
  templates: Templates,
  catalog: Catalog,
  wrapper: RenderedFile | null,
): RenderedFile {
  const dir = installDir(decision);
  const share = `${dir}/share/kata-containers`;
  const file = (name: unknown) => (name ? `${share}/${name}` : "");
  // qemu's firmware: the shim's own (TEE, GPU), else the architecture's (aarch64 boots UEFI).
  const qemuOnly = spec.hypervisor === "qemu";
  const firmware = v.firmware || (qemuOnly ? arch.qemu_firmware : "");
  const firmwareVolume = v.firmware_volume || (qemuOnly && !v.firmware ? arch.qemu_firmware_volume : "");
  const paths = {
    qemu: wrapper?.path ?? `${dir}/bin/${arch.qemu_binary}${v.qemu_suffix}`,
    clh: `${dir}/bin/cloud-hypervisor`,
    firecracker: `${dir}/bin/firecracker`,
    jailer: `${dir}/bin/jailer`,
    virtiofsd: `${dir}/libexec/virtiofsd`,
    kernel: file(v.kernel),
    image: file(v.image),
    initrd: file(v.initrd),
    firmware: firmware ? `${dir}/share/${firmware}` : "",
    firmware_volume: firmwareVolume ? `${dir}/share/${firmwareVolume}` : "",
  };
  const template = "kata/configuration.toml.njk";
  const content = templates.render(template, {
    shim: {
      name: spec.name,
      description: spec.description,
      hypervisor: spec.hypervisor,
      runtime: spec.runtime,
    },
    v,
    arch,
    paths,
  });
  checkKeys(content, template, spec, catalog);
  return {
    path: shimConfigPath(decision, spec.name, spec.runtime),
    content,
    mode: 0o644,
    template,
    reason: `Kata's configuration for ${spec.name}`,
  };
}

/** Every key a template writes must be one Kata has, for this shim's sections. */
function checkKeys(content: string, template: string, spec: ShimSpec, catalog: Catalog): void {
  const table = parseRendered(content, template, spec.name);
  for (const key of flatten(table)) {
    if (catalog.keyType(spec.name, key) === undefined)
      throw new TemplateBug(template, `wrote "${key}", which is no key of shim ${spec.name}`);
  }
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
    let value = entry.value;
    // Parameters from the environment (proxies) add to the guest kernel's command line.
    if (key.endsWith(".kernel_params") && entry.source.kind === "env") {
      const current = valueAtKey(base, key);
      value = [current, value].filter((p) => typeof p === "string" && p !== "").join(" ");
    }
    // Annotations from the environment join the configuration's own (kata-deploy's merge:
    // sorted, each once), never replace them.
    if (key.endsWith(".enable_annotations") && entry.source.kind === "env" && Array.isArray(value)) {
      const current = valueAtKey(base, key);
      value = [...new Set([...(Array.isArray(current) ? current : []), ...value].map(String))].sort();
    }
    const list = sections.get(section) ?? [];
    list.push({ name: key.slice(dot + 1), value, source: describeSource(entry.source) });
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
  const table = parseRendered(content, template, spec.name);
  for (const [section, keys] of sections) {
    for (const key of keys) {
      const read = valueAtKey(table, `${section}.${key.name}`);
      if (JSON.stringify(read) !== JSON.stringify(key.value)) {
        throw new TemplateBug(
          template,
          `${section}.${key.name} reads back as ${JSON.stringify(read)}, not the decided ${JSON.stringify(key.value)}`,
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

export function valueAtKey(table: Record<string, unknown>, key: string): unknown {
  // Section names never contain dots inside a part (agent.kata, hypervisor.qemu): split on all.
  let current: unknown = table;
  for (const part of key.split(".")) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

function flatten(table: Record<string, unknown>, prefix: string[] = []): string[] {
  return Object.entries(table).flatMap(([key, value]) =>
    value !== null && typeof value === "object" && !Array.isArray(value)
      ? flatten(value as Record<string, unknown>, [...prefix, key])
      : [[...prefix, key].join(".")],
  );
}
