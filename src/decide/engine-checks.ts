// The checks the engine raises itself (beside the rules'): kata-deploy's mappings that name shims
// not asked for, snapshotters a handler cannot use here; and the checks an admin chose to ignore.

import { itemAt } from "../at.js";
import { containerdVersion, RUNTIME_LAYOUTS } from "../detect/runtime/layouts.js";
import { compareVersions } from "../version.js";
import type { Check } from "./decision.js";
import type { DecideInput, Flags } from "./input.js";
import type { Overrides } from "./overrides.js";
import { RELEASE_CHECKS } from "./release-checks.js";

/** Checks the engine itself raises, beside the rules' ones (ids --ignore-preflight-errors accepts). */
export const ENGINE_CHECKS = [
  "shims",
  "default-shim",
  "override-contradicts-facts",
  "env-mapping",
  "handler-snapshotter",
  "custom-runtime",
  "takeover-snapshotter",
  "containerd-user-drop-in",
  "guest-pull-default",
  "snapshotter-setup",
  "erofs-kernel",
  "erofs-utils",
  "erofs-merge-mode",
  "erofs-fsverity",
  "hypervisor-device",
  ...RELEASE_CHECKS,
] as const;

/** Snapshotters containerd always has; any other must be configured on the node to be used. */
const BUILTIN_SNAPSHOTTERS = ["overlayfs", "native"];
/** Built in from a containerd release on: erofs from 2.2 (kata-deploy requires 2.2 for it too). */
const BUILTIN_FROM: Array<[string, number[]]> = [["erofs", [2, 2]]];

/**
 * The snapshotters a handler may be mapped to on this node: containerd's built-in ones (for its
 * version, when that is known: k3s and rke2 report their own), those its configuration sets up,
 * and those kata-install sets up in its drop-in (`setUp`: EXPERIMENTAL_SETUP_SNAPSHOTTER's erofs).
 */
export function usableSnapshotters(facts: DecideInput["facts"], setUp: readonly string[] = []): Set<string> {
  const version = containerdVersion(facts.runtime);
  return new Set([
    ...BUILTIN_SNAPSHOTTERS,
    ...BUILTIN_FROM.filter(([, from]) => version !== null && compareVersions(version, from) >= 0).map(
      ([name]) => name,
    ),
    ...facts.runtime.snapshotters.map((s) => s.name),
    ...setUp,
  ]);
}

/**
 * SNAPSHOTTER_HANDLER_MAPPING takes effect only where containerd can pick a snapshotter per handler
 * (1.7 and later) and only with a snapshotter the node has: otherwise every pod of that handler
 * fails at image unpack, long after the install called itself a success.
 */
