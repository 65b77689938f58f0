// EXPERIMENTAL_SETUP_SNAPSHOTTER=erofs, decided: containerd's built-in erofs snapshotter set up as
// kata-deploy sets it up (its configure_erofs_snapshotter), in kata-install's own containerd drop-in
// so that it is journalled and goes with uninstall. Checked as kata-deploy checks it before it
// writes anything: containerd 2.2 or later, the kernel's erofs (and dm-verity) support, the node's
// mkfs.erofs and its options, no Go runtime shim on merged erofs; refused where containerd's own
// file is edited in place, and ignored (said) on CRI-O.
import { KATA_MODULES } from "../detect/kernel.js";
import { containerdVersion, RUNTIME_LAYOUTS } from "../detect/runtime/layouts.js";
import { MKFS_EROFS_OPTIONS } from "../detect/runtime/mkfs-erofs.js";
import type { RuntimeKind } from "../detect/runtime/schema.js";
import { compareVersions } from "../version.js";
import type { Check, CustomRuntime, ErofsSetup, HandlerSettings } from "./decision.js";
import type { DecideInput } from "./input.js";
import { type Decided, describeSource, Ladder } from "./provenance.js";
import { type ErofsMergeMode, type ErofsSnapshotterMode, SETUP_VARIABLE } from "./setup-env.js";
import { setupCheck, snapshotterPlace } from "./snapshotter-place.js";

/** The erofs-utils that has the options kata-deploy's mkfs_options pass (kata-deploy's MIN_EROFS_UTILS_VERSION). */
const EROFS_UTILS = "1.8.2";
/** kata-deploy's check_containerd_erofs_version_support: 2.2.0 or newer. */
export const EROFS_CONTAINERD = [2, 2];
const ASKED = `${SETUP_VARIABLE}=erofs`;

const erofsCheck = (id: string, severity: Check["severity"], message: string, hint: string): Check =>
  setupCheck(severity, message, hint, id);

/**
 * The erofs setup and the checks on it. The setup is null when erofs is not asked for, or where
 * kata-install's drop-in cannot carry it; with a check that fails it is still decided (the plan
 * shows it), and the check stops the install unless ignored.
 */
export function erofsSetup(
  input: DecideInput,
  runtime: RuntimeKind | null,
  inPlace: boolean,
): { setup: ErofsSetup | null; checks: Check[] } {
  const { env, facts } = input;
  const tuning = [env.erofsMergeMode, env.erofsSnapshotterMode, env.erofsDmverity].filter(
    (v) => v !== undefined,
  );
  if (!env.setupSnapshotters?.value.includes("erofs")) {
    // kata-deploy reads them only when it sets erofs up: set alone, they change nothing. Said.
    if (tuning.length === 0) return { setup: null, checks: [] };
    const names = tuning.map((v) => v.name).join(", ");
    return {
      setup: null,
      checks: [
        erofsCheck(
          "snapshotter-setup",
          "warning",
          `${names} ${tuning.length === 1 ? "is" : "are"} set, but ${SETUP_VARIABLE} does not name erofs: no effect`,
          `set ${ASKED} to set the erofs snapshotter up, or unset ${names}`,
        ),
      ],
    };
  }
  if (runtime === null) return { setup: null, checks: [] }; // the container-runtime check says why
  const place = snapshotterPlace(runtime, inPlace);
  // One DaemonSet's environment is the whole cluster's: on CRI-O it has nothing to act on.
  if (place === "crio")
    return {
      setup: null,
      checks: [
        erofsCheck(
          "snapshotter-setup",
          "warning",
          `${ASKED}: the erofs snapshotter is containerd's, and this node runs CRI-O: ignored here (as kata-deploy ignores it)`,
          "CRI-O keeps its images in containers/storage; nothing is set up for it",
        ),
      ],
    };
  // The version read is the runtime found's: one the overrides file names instead says nothing.
  const found = facts.runtime.kind === runtime;
  const version = found ? facts.runtime.version : null;
  const parts = found ? containerdVersion(facts.runtime) : null;
  // containerd's own file is not kata-install's to add plugin settings to: only its drop-in is
  // removed whole by uninstall.
  const edited = place === "template" || place === "in-place";
  const checks: Check[] = [];
  if (parts !== null && compareVersions(parts, EROFS_CONTAINERD) < 0)
    checks.push(
      erofsCheck(
        "snapshotter-setup",
        "error",
        `${ASKED}: containerd ${version} is older than 2.2, which the erofs snapshotter settings need (kata-deploy requires 2.2.0 or newer too)${edited ? ": erofs is not set up" : ""}`,
        `upgrade containerd to 2.2 or later, or take erofs out of ${SETUP_VARIABLE}`,
      ),
    );
  else if (edited)
    checks.push(
      erofsCheck(
        "snapshotter-setup",
        "error",
        `${ASKED}: containerd's configuration is edited in place on this node (${place === "template" ? "microk8s's template" : "containerd's version is not known"}), and kata-install sets erofs up only in a drop-in of its own: erofs is not set up`,
        place === "template"
          ? `set the erofs snapshotter up in microk8s's containerd template yourself and map handlers to it with SNAPSHOTTER_HANDLER_MAPPING, or take erofs out of ${SETUP_VARIABLE}`
          : `make containerd --version answer (erofs needs containerd 2.2 or later), or take erofs out of ${SETUP_VARIABLE}`,
      ),
    );
  else if (parts === null)
    checks.push(
      erofsCheck(
        "snapshotter-setup",
        "error",
        `${ASKED}: ${RUNTIME_LAYOUTS[runtime].versionOf === "family" ? "containerd's version is not known" : `${runtime}${version === null ? "" : ` ${version}`} does not say which containerd it embeds`}, and the erofs snapshotter settings need containerd 2.2 or later`,
        `if its containerd is 2.2 or later, install with --ignore-preflight-errors=snapshotter-setup; else take erofs out of ${SETUP_VARIABLE}`,
      ),
    );
  if (edited) return { setup: null, checks };
  const setup = decideSetup(input);
  checks.push(...kernelChecks(input, setup.dmverity.value), ...mkfsChecks(input), ...fsverityChecks(input));
  return { setup, checks };
}

