// Each shim's handler settings: the snapshotter it uses on containerd, and how CRI-O pulls its
// images. Precedence, lowest first: the capability table (fc needs devmapper) < kata-deploy's chart
// default (its confidential shims pull in the guest: nydus, runtime_pull_image) < kata-deploy's
// mappings (SNAPSHOTTER_HANDLER_MAPPING, PULL_TYPE_MAPPING) < the overrides file's [handlers.<shim>].
import { containerdVersion, RUNTIME_LAYOUTS } from "../detect/runtime/layouts.js";
import { compareVersions } from "../version.js";
import type { ShimSpec } from "./catalog.js";
import type { Check, Chosen, HandlerSettings } from "./decision.js";
import { usableSnapshotters } from "./engine-checks.js";
import type { DecideInput } from "./input.js";
import { CAPABILITY_TABLE, Ladder, overridesSource, type Source } from "./provenance.js";

/** kata-deploy's own nydus instance (its EXPERIMENTAL_SETUP_SNAPSHOTTER), which its "nydus" names. */
const NYDUS_FOR_KATA_TEE = "nydus-for-kata-tee";

const chartDefault = (shim: string, what: string): Source => ({
  kind: "default",
  name: `kata-deploy's chart default for ${shim} (${what})`,
});

export function handlerSettings(
  input: DecideInput,
  shims: Chosen[],
  warnings: Check[],
  /** kata-deploy's nydus instance when this install sets it up (EXPERIMENTAL_SETUP_SNAPSHOTTER=nydus). */
  nydusSetUp: string | null = null,
): Record<string, HandlerSettings> {
  const { catalog, env, facts, overrides } = input;
  const kind = overrides.runtimeKind ?? facts.runtime.kind;
  const family = kind === null ? null : RUNTIME_LAYOUTS[kind].family;
  const nydus =
    family !== "containerd"
      ? { name: null, why: "" }
      : nydusSetUp !== null
        ? { name: nydusSetUp, why: "" }
        : nydusOnNode(input);
  const unmet: string[] = [];
  const handlers: Record<string, HandlerSettings> = {};
  for (const shim of shims) {
    const spec = catalog.shims.get(shim.name) as ShimSpec;
    const own = overrides.handlers[shim.name];
    const ownSource = (key: string) =>
      overridesSource(overrides, ["handlers", shim.name, key], `handlers.${shim.name}.${key}`);
    const guestPull = catalog.guestPull.has(shim.name);

    const snapshotter = new Ladder<string>();
    if (spec.snapshotter !== "") snapshotter.offer(spec.snapshotter, CAPABILITY_TABLE);
    // The chart's default, unless a mapping is given (it is then the whole mapping, as the chart
    // renders it) or the overrides file decides; on containerd only, and only with a nydus to use.
    if (
      guestPull &&
      family === "containerd" &&
      env.snapshotterMapping === undefined &&
      own?.snapshotter === undefined
    ) {
      if (nydus.name !== null)
        snapshotter.offer(nydus.name, chartDefault(shim.name, 'containerd.snapshotter = "nydus"'));
      else unmet.push(shim.name);
    }
    const fromEnv = env.snapshotters[shim.name];
    // kata-deploy writes its mapping's "nydus" as its own instance's name (containerd.rs): so does
    // kata-install, where it sets that instance up.
    if (fromEnv)
      snapshotter.offer(fromEnv.value === "nydus" && nydusSetUp !== null ? nydusSetUp : fromEnv.value, {
        kind: "env",
        name: fromEnv.name,
      });
    if (own?.snapshotter !== undefined) snapshotter.offer(own.snapshotter, ownSource("snapshotter"));

    const pullType = new Ladder<string>();
    if (guestPull && family === "crio" && env.pullTypeMapping === undefined)
      pullType.offer("guest-pull", chartDefault(shim.name, "crio.guestPull = true"));
    const pull = env.pullTypes[shim.name];
    if (pull) pullType.offer(pull.value, { kind: "env", name: pull.name });
    if (own?.pullType !== undefined) pullType.offer(own.pullType, ownSource("pull_type"));

    handlers[shim.name] = { snapshotter: snapshotter.resolve(), pullType: pullType.resolve() };
  }
  if (unmet.length > 0)
    warnings.push({
      id: "guest-pull-default",
      severity: "warning",
      status: "fail",
      message: `kata-deploy's chart pulls the images of ${unmet.join(", ")} inside the guest through the nydus snapshotter, and ${nydus.why}: ${unmet.length === 1 ? "its handler is" : "their handlers are"} written without one, as ${unmet.length === 1 ? "it runs" : "they run"} on this node today (images pulled on the node; pods that need guest pull will not start until nydus is there)`,
      hint: `set up the nydus snapshotter (a containerd proxy plugin named nydus), then install again; or say how ${unmet.length === 1 ? "it pulls" : "they pull"}: SNAPSHOTTER_HANDLER_MAPPING, EXPERIMENTAL_FORCE_GUEST_PULL (guest pull without nydus), or the overrides file's [handlers.<shim>] snapshotter = ""`,
      rule: "decide",
    });
  return handlers;
}

/**
 * The nydus snapshotter this node has for the chart's default: the admin's "nydus", else
 * kata-deploy's own instance (a node it set up, taken over: its "nydus" meant that one); null with
 * why not. A per-handler snapshotter needs containerd 1.7 or later.
 */
function nydusOnNode(input: DecideInput): { name: string | null; why: string } {
  const { facts, env } = input;
  const version = containerdVersion(facts.runtime);
  if (version !== null && compareVersions(version, [1, 7]) < 0)
    return {
      name: null,
      why: `containerd ${facts.runtime.version} has no snapshotter per runtime handler (1.7 and later have)`,
    };
  const usable = usableSnapshotters(facts);
  const suffix = env.suffix?.value;
  // kata-deploy's instance on a node kata-install manages is kata-install's own (set up by an
  // earlier EXPERIMENTAL_SETUP_SNAPSHOTTER=nydus, in the drop-in this plan rewrites): not asked for
  // now, it goes with this plan, and is no snapshotter to map to.
  const ours = facts.kata.managedBy === "kata-install";
  for (const name of [
    "nydus",
    ...(ours ? [] : [suffix ? `${NYDUS_FOR_KATA_TEE}-${suffix}` : NYDUS_FOR_KATA_TEE]),
  ])
    if (usable.has(name)) return { name, why: "" };
  return { name: null, why: "this node's containerd has no nydus snapshotter configured" };
}
