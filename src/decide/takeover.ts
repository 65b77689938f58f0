// Taking over a node kata-deploy installed, losing nothing that served pods: every shim it served
// keeps its handler (one the node cannot run is kept, and said), and what it wrote in each shim's
// config.d is carried over as the decision it was — the chart's dropIn as the admin's override, the
// proxy and debug settings as its environment made them. Its installation-prefix drop-in is not
// carried: the prefix's paths are kata-install's to write.
import { valueAt } from "../release/config-file.js";
import type { Check, Chosen } from "./decision.js";
import type { DecideInput } from "./input.js";
import { NYDUS_FOR_KATA_TEE } from "./nydus-setup.js";
import type { Source } from "./provenance.js";

export interface Takeover {
  /** The shims kata-deploy configured (their handlers are the cluster's RuntimeClasses'). */
  shims: string[];
  settings: Array<{ shim: string; file: string; values: Record<string, unknown> }>;
  /** Taken over already: what the journal keeps of it (the files are gone with kata-deploy's tree). */
  done: boolean;
  /** The snapshotters kata-deploy set up (nydus, erofs), with the paths that say so. */
  snapshotters?: Array<{ name: string; paths: string[] }>;
  /** kata-deploy's custom runtimes: kept under their names, on their base shims, with their values. */
  customRuntimes?: Array<{ handler: string; base: string; file: string; values: Record<string, unknown> }>;
}

/**
 * kata-deploy's install at the directory being installed, or the one kata-install took over
 * there: what it served and wrote.
 */
export function takeoverOf(input: DecideInput, dir: string): Takeover | null {
  const { kata } = input.facts;
  if (kata.prefix !== dir) return null;
  if (kata.managedBy === "kata-deploy" && kata.deploy !== undefined)
    return {
      shims: kata.deploy.shims,
      settings: kata.deploy.settings ?? [],
      done: false,
      snapshotters: kata.deploy.snapshotters ?? [],
      customRuntimes: kata.deploy.customRuntimes ?? [],
    };
  if (kata.managedBy === "kata-install" && kata.carried !== undefined) return { ...kata.carried, done: true };
  return null;
}

/** Drop-ins the admin wrote through kata-deploy (its chart's dropIn): their override. */
const ADMINS = new Set(["50-user-overrides.toml", "50-overrides.toml"]);
/** Paths kata-deploy derived from INSTALLATION_PREFIX: kata-install derives its own. */
const NOT_CARRIED = new Set(["10-installation-prefix.toml"]);

/**
 * The values kata-deploy's drop-ins set for `shim`, as offers. Kernel parameters it combined with
 * the release's (30-kernel-params.toml: the base, then the proxy) are carried as what it added,
 * over the release's own, as the environment's are.
 */
export function carriedValues(
  input: DecideInput,
  takeover: Takeover,
  shim: string,
): Array<{ key: string; value: unknown; source: Source; append: boolean }> {
  const out: Array<{ key: string; value: unknown; source: Source; append: boolean }> = [];
  const shipped = input.catalog.release?.shims.get(shim);
  for (const { file, values } of takeover.settings.filter((s) => s.shim === shim)) {
    const name = file.slice(file.lastIndexOf("/") + 1);
    if (NOT_CARRIED.has(name)) continue;
    const source: Source = {
      kind: "carried",
      name: `kata-deploy's ${name.startsWith("configuration-") ? `edits of ${name}` : name}, carried over by the takeover`,
      file,
      over: ADMINS.has(name) ? "overrides" : "environment",
    };
    for (const [key, value] of Object.entries(values)) {
      if (key.endsWith(".kernel_params") && !ADMINS.has(name) && typeof value === "string") {
        // What kata-deploy added to the release's parameters (the proxy, debug's): carried as that.
        const base = valueAt(shipped?.config.table ?? {}, key);
        const own = new Set(typeof base === "string" ? base.split(/\s+/) : []);
        const added = value.split(/\s+/).filter((p) => p !== "" && !own.has(p));
        if (added.length > 0) out.push({ key, value: added.join(" "), source, append: true });
        continue;
      }
      if (!ADMINS.has(name)) {
        // kata-deploy's own edits (in its configuration copy, or in place): what they add to the
        // release's — the annotations it allowed, joined to the release's list; a flag it set.
        const base = valueAt(shipped?.config.table ?? {}, key);
        if (Array.isArray(value)) {
          const own = Array.isArray(base) ? base : [];
          const added = value.filter((v) => !own.includes(v));
          if (added.length > 0) out.push({ key, value: [...own, ...added], source, append: false });
          continue;
        }
        if (value === base) continue;
      }
      out.push({ key, value, source, append: false });
    }
  }
  return out;
}

