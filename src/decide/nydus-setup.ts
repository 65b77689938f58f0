// EXPERIMENTAL_SETUP_SNAPSHOTTER=nydus, decided: kata-deploy's nydus-for-kata-tee (its
// install_nydus_snapshotter and configure_nydus_snapshotter) set up by kata-install in its own
// journalled transaction: the binaries of kata-deploy's image, its nydus configuration and systemd
// unit, bound to the unit containerd runs as (containerd's, k3s's or rke2's server or agent, k0s's
// worker or controller), and the proxy plugin in kata-install's containerd drop-in — or, where
// containerd's own file is edited in place (containerd 1.x, microk8s's template), in kata-install's
// block there, with the one line of the admin's CRI table it needs (render/nydus-in-place.ts). On
// CRI-O it is not set up, said (a warning); the source must be there to copy (an error).
import { containerdVersion, RUNTIME_LAYOUTS, SYSTEMD_UNIT_DIRS } from "../detect/runtime/layouts.js";
import type { RuntimeKind } from "../detect/runtime/schema.js";
import { compareVersions } from "../version.js";
import type { Check, NydusSetup } from "./decision.js";
import type { DecideInput } from "./input.js";
import { DEFAULT_NYDUS_SOURCE, NYDUS_BINARIES, NYDUS_SOURCE_VARIABLE, NYDUS_TEXTS } from "./nydus-source.js";
import { SETUP_VARIABLE } from "./setup-env.js";
import { setupCheck, snapshotterPlace } from "./snapshotter-place.js";

/** kata-deploy's name for its own nydus instance (its config.rs NYDUS_FOR_KATA_TEE). */
export const NYDUS_FOR_KATA_TEE = "nydus-for-kata-tee";
const ASKED = `${SETUP_VARIABLE}=nydus`;

/** The instance's name with MULTI_INSTALL_SUFFIX, as kata-deploy names it. */
export function nydusName(suffix: string | undefined): string {
  return suffix ? `${NYDUS_FOR_KATA_TEE}-${suffix}` : NYDUS_FOR_KATA_TEE;
}

/**
 * The nydus setup and the checks on it; null when nydus is not asked for, or where it cannot be
 * set up (a check then says why, and stops the install unless ignored).
 */
export function nydusSetup(
  input: DecideInput,
  runtime: RuntimeKind | null,
  inPlace: boolean,
): { setup: NydusSetup | null; checks: Check[] } {
  const { env } = input;
  if (!env.setupSnapshotters?.value.includes("nydus")) return { setup: null, checks: [] };
  if (runtime === null) return { setup: null, checks: [] }; // the container-runtime check says why
  const place = snapshotterPlace(runtime, inPlace);
  if (place === "crio")
    return {
      setup: null,
      checks: [
        setupCheck(
          "warning",
          `${ASKED}: the nydus snapshotter is a containerd proxy plugin, and this node runs CRI-O: ignored here (as kata-deploy ignores it)`,
          "CRI-O pulls a handler's images in the guest with PULL_TYPE_MAPPING's guest-pull; nothing is set up for it",
        ),
      ],
    };
  // The proxy plugin serves only the handlers mapped to it, and containerd picks a snapshotter per
  // handler from 1.7 on: on an older one no handler could use it (its `snapshotter` key ignored).
  const facts = input.facts.runtime;
  const version = containerdVersion({
    kind: runtime,
    version: facts.kind === runtime ? facts.version : null,
  });
  if (version !== null && compareVersions(version, [1, 7]) < 0)
    return {
      setup: null,
      checks: [
        setupCheck(
          "warning",
          `${ASKED}: containerd ${facts.version} has no snapshotter per runtime handler (1.7 and later have), so no handler could pull through nydus: nydus is not set up here`,
          `upgrade containerd to 1.7 or later, or take nydus out of ${SETUP_VARIABLE}`,
        ),
      ],
    };
  const criUnits = unitsToBind(input, runtime);
  if (criUnits === null)
    return {
      setup: null,
      checks: [
        setupCheck(
          "warning",
          `${ASKED}: nydus's unit must start before the unit that runs ${runtime}'s containerd, and no unit file of ${unitsOf(runtime)} is on this node (looked for in ${SYSTEMD_UNIT_DIRS.join(", ")}): nydus is not set up here`,
          `install ${runtime} with its systemd unit (kata-deploy binds nydus to the one that is active), or take nydus out of ${SETUP_VARIABLE}`,
        ),
      ],
    };
  const source = input.nydusSource ?? null;
  if (source === null || !source.ok)
    return {
      setup: null,
      checks: [
        setupCheck(
          "error",
          `${ASKED}: nydus-snapshotter's files are not there to copy: ${source === null ? `${DEFAULT_NYDUS_SOURCE} was not read` : source.problem}`,
          `run kata-install from kata-deploy's image (it carries them in ${DEFAULT_NYDUS_SOURCE}/), or point ${NYDUS_SOURCE_VARIABLE} at a copy of that directory: ${[...NYDUS_BINARIES, ...Object.values(NYDUS_TEXTS)].join(", ")}; or take nydus out of ${SETUP_VARIABLE}`,
        ),
      ],
    };
  return {
    setup: {
      source: { kind: "env", name: SETUP_VARIABLE },
      name: nydusName(env.suffix?.value),
      from: {
        dir: source.dir,
        source:
          source.variable === null
            ? { kind: "default", name: "kata-deploy's image (/opt/kata-artifacts/nydus-snapshotter)" }
            : { kind: "env", name: source.variable },
      },
      binaries: source.files,
      texts: source.texts,
      criUnits,
    },
    checks: [],
  };
}

/**
 * The units nydus's is bound to: those of the runtime's that have a unit file here (kata-deploy binds
 * it to the one active: k3s's server or agent, k0s's worker or controller). A runtime that runs as
 * one systemd unit is bound to it wherever its file is (kata-deploy's default, containerd.service);
 * null: none of several, or a runtime restarted otherwise.
 */
function unitsToBind(input: DecideInput, runtime: RuntimeKind): [string, ...string[]] | null {
  const [first, ...rest] = input.facts.runtime.units ?? [];
  if (first !== undefined) return [first, ...rest];
  const restart = RUNTIME_LAYOUTS[runtime].restart;
  const only = restart.kind === "systemd" && restart.units.length === 1 ? restart.units[0] : undefined;
  return only === undefined ? null : [only.endsWith(".service") ? only : `${only}.service`];
}

/** The systemd units a runtime's containerd runs as, for a message; its kind where none is one. */
function unitsOf(runtime: RuntimeKind): string {
  const restart = RUNTIME_LAYOUTS[runtime].restart;
  return restart.kind === "systemd"
    ? restart.units.map((u) => (u.endsWith(".service") ? u : `${u}.service`)).join(", ")
    : runtime;
}