function decideSetup(input: DecideInput): ErofsSetup {
  const { env } = input;
  const merge = new Ladder<ErofsMergeMode>();
  merge.offer("merged", { kind: "default", name: "kata-deploy's default" });
  if (env.erofsMergeMode)
    merge.offer(env.erofsMergeMode.value, { kind: "env", name: env.erofsMergeMode.name });
  const mode = new Ladder<ErofsSnapshotterMode>();
  mode.offer("disk", { kind: "default", name: "kata-deploy's default" });
  if (env.erofsSnapshotterMode)
    mode.offer(env.erofsSnapshotterMode.value, { kind: "env", name: env.erofsSnapshotterMode.name });
  const dmverity = new Ladder<boolean>();
  dmverity.offer(false, { kind: "default", name: "kata-deploy's default" });
  if (env.erofsDmverity) dmverity.offer(true, { kind: "env", name: env.erofsDmverity.name });
  // kata-deploy always turns fs-verity on; here only where it is known to work (fsverityChecks).
  const fsverity = new Ladder<boolean>();
  const seen = input.facts.runtime.fsVerity;
  fsverity.offer(seen?.supported === true, {
    kind: "default",
    name: seen === undefined ? "runtime.fsVerity (not looked at)" : `runtime.fsVerity: ${seen.evidence}`,
  });
  return {
    source: { kind: "env", name: SETUP_VARIABLE },
    mergeMode: merge.resolve() as Decided<ErofsMergeMode>,
    snapshotterMode: mode.resolve() as Decided<ErofsSnapshotterMode>,
    dmverity: dmverity.resolve() as Decided<boolean>,
    fsverity: fsverity.resolve() as Decided<boolean>,
  };
}

/**
 * fs-verity is turned off, with a warning, where it is not known to work under containerd's root:
 * containerd's erofs snapshotter enables it on a file there at start, and where that fails the
 * snapshotter fails and takes the CRI plugin with it (every pod of the node, not only Kata's).
 * Off rather than refused: erofs was asked for, fs-verity is kata-deploy's extra on it, and the
 * layers stay immutable (set_immutable) and, with EROFS_DMVERITY, verified by dm-verity.
 */
function fsverityChecks(input: DecideInput): Check[] {
  const seen = input.facts.runtime.fsVerity;
  if (seen?.supported === true) return [];
  return [
    erofsCheck(
      "erofs-fsverity",
      "warning",
      `${ASKED}: fs-verity is turned off for the erofs snapshotter (enable_fsverity = false, where kata-deploy sets true): ${seen === undefined ? "whether it works under containerd's root was not looked at" : seen.supported === false ? seen.evidence : `not known to work: ${seen.evidence}`}; with it on, containerd's erofs snapshotter would fail to start and take the CRI plugin with it`,
      `for fs-verity, give containerd's root a file system that has it (a kernel with CONFIG_FS_VERITY; ext4: tune2fs -O verity on the unmounted device; btrfs has it), then install again`,
    ),
  ];
}