export function snapshotterChecks(
  input: DecideInput,
  selected: Set<string>,
  setUp: readonly string[] = [],
  /** kata-deploy's nydus instance set up by this install: what its mapping's "nydus" names (handler-settings.ts). */
  nydus: string | null = null,
): Check[] {
  const { env, facts, overrides } = input;
  // [who, { value, name }]: kata-deploy's mapping for a shim, or a custom runtime's own snapshotter.
  type Mapped = [string, { value: string; name: string }];
  const mapped: Mapped[] = [
    ...Object.entries(env.snapshotters)
      .filter(([shim]) => selected.has(shim))
      .map(
        ([shim, to]): Mapped => [shim, to.value === "nydus" && nydus !== null ? { ...to, value: nydus } : to],
      ),
    ...Object.entries(overrides.handlers).flatMap(([shim, { snapshotter }]): Mapped[] =>
      selected.has(shim) && snapshotter
        ? [[shim, { value: snapshotter, name: `handlers.${shim}.snapshotter` }]]
        : [],
    ),
    ...Object.entries(overrides.customRuntimes).flatMap(([handler, { snapshotter, base }]): Mapped[] =>
      snapshotter !== undefined && selected.has(base)
        ? [
            [
              handler,
              {
                value: snapshotter === "nydus" && nydus !== null ? nydus : snapshotter,
                name: `custom_runtimes.${handler}.snapshotter`,
              },
            ],
          ]
        : [],
    ),
  ];
  if (mapped.length === 0) return [];
  const variable = itemAt(mapped, 0, "the first mapping")[1].name;
  const kind = facts.runtime.kind;
  const problem = (message: string, hint: string): Check[] => [
    { id: "handler-snapshotter", severity: "error", status: "fail", message, hint, rule: "decide" },
  ];
  // A DaemonSet's environment is the whole cluster's: on a CRI-O node the mapping has nothing to
  // act on (kata-deploy ignores it there too), and that is said, not an error.
  if (kind === null || RUNTIME_LAYOUTS[kind].family === "crio")
    return [
      {
        id: "handler-snapshotter",
        severity: "warning",
        status: "fail",
        message: `${variable} ${mapped.length > 1 ? "and others map" : "maps"} handlers to containerd snapshotters, which this node's runtime (${kind ?? "unknown"}) does not have: ignored here`,
        hint: "PULL_TYPE_MAPPING chooses how CRI-O pulls a handler's images",
        rule: "decide",
      },
    ];
  const version = containerdVersion(facts.runtime);
  if (version !== null && compareVersions(version, [1, 7]) < 0)
    return problem(
      `${variable}: containerd ${facts.runtime.version} has no snapshotter per runtime handler (containerd 1.7 and later have)`,
      "upgrade containerd to 1.7 or later, or unset the mapping",
    );
  const known = usableSnapshotters(facts, setUp);
  const unconfigured = mapped.filter(([, to]) => !known.has(to.value));
  // A mapping the node's handler has already (kata-deploy's, taken over) is kept as the node has it
  // (its pods fail at unpack as they do now), said: never a refusal that only an ignore flag passes.
  const asOnNode = ([shim, to]: Mapped) =>
    facts.runtime.handlers.some((h) => h.name.startsWith(`kata-${shim}`) && h.snapshotter === to.value);
  const kept = unconfigured.filter(asOnNode);
  const missing = unconfigured.filter((m) => !asOnNode(m));
  const keptCheck: Check[] =
    kept.length === 0
      ? []
      : [
          {
            id: "handler-snapshotter",
            severity: "warning",
            status: "fail",
            message: `${kept.map(([shim, to]) => `${to.name} maps ${shim} to the snapshotter "${to.value}"`).join("; ")}, which this node does not configure; the node's handler has that snapshotter already: kept as the node has it (pods of that handler fail at image unpack, as they do now)`,
            hint: `configure it in containerd (configured here: ${[...known].sort().join(", ")}), or map the handler to one of those`,
            rule: "decide",
          },
        ];
  if (missing.length === 0) return keptCheck;
  return [
    ...keptCheck,
    ...problem(
      missing
        .map(
          ([shim, to]) =>
            `${to.name} maps ${shim} to the snapshotter "${to.value}", which is not configured on this node`,
        )
        .join("; "),
      `configure it in containerd (configured here: ${[...known].sort().join(", ")}), or map the handler to one of those`,
    ),
  ];
}

/**
 * kata-deploy's per-shim variables may name only the shims asked for (--shims, the overrides
 * file's shims, or SHIMS): a mapping for another is a mistake in the DaemonSet's environment, which
 * kata-deploy refuses too, named by its variable. Without a list asked for, each node's own set
 * differs by what it can run, and a mapping for a shim one node drops is no mistake.
 */
export function mappingChecks(input: DecideInput): Check[] {
  const { env, flags, overrides } = input;
  const asked = flags.shims ?? overrides.shims ?? env.shims?.value;
  if (asked === undefined) return [];
  const named: Array<[string, string]> = [];
  for (const table of [
    env.snapshotters,
    env.pullTypes,
    env.forceGuestPull,
    env.allowedAnnotations,
    env.agentHttpsProxy,
    env.agentNoProxy,
  ])
    for (const [shim, from] of Object.entries(table)) if (shim !== "all") named.push([from.name, shim]);
  const stray = named.filter(([, shim]) => !asked.includes(shim));
  if (stray.length === 0) return [];
  return [
    {
      id: "env-mapping",
      severity: "error",
      status: "fail",
      message: stray
        .map(([variable, shim]) => `${variable} names ${shim}, which is not among the shims to install`)
        .join("; "),
      hint: "name only the shims asked for, or add that shim to them (SHIMS)",
      rule: "decide",
    },
  ];
}

export function applyIgnores(checks: Check[], overrides: Overrides, flags: Flags): Check[] {
  const ignored = new Set(
    [...overrides.ignore, ...flags.ignorePreflightErrors].map((id) => id.toLowerCase()),
  );
  const all = ignored.has("all");
  // Errors only, as kubeadm's: a warning stops nothing, and one ignored would go unsaid.
  return checks.map((check) =>
    check.status === "fail" && check.severity === "error" && (all || ignored.has(check.id))
      ? { ...check, status: "ignored", severity: "warning" }
      : check,
  );
}