/**
 * The rules' shims, with every shim kata-deploy served that they leave out: kept under its name.
 * One the rules say cannot run here is kept all the same (its pods may be running), with a warning
 * naming it; one the release does not ship cannot be written, and goes, with a warning too.
 */
export function keepServed(
  input: DecideInput,
  takeover: Takeover,
  ruled: Map<string, Chosen>,
  ruleDropped: Map<string, Chosen>,
  warnings: Check[],
): void {
  const { catalog } = input;
  const source: Source = { kind: "default", name: "kata-deploy's install, taken over" };
  for (const name of takeover.shims) {
    if (ruled.has(name)) continue;
    const spec = catalog.shims.get(name);
    if (spec === undefined || catalog.shipped(name) === false) {
      warnings.push(
        servedCheck(
          `${name}: kata-deploy served it here, but ${catalog.release ? `Kata ${catalog.release.version} ships no configuration for it` : "no rule knows it and no release was read"}: its handler kata-${name} goes with the takeover`,
        ),
      );
      continue;
    }
    const against = ruleDropped.get(name);
    ruleDropped.delete(name);
    ruled.set(name, { name, reason: "kata-deploy served it here: kept under its name", source });
    if (against)
      warnings.push(
        servedCheck(
          `${name}: kata-deploy served it here, but ${against.reason}: its handler is kept, for the pods that ask for it; drop it with the overrides file's shims = [...] if nothing runs on it`,
        ),
      );
  }
  // The rules' shims beyond kata-deploy's set: new handlers on this node, said where they are listed.
  if (takeover.done) return;
  for (const [name, chosen] of ruled)
    if (!takeover.shims.includes(name))
      ruled.set(name, {
        ...chosen,
        reason: `${chosen.reason} — new here: kata-deploy served ${takeover.shims.length > 0 ? `only ${takeover.shims.join(", ")}` : "none"} (pin the shims to keep its set)`,
      });
}

/** A pin that leaves out shims kata-deploy served: their handlers go, said. */
export function servedNotPinned(takeover: Takeover, pinned: string[], by: string): Check[] {
  const gone = takeover.shims.filter((s) => !pinned.includes(s));
  return gone.length === 0
    ? []
    : [
        servedCheck(
          `kata-deploy served ${gone.join(", ")} here; ${by} does not name ${gone.length === 1 ? "it" : "them"}: ${gone.map((s) => `kata-${s}`).join(", ")} ${gone.length === 1 ? "goes" : "go"} with the takeover`,
        ),
      ];
}

/**
 * The snapshotters kata-deploy set up that kata-install does not (each unless
 * EXPERIMENTAL_SETUP_SNAPSHOTTER names it, `setUp`): a takeover removes their binaries and
 * containerd settings with kata-deploy's tree and drop-in (and ends their units: nydus-changes.ts),
 * and the pods that pull through them stop starting. Refused, naming what would stop working;
 * ignorable by name for an admin who has moved those pods. kata-install sets up 4.x's
 * nydus-for-kata-tee (`setUp` holds its name), which carries 4.x's over as it is; 3.x's
 * nydus-snapshotter (another unit, socket and plugin name) it replaces, as kata-deploy 4.x does on
 * an upgrade from 3.x — said, since what was pulled through it is pulled again.
 */
