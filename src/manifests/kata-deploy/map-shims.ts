// The chart's shims → kata-install's values: which ones each architecture's nodes are told to
// install (SHIMS_<ARCH>), their default, and each shim's settings (kata-deploy's per-shim
// variables, drop-ins as overrides, RuntimeClass).
import { isDeepStrictEqual } from "node:util";
import type { Catalog } from "../../decide/catalog.js";
import type { Values } from "../values-type.js";
import {
  CHART_ARCHES,
  CHART_DEFAULT_SHIM,
  CHART_SHIMS,
  type ChartArch,
  type ChartValues,
  type ShimValues,
  shimDefaults,
} from "./chart.js";
import { dropInConfig } from "./drop-in.js";
import { get, type Mapping, merged, type Table } from "./mapping.js";
import type { Path } from "./read.js";

const ARCHES = Object.keys(CHART_ARCHES) as ChartArch[];

/** What the shims' mapping knows of every shim: the file's settings over the chart's defaults. */
class Shims {
  readonly disableAll: boolean;
  /** The shims the file names, with its settings for each. */
  readonly given: Record<string, ShimValues>;
  /** The chart's shims and the file's, in that order. */
  readonly names: string[];
  /**
   * The chart installs a list on every node; kata-install pins one only when the file narrows the
   * chart's (disableAll, or a shim turned off); otherwise each node decides from its facts.
   */
  readonly pinned: boolean;

  constructor(
    values: ChartValues,
    private readonly catalog: Catalog,
  ) {
    const { disableAll, ...given } = values.shims ?? {};
    this.disableAll = disableAll === true;
    this.given = Object.fromEntries(
      Object.entries(given).filter((e): e is [string, ShimValues] => typeof e[1] === "object"),
    );
    this.names = [...new Set([...CHART_SHIMS, ...Object.keys(this.given)])];
    const turnedOff = (n: string) => this.given[n]?.enabled === false && shimDefaults(n)?.enabled !== false;
    this.pinned = this.disableAll || Object.keys(this.given).some(turnedOff);
  }

  defaults(name: string): ShimValues {
    return shimDefaults(name) ?? {};
  }

  effective(name: string): ShimValues {
    return merged(this.defaults(name), this.given[name] ?? {});
  }

  enabled(name: string): boolean {
    const e = this.effective(name).enabled;
    return e === true || ((e === null || e === undefined) && !this.disableAll);
  }

  /**
   * A shim of kata-deploy's chart is one of Kata's releases: the nodes install it from theirs
   * (with a warning where no rule of kata-install's vets it); kata-deploy's other names are not.
   */
  served(name: string): boolean {
    return this.catalog.shims.has(name) || (CHART_SHIMS.includes(name) && !this.catalog.unserved.has(name));
  }

  whyUnserved(name: string): string {
    return `kata-install does not serve ${name}: ${this.catalog.unserved.get(name) ?? "no such shim"}`;
  }
}

/** What one architecture's nodes are told, gathered shim by shim. */
interface ArchLists {
  arch: ChartArch;
  shims: string[];
  annotations: string[];
  snapshotters: string[];
  pulls: string[];
  force: string[];
  /**
   * The chart's defaults of shims whose settings this file leaves alone (each node applies them
   * itself): a mapping variable given is the whole mapping on the nodes, so where one is written
   * for another shim's sake, these go into it too.
   */
  defaultSnapshotters: string[];
  defaultPulls: string[];
}

type Proxies = Record<"httpsProxy" | "noProxy", string[]>;