/**
 * The kernel must mount erofs (and, with dm-verity, have device-mapper's verity target), as
 * kata-deploy requires. A module not loaded but there is enough: the kernel loads a file system's
 * module at its first mount, and a device-mapper target's when a table names it.
 */
function kernelChecks(input: DecideInput, dmverity: boolean): Check[] {
  const { modules } = input.facts.kernel;
  const needed = ["erofs", ...(dmverity ? ["dm_mod", "dm_verity"] : [])];
  const missing = needed.filter((name) => modules[name]?.state === "missing");
  if (missing.length === 0) return [];
  return [
    erofsCheck(
      "erofs-kernel",
      "error",
      `${ASKED}${dmverity ? " with EROFS_DMVERITY" : ""}: the kernel has no ${missing
        .map((name) => `${name} (${modules[name]?.via})`)
        .join(", ")}`,
      `load or build in ${missing.map((name) => KATA_MODULES[name]).join(", ")}, and make it persistent across reboots`,
    ),
  ];
}

/**
 * containerd's erofs differ runs the node's mkfs.erofs with kata-deploy's mkfs_options for every
 * layer: without it, or without the options (erofs-utils before 1.8.2), every pull fails. Checked
 * as kata-deploy checks it, by the options the program takes. Facts read without looking (from a
 * file, or made without the variable) say nothing.
 */
function mkfsChecks(input: DecideInput): Check[] {
  const mkfs = input.facts.runtime.mkfsErofs;
  if (mkfs === undefined) return [];
  const hint = `install erofs-utils ${EROFS_UTILS} or later on the node`;
  if (mkfs === null)
    return [
      erofsCheck(
        "erofs-utils",
        "error",
        `${ASKED}: the node has no mkfs.erofs (erofs-utils), which containerd's erofs differ runs for every layer`,
        hint,
      ),
    ];
  if (mkfs.options === null)
    return [
      erofsCheck(
        "erofs-utils",
        "warning",
        `${ASKED}: ${mkfs.path} did not answer --help: whether it takes ${MKFS_EROFS_OPTIONS.map((o) => `--${o}`).join(" and ")} (erofs-utils ${EROFS_UTILS}) is not known`,
        hint,
      ),
    ];
  const missing = MKFS_EROFS_OPTIONS.filter((o) => !mkfs.options?.includes(o));
  if (missing.length === 0) return [];
  return [
    erofsCheck(
      "erofs-utils",
      "error",
      `${ASKED}: ${mkfs.path} does not take ${missing.map((o) => `--${o}`).join(", ")}, which the erofs differ's mkfs_options pass it (erofs-utils ${EROFS_UTILS} has them)`,
      hint,
    ),
  ];
}

/**
 * Merged erofs (fsmeta.erofs) is read by runtime-rs only: a Go runtime shim mapped to erofs would
 * fail at its first pod. kata-deploy refuses it; so does kata-install, for every handler it writes
 * (a shim's, a custom runtime's), by where its mapping came from.
 */
export function erofsMergeChecks(
  input: DecideInput,
  setup: ErofsSetup | null,
  handlers: Record<string, HandlerSettings>,
  customRuntimes: CustomRuntime[],
): Check[] {
  if (setup === null || setup.mergeMode.value !== "merged") return [];
  const go = (shim: string) => input.catalog.shims.get(shim)?.runtime === "go";
  const onErofs = [
    ...Object.entries(handlers).map(([shim, s]) => ({ name: shim, base: shim, to: s.snapshotter })),
    ...customRuntimes.map((c) => ({ name: c.handler, base: c.base, to: c.settings.snapshotter })),
  ].filter((h) => h.to?.value === "erofs" && go(h.base));
  if (onErofs.length === 0) return [];
  const merged =
    setup.mergeMode.source.kind === "env"
      ? `${setup.mergeMode.source.name}=merged`
      : "merged erofs (kata-deploy's default)";
  return [
    erofsCheck(
      "erofs-merge-mode",
      "error",
      `${merged}: the Go runtime does not read merged erofs (one fsmeta.erofs for all of an image's layers), and ${onErofs
        .map((h) => `${h.name} (${describeSource(h.to?.source as Decided<string>["source"])})`)
        .join(
          ", ",
        )} ${onErofs.length === 1 ? "is a Go runtime handler" : "are Go runtime handlers"} mapped to erofs`,
      "set EROFS_MERGE_MODE=unmerged (one layer.erofs per layer, which the Go runtime reads), map them to another snapshotter, or use runtime-rs shims",
    ),
  ];
}