export function takeoverSnapshotterChecks(
  takeover: Takeover,
  setUp: readonly string[] = [],
  /** Why no pod could use a snapshotter of that name on this node (null: some may). */
  unusable: (name: string) => string | null = () => null,
): Check[] {
  if (takeover.done) return [];
  const nydusSetUp = setUp.find((name) => name.startsWith(NYDUS_FOR_KATA_TEE));
  const out: Check[] = [];
  for (const { name, paths } of takeover.snapshotters ?? []) {
    // One kata-install sets up itself goes on being there: set up again in the same transaction.
    if (name === "erofs" && setUp.includes("erofs")) continue;
    const left =
      name === "nydus" && nydusSetUp ? paths.filter((p) => !p.includes(NYDUS_FOR_KATA_TEE)) : paths;
    if (left.length === 0) continue;
    if (name === "nydus" && nydusSetUp) {
      out.push({
        id: "takeover-snapshotter",
        severity: "warning",
        status: "fail",
        message: `kata-deploy 3.x set its nydus-snapshotter up here (${left.join("; ")}); the takeover replaces it by ${nydusSetUp}, as kata-deploy 4.x does on an upgrade from 3.x: its unit is stopped and its files and enable links go with kata-deploy's tree, and the handlers mapped to nydus pull through ${nydusSetUp}. Pods running now keep running; images are pulled again for new ones (what nydus-snapshotter kept in /var/lib is left, as kata-deploy leaves it)`,
        hint: "nothing to do; move the pods of handlers mapped to nydus first if they must not pull again",
        rule: "decide",
      });
      continue;
    }
    // Nothing pulls through it: removed with kata-deploy's tree, said, never a refusal.
    const idle = unusable(name);
    if (idle !== null) {
      out.push({
        id: "takeover-snapshotter",
        severity: "warning",
        status: "fail",
        message: `kata-deploy set up the ${name} snapshotter here (${left.join("; ")}), but ${idle}: the takeover removes it with kata-deploy's tree (${name === "nydus" ? "its binaries, its unit and containerd's proxy plugin for it" : "containerd's settings for it"}), and nothing that served pods goes with it`,
        hint: "nothing to do",
        rule: "decide",
      });
      continue;
    }
    out.push({
      id: "takeover-snapshotter",
      severity: "error",
      status: "fail",
      message: `kata-deploy set up the ${name} snapshotter here (${left.join("; ")}), which kata-install ${name === "erofs" ? "sets up only when EXPERIMENTAL_SETUP_SNAPSHOTTER names erofs" : "sets up only when EXPERIMENTAL_SETUP_SNAPSHOTTER names nydus"}: the takeover would remove ${name === "nydus" ? "its binaries, its units and containerd's proxy plugin for it" : "containerd's settings for it"}, and the pods of handlers mapped to it could no longer pull their images`,
      hint:
        name === "erofs"
          ? "give kata-install kata-deploy's EXPERIMENTAL_SETUP_SNAPSHOTTER=erofs (and its EROFS_* variables): it sets erofs up in its own drop-in"
          : "give kata-install kata-deploy's EXPERIMENTAL_SETUP_SNAPSHOTTER=nydus: it sets nydus-for-kata-tee up from kata-deploy's image in the same transaction; or move those pods off and take the node over with --ignore-preflight-errors=takeover-snapshotter",
      rule: "decide",
    });
  }
  return out;
}

function servedCheck(message: string): Check {
  return {
    id: "takeover-shim",
    severity: "warning",
    status: "fail",
    message,
    hint: "pods of a handler that goes can no longer start on this node: keep the shim, or move them first",
    rule: "decide",
  };
}