export function mapShims(m: Mapping, base: Values): void {
  const s = new Shims(m.values, m.catalog);
  for (const name of s.names)
    if (!CHART_SHIMS.includes(name) && !m.catalog.isKnownShim(name))
      m.issue(["shims", name], `not a shim of kata-deploy's chart (known: ${CHART_SHIMS.join(", ")})`);
  m.ledger.carried(
    ["shims", "disableAll"],
    s.pinned ? "the shims pinned per architecture (SHIMS_<ARCH>)" : "every node decides its shims",
  );
  const lists: Record<string, ArchLists> = Object.fromEntries(
    ARCHES.map((arch) => [
      arch,
      {
        arch,
        shims: [],
        annotations: [],
        snapshotters: [],
        pulls: [],
        force: [],
        defaultSnapshotters: [],
        defaultPulls: [],
      },
    ]),
  );
  const proxies: Proxies = { httpsProxy: [], noProxy: [] };
  for (const name of s.names) {
    const path: Path = ["shims", name];
    if (!s.enabled(name)) {
      m.ledger.carried([...path, "enabled"], "not installed");
      m.ledger.noEffect(path, "the shim is not enabled");
    } else if (!s.served(name)) mapUnservedShim(m, s, name, lists);
    else mapServedShim(m, new ShimKeys(m, s, name), lists, proxies, base);
  }
  noteUnserved(m, s);
  writeArchLists(m, s, Object.values(lists), proxies);
  mapDefaultShims(m, s);
  mapDefaultRuntimeClass(m, s);
}

/** An enabled shim kata-install does not serve: on a pinned list all the same (each node then says why it drops it, as for SHIMS). */
function mapUnservedShim(m: Mapping, s: Shims, name: string, lists: Record<string, ArchLists>): void {
  const eff = s.effective(name);
  const path: Path = ["shims", name];
  if (s.pinned) {
    m.ledger.notCarried(path, s.whyUnserved(name));
    for (const a of eff.supportedArches ?? []) lists[a]?.shims.push(name);
    return;
  }
  const dflt = s.defaults(name);
  for (const leaf of m.ledger.under(path))
    if (isDeepStrictEqual(get(eff, leaf.slice(2)), get(dflt, leaf.slice(2))))
      m.ledger.noEffect(leaf, "the chart's default: each node decides its shims");
    else m.ledger.notCarried(leaf, s.whyUnserved(name));
}

/** One served shim's keys: its settings in effect, and whether each takes effect. */
class ShimKeys {
  readonly eff: ShimValues;
  readonly dflt: ShimValues;

  constructor(
    private readonly m: Mapping,
    readonly shims: Shims,
    readonly name: string,
  ) {
    this.eff = shims.effective(name);
    this.dflt = shims.defaults(name);
  }

  path(...rest: string[]): Path {
    return ["shims", this.name, ...rest];
  }

  /** Whether a setting of this shim takes effect: always when pinned; otherwise only if the file changes it. */
  counts(...rest: string[]): boolean {
    return (
      this.shims.pinned ||
      (this.m.has(this.path(...rest)) && !isDeepStrictEqual(get(this.eff, rest), get(this.dflt, rest)))
    );
  }

  account(rest: string[], to: string): void {
    if (this.counts(...rest)) this.m.ledger.carried(this.path(...rest), to);
    else
      this.m.ledger.noEffect(
        this.path(...rest),
        "the chart's default: kata-install's own applies (each node decides)",
      );
  }
}

function mapServedShim(
  m: Mapping,
  k: ShimKeys,
  lists: Record<string, ArchLists>,
  proxies: Proxies,
  base: Values,
): void {
  m.ledger.carried(k.path("enabled"), k.shims.pinned ? "SHIMS_<ARCH>" : "every node decides");
  mapSupportedArches(m, k, lists);
  for (const a of k.eff.supportedArches ?? []) {
    const l = lists[a];
    if (l !== undefined) listOnArch(k, l);
  }
  turnOffChartDefaults(m, k);
  k.account(["allowedHypervisorAnnotations"], "ALLOWED_HYPERVISOR_ANNOTATIONS_<ARCH>");
  k.account(["containerd", "snapshotter"], "SNAPSHOTTER_HANDLER_MAPPING_<ARCH>");
  k.account(
    ["containerd", "forceGuestPull"],
    "EXPERIMENTAL_FORCE_GUEST_PULL_<ARCH>, PULL_TYPE_MAPPING_<ARCH>",
  );
  k.account(["crio", "guestPull"], "PULL_TYPE_MAPPING_<ARCH>");
  for (const key of ["httpsProxy", "noProxy"] as const) {
    const v = k.eff.agent?.[key] ?? "";
    if (k.counts("agent", key) && v !== "") proxies[key].push(`${k.name}=${v}`);
    k.account(["agent", key], key === "httpsProxy" ? "AGENT_HTTPS_PROXY" : "AGENT_NO_PROXY");
  }
  const dropIn = k.eff.dropIn ?? "";
  if (dropIn.trim() !== "")
    m.set(
      `overrides.config.${k.name}`,
      dropInConfig(m.chart, k.path("dropIn"), dropIn, k.name, m.catalog, m.issues),
    );
  k.account(["dropIn"], `overrides [config.${k.name}]`);
  mapShimRuntimeClass(m, k, base);
}

