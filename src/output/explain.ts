// `explain`: every decided value with the source that set it and the ones it beat, as one JSON
// document, and a readable view rendered from it.
import type { Decision, ErofsSetup, NydusSetup } from "../decide/decision.js";
import { handlerName } from "../decide/layout.js";
import { addsToKernelParams, type Decided, describeSource, type Source } from "../decide/provenance.js";
import { RUNTIME_LAYOUTS } from "../detect/runtime/layouts.js";
import { shown } from "../json-text.js";

export interface Explained {
  kind:
    | "runtime"
    | "default-shim"
    | "shim"
    | "artifact"
    | "config"
    | "handler"
    | "custom-runtime"
    | "snapshotter"
    | "install";
  key: string;
  shim?: string;
  value: unknown;
  reason?: string;
  source: Source;
  beaten: Array<{ value: unknown; source: Source }>;
  /**
   * The node's own drop-ins (an admin's, in the shim's config.d/) that set the key, in the order
   * Kata reads them; `applies`: the one whose value Kata uses instead of `value`.
   */
  onNode?: Array<{ file: string; value: unknown; applies: boolean; why: string }>;
  /**
   * What kata-install's drop-in holds, so what Kata reads, where it is not `value` itself: the
   * release's kernel parameters with `value` appended, the release's annotations joined with it.
   */
  kataReads?: { value: unknown; how: "appended" | "joined" };
  /** Why Kata reads this key and does nothing with it (the remote hypervisor's kernel_params). */
  ignoredByKata?: string;
}

export function explainDocument(decision: Decision): { values: Explained[] } {
  return {
    values: [
      ...runtimeExplained(decision),
      ...shimsExplained(decision),
      ...artifactsExplained(decision),
      ...configExplained(decision),
      ...customRuntimesExplained(decision),
      ...(decision.erofs === null ? [] : erofsExplained(decision.erofs)),
      ...(decision.nydus === null ? [] : nydusExplained(decision.nydus, decision)),
      ...installExplained(decision),
    ],
  };
}

/** The container runtime, and the shim its default handler uses. */
function runtimeExplained({ runtime, defaultShim }: Decision): Explained[] {
  const { value, source, beaten } = runtime;
  const values: Explained[] = [{ kind: "runtime", key: "runtime.kind", value, source, beaten }];
  if (defaultShim)
    values.push({
      kind: "default-shim",
      key: "default_shim",
      value: defaultShim.value,
      source: defaultShim.source,
      beaten: defaultShim.beaten,
    });
  return values;
}

/** Each shim installed or dropped, with why. */
function shimsExplained(decision: Decision): Explained[] {
  const shim = (s: Decision["shims"][number], value: string): Explained => ({
    kind: "shim",
    key: `shims.${s.name}`,
    shim: s.name,
    value,
    reason: s.reason,
    source: s.source,
    beaten: [],
  });
  return [
    ...decision.shims.map((s) => shim(s, "installed")),
    ...decision.dropped.map((s) => shim(s, "dropped")),
  ];
}

/** Each artifact, where it comes from; one dropped (and not pulled all the same), why. */
function artifactsExplained(decision: Decision): Explained[] {
  const artifact = (a: { name: string; reason: string; source: Source }, value: unknown): Explained => ({
    kind: "artifact",
    key: `artifacts.${a.name}`,
    value,
    reason: a.reason,
    source: a.source,
    beaten: [],
  });
  return [
    ...decision.artifacts.map((a) => artifact(a, a.from)),
    ...decision.droppedArtifacts
      .filter((a) => !decision.artifacts.some((x) => x.name === a.name))
      .map((a) => artifact(a, "dropped")),
  ];
}

/** Each shim's configuration values and handler settings. */
function configExplained(decision: Decision): Explained[] {
  const values: Explained[] = [];
  for (const [shim, keys] of Object.entries(decision.config))
    for (const [key, decided] of Object.entries(keys))
      values.push({
        kind: "config",
        key,
        shim,
        value: decided.value,
        source: decided.source,
        beaten: decided.beaten,
      });
  for (const [shim, settings] of Object.entries(decision.handlers))
    for (const [key, decided] of Object.entries(settings))
      if (decided)
        values.push({
          kind: "handler",
          key: `handler.${key}`,
          shim,
          value: decided.value,
          source: decided.source,
          beaten: decided.beaten,
        });
  return values;
}