function mapSupportedArches(m: Mapping, k: ShimKeys, lists: Record<string, ArchLists>): void {
  if (k.shims.pinned) {
    for (const a of k.eff.supportedArches ?? []) lists[a]?.shims.push(k.name);
    m.ledger.carried(k.path("supportedArches"), "SHIMS_<ARCH>");
  } else if (k.counts("supportedArches"))
    m.ledger.notCarried(
      k.path("supportedArches"),
      "while every node decides its shims, a shim goes wherever it can run: pin the shims (shims.disableAll and enabled) to choose them per architecture",
    );
  else m.ledger.noEffect(k.path("supportedArches"), "the chart's default");
}

/** The shim's entries in one of its architectures' mapping variables. */
function listOnArch(k: ShimKeys, l: ArchLists): void {
  const { name, eff, dflt } = k;
  const annotations = eff.allowedHypervisorAnnotations ?? [];
  if (k.counts("allowedHypervisorAnnotations") && annotations.length > 0)
    l.annotations.push(`${name}:${annotations.join(",")}`);
  if (k.counts("containerd", "snapshotter") && eff.containerd?.snapshotter)
    l.snapshotters.push(`${name}:${eff.containerd.snapshotter}`);
  else if (!k.counts("containerd", "snapshotter") && dflt.containerd?.snapshotter)
    l.defaultSnapshotters.push(`${name}:${dflt.containerd.snapshotter}`);
  const force = k.counts("containerd", "forceGuestPull") && eff.containerd?.forceGuestPull === true;
  if (force) l.force.push(name);
  if (force || (k.counts("crio", "guestPull") && eff.crio?.guestPull === true))
    l.pulls.push(`${name}:guest-pull`);
  else if (!k.counts("crio", "guestPull") && dflt.crio?.guestPull === true)
    l.defaultPulls.push(`${name}:guest-pull`);
}

/**
 * A default of the chart's turned off (a confidential shim's nydus or guest pull): said to the
 * nodes in the overrides file, which beats the default each node would otherwise apply.
 */
function turnOffChartDefaults(m: Mapping, k: ShimKeys): void {
  const { name, eff, dflt } = k;
  if (k.counts("containerd", "snapshotter") && !eff.containerd?.snapshotter && dflt.containerd?.snapshotter)
    m.set(`overrides.handlers.${name}.snapshotter`, "");
  if (
    k.counts("crio", "guestPull") &&
    eff.crio?.guestPull !== true &&
    eff.containerd?.forceGuestPull !== true &&
    dflt.crio?.guestPull === true
  )
    m.set(`overrides.handlers.${name}.pull_type`, "default");
}

function mapShimRuntimeClass(m: Mapping, k: ShimKeys, base: Values): void {
  const { name } = k;
  const runtimeClass = k.eff.runtimeClass ?? {};
  if (k.counts("runtimeClass", "nodeSelector") && runtimeClass.nodeSelector !== undefined)
    m.set(`runtime_classes.node_selector_by_shim.${name}`, runtimeClass.nodeSelector);
  k.account(["runtimeClass", "nodeSelector"], `runtime_classes.node_selector_by_shim.${name}`);
  if (k.counts("runtimeClass", "overheadEnabled") && typeof runtimeClass.overheadEnabled === "boolean")
    m.set(`runtime_classes.overhead_enabled_by_shim.${name}`, runtimeClass.overheadEnabled);
  k.account(["runtimeClass", "overheadEnabled"], `runtime_classes.overhead_enabled_by_shim.${name}`);
  if (m.has(k.path("runtimeClass", "overhead"))) {
    const rc = base.runtime_classes as Table;
    const ours = ((rc.overhead_by_shim as Table)[name] ?? rc.overhead) as Table;
    m.set(`runtime_classes.overhead_by_shim.${name}`, { ...ours, ...runtimeClass.overhead });
    m.ledger.carried(k.path("runtimeClass", "overhead"), `runtime_classes.overhead_by_shim.${name}`);
  }
}