/** The admin's own handlers, each on its base shim, with its own values. */
function customRuntimesExplained(decision: Decision): Explained[] {
  return decision.customRuntimes.flatMap((custom): Explained[] => [
    {
      kind: "custom-runtime",
      key: `custom_runtimes.${custom.handler}`,
      shim: custom.handler,
      value: custom.base,
      reason: `a handler of its own on ${custom.base}'s configuration`,
      source: custom.source,
      beaten: [],
    },
    // Its own values (the base shim's are explained under the shim).
    ...Object.entries(custom.config)
      .filter(([, d]) => d.source.kind === "overrides" && d.source.name.startsWith("custom_runtimes."))
      .map(([key, decided]): Explained => ({ kind: "config", key, shim: custom.handler, ...decided })),
  ]);
}

/** Where Kata goes, and the debug handlers DEBUG adds. */
function installExplained(decision: Decision): Explained[] {
  const { install } = decision;
  const values: Explained[] = [{ kind: "install", key: "install.prefix", ...install.prefix }];
  if (install.suffix.value !== "") values.push({ kind: "install", key: "install.suffix", ...install.suffix });
  values.push({
    kind: "install",
    key: "install.debug",
    ...install.debug,
    reason: install.debug.value
      ? "a kata-<shim>-debug handler beside each shim's, with guest debug on"
      : "no debug handlers (DEBUG=true adds one beside each shim's)",
  });
  if (install.debug.value)
    for (const shim of decision.shims) {
      const handler = `${handlerName(decision, shim.name)}-debug`;
      values.push({
        kind: "custom-runtime",
        key: `debug_handlers.${handler}`,
        shim: handler,
        value: shim.name,
        reason: `${shim.name}'s configuration and values, with guest debug on: runtime, agent and hypervisor enable_debug, the debug console, agent.log=debug initcall_debug on the kernel command line`,
        source: install.debug.source,
        beaten: [],
      });
    }
  return values;
}

/** EXPERIMENTAL_SETUP_SNAPSHOTTER=erofs, and each of its settings, with what it writes. */
function erofsExplained(erofs: ErofsSetup): Explained[] {
  const { mergeMode, snapshotterMode, dmverity } = erofs;
  const setting = (key: string, decided: Decided<unknown>, reason: string): Explained => ({
    kind: "snapshotter",
    key: `snapshotters.erofs.${key}`,
    ...decided,
    reason,
  });
  return [
    {
      kind: "snapshotter",
      key: "snapshotters.erofs",
      value: "set up",
      reason: "containerd's built-in erofs snapshotter, configured in kata-install's containerd drop-in",
      source: erofs.source,
      beaten: [],
    },
    setting(
      "merge_mode",
      mergeMode,
      mergeMode.value === "merged"
        ? "max_unmerged_layers = 0: an image's layers in one fsmeta.erofs, which only runtime-rs reads"
        : "one layer.erofs per layer (max_unmerged_layers left to containerd), which the Go runtime reads too",
    ),
    setting(
      "snapshotter_mode",
      snapshotterMode,
      snapshotterMode.value === "memory"
        ? 'the writable layer in memory (default_size = "0")'
        : 'the writable layer on disk (default_size = "10G")',
    ),
    setting(
      "dmverity",
      dmverity,
      dmverity.value
        ? 'dm-verity over the layers (dmverity_mode = "on", the differ\'s enable_dmverity = true)'
        : 'no dm-verity (dmverity_mode = "off")',
    ),
  ];
}