/** Unserved shims the chart's own defaults enable: said once. */
function noteUnserved(m: Mapping, s: Shims): void {
  const missing = s.names.filter((n) => s.enabled(n) && !s.served(n) && (!s.pinned || !(n in s.given)));
  if (missing.length > 0)
    m.note(
      ["shims"],
      `not carried: the chart${s.pinned ? "'s defaults" : ""} also enable${s.pinned ? "" : "s"} ${missing.join(", ")}, which kata-install does not serve (\`kata-install shims\` says why)`,
    );
}

/** Each architecture's lists as kata-install's values (arch.<arch>.*), and the proxies for all. */
function writeArchLists(m: Mapping, s: Shims, lists: ArchLists[], proxies: Proxies): void {
  if (s.pinned)
    for (const l of lists) {
      if (l.shims.length > 0) m.set(`arch.${CHART_ARCHES[l.arch]}.shims`, l.shims);
      // A list of shims none of which kata-install serves: every node of it would fail preflight.
      if (l.shims.length > 0 && !l.shims.some((n) => s.served(n)))
        m.note(
          ["shims"],
          `the ${l.arch} nodes would install nothing: kata-install serves none of ${l.shims.join(", ")} (each node's preflight fails with "no shim can run"); enable a shim kata-install serves there, or leave these nodes out (nodeSelector)`,
          `shims (${l.arch})`,
        );
    }
  for (const l of lists) {
    const arch = CHART_ARCHES[l.arch];
    if (l.annotations.length > 0)
      m.set(`arch.${arch}.allowed_hypervisor_annotations`, l.annotations.join(" "));
    if (l.snapshotters.length > 0)
      m.set(
        `arch.${arch}.snapshotter_handler_mapping`,
        [...l.snapshotters, ...l.defaultSnapshotters].join(","),
      );
    if (l.pulls.length > 0)
      m.set(`arch.${arch}.pull_type_mapping`, [...l.pulls, ...l.defaultPulls].join(","));
    if (l.force.length > 0) m.set(`arch.${arch}.force_guest_pull`, l.force.join(","));
  }
  if (proxies.httpsProxy.length > 0) m.overlay.agent_https_proxy = proxies.httpsProxy.join(";");
  if (proxies.noProxy.length > 0) m.overlay.agent_no_proxy = proxies.noProxy.join(";");
}

/** The default shim of each architecture: only one that is installed there, as the chart has it. */
function mapDefaultShims(m: Mapping, s: Shims): void {
  const defaults = m.values.defaultShim ?? {};
  for (const a of ARCHES) {
    const name = defaults[a] ?? "";
    const where: Path = ["defaultShim", a];
    if (name === "") m.ledger.noEffect(where, "empty");
    else if (!s.enabled(name) || !(s.effective(name).supportedArches ?? []).includes(a))
      m.ledger.noEffect(where, `${name} is not enabled on ${a}: the chart sets no default there either`);
    else if (!s.served(name)) m.ledger.notCarried(where, s.whyUnserved(name));
    else {
      m.set(`arch.${CHART_ARCHES[a]}.default_shim`, name);
      m.ledger.carried(where, `DEFAULT_SHIM_${CHART_ARCHES[a].toUpperCase()}`);
    }
  }
}

/**
 * The default RuntimeClass's shim: the first architecture's, the chart's defaults included, as
 * the chart has it; and made only when that shim is installed, as the chart makes it.
 */
function mapDefaultRuntimeClass(m: Mapping, s: Shims): void {
  const all = merged<Record<string, string | undefined>>(
    Object.fromEntries(ARCHES.map((a) => [a, CHART_DEFAULT_SHIM])),
    m.values.defaultShim,
  );
  const first = ARCHES.map((a) => all[a] ?? "").find((n) => n !== "");
  if (first === undefined || m.values.runtimeClasses?.createDefault !== true) return;
  if (s.enabled(first) && s.served(first)) m.set("runtime_classes.default_shim", first);
  else {
    m.set("runtime_classes.create_default", false);
    m.note(
      ["runtimeClasses", "createDefault"],
      `no default RuntimeClass: its shim ${first} is not installed${s.served(first) ? "" : " (kata-install does not serve it)"}`,
    );
  }
}