/** EXPERIMENTAL_SETUP_SNAPSHOTTER=nydus: the instance, and where its binaries come from. */
function nydusExplained(nydus: NydusSetup, decision: Decision): Explained[] {
  const kind = decision.runtime.value;
  const inPlace =
    decision.containerdInPlace.value || (kind !== null && RUNTIME_LAYOUTS[kind].handlers.kind === "template");
  const binaries = Object.entries(nydus.binaries)
    .map(([name, b]) => `${name} sha256:${b.sha256.slice(0, 12)}… (${b.size} bytes)`)
    .join(", ");
  return [
    {
      kind: "snapshotter",
      key: "snapshotters.nydus",
      value: nydus.name,
      reason: `kata-deploy's nydus-for-kata-tee: its unit ${nydus.name}.service (wanted by ${nydus.criUnits.join(", ")}) and the proxy plugin ${nydus.name} ${inPlace ? "in kata-install's block of containerd's own configuration (edited in place), with disable_snapshot_annotations = false in its CRI table" : "in kata-install's containerd drop-in"}`,
      source: nydus.source,
      beaten: [],
    },
    {
      kind: "snapshotter",
      key: "snapshotters.nydus.source",
      value: nydus.from.dir,
      reason: `where containerd-nydus-grpc and nydus-overlayfs are copied from, byte for byte: ${binaries}`,
      source: nydus.from.source,
      beaten: [],
    },
  ];
}

/**
 * Entries that a KEY argument names: a key ("hypervisor.qemu.shared_fs", "shims.clh"), with the keys
 * under it ("snapshotters.erofs": its settings too), a shim, or shim:key.
 */
export function selectExplained(
  values: Explained[],
  keys: string[],
): { selected: Explained[]; unmatched: string[] } {
  if (keys.length === 0) return { selected: values, unmatched: [] };
  const matches = (entry: Explained, key: string) => {
    const colon = key.indexOf(":");
    const named = (k: string) =>
      entry.key === k || entry.key.endsWith(`.${k}`) || (k.includes(".") && entry.key.startsWith(`${k}.`));
    if (colon > 0) return entry.shim === key.slice(0, colon) && named(key.slice(colon + 1));
    return entry.shim === key || named(key);
  };
  const unmatched = keys.filter((key) => !values.some((v) => matches(v, key)));
  return { selected: values.filter((v) => keys.some((key) => matches(v, key))), unmatched };
}

export function renderExplain(values: Explained[]): string {
  const lines: string[] = [];
  for (const v of values) {
    const subject =
      v.shim && v.kind !== "shim" && v.kind !== "custom-runtime" ? `[${v.shim}] ${v.key}` : v.key;
    const value =
      v.value === null && v.source.kind === "default" && v.kind === "config" ? "(not set)" : shown(v.value);
    // The value an admin's later drop-in gives is the one Kata runs with: said where the eye lands.
    const used = v.onNode?.find((d) => d.applies);
    const replaced = used ? `  — replaced on the node: Kata uses ${shown(used.value)}` : "";
    const reads =
      v.kataReads && !used
        ? `  — ${v.kataReads.how === "joined" ? "joined to the release's" : "after the release's"}: Kata reads ${shown(v.kataReads.value)}`
        : "";
    lines.push(`${subject} = ${value}${v.reason ? `  — ${v.reason}` : ""}${reads}${replaced}`);
    lines.push(`    set by ${describeSource(v.source)}`);
    if (v.ignoredByKata) lines.push(`    ignored by Kata: ${v.ignoredByKata}`);
    const why = whyOf(v.source);
    if (why) lines.push(`      why: ${why}`);
    // Added to the release's parameters, not in their place: say so.
    const after = addsToKernelParams(v.key, v.source);
    const label = v.kataReads?.how === "joined" ? "with  " : after ? "after " : "beat  ";
    for (const b of v.beaten) lines.push(`    ${label} ${shown(b.value)} from ${describeSource(b.source)}`);
    for (const d of v.onNode ?? [])
      lines.push(
        `    ${d.applies ? "but   " : "node  "} ${shown(d.value)} from ${d.file} on the node: ${d.why}`,
      );
  }
  return `${lines.join("\n")}\n`;
}

/** A value as TOML-ish text: JSON, with a release's large integers (bigints) as their digits. */

function whyOf(source: Source): string | undefined {
  if (source.kind === "rule") return source.why;
  if (source.kind === "derived") return whyOf(source.from);
  return undefined;
}
