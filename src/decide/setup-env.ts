// kata-deploy's EXPERIMENTAL_SETUP_SNAPSHOTTER and the EROFS_* variables that shape its erofs
// setup, read as its config.rs reads them. erofs is carried out (containerd's built-in snapshotter,
// set up in kata-install's own drop-in); nydus is set up as kata-deploy sets it up (its
// nydus-for-kata-tee: the binaries kata-deploy's image carries, a systemd unit, a proxy plugin in
// kata-install's drop-in); any other name is an error.
// The EROFS_* variables are checked even when erofs is not set up, as kata-deploy checks them.

export const SETUP_VARIABLE = "EXPERIMENTAL_SETUP_SNAPSHOTTER";

export type ErofsMergeMode = "merged" | "unmerged";
export type ErofsSnapshotterMode = "disk" | "memory";

export interface SetupSettings {
  /** The snapshotters to set up (erofs, nydus), and the variable that named them. */
  setupSnapshotters?: { value: string[]; name: string };
  erofsMergeMode?: { value: ErofsMergeMode; name: string };
  erofsSnapshotterMode?: { value: ErofsSnapshotterMode; name: string };
  erofsDmverity?: { value: boolean; name: string };
}

export function parseSetupEnv(
  env: Readonly<Record<string, string | undefined>>,
  bad: (name: string, message: string) => void,
): SetupSettings {
  const out: SetupSettings = {};
  // kata-deploy splits on commas and trims; empty entries name nothing.
  const entries = (env[SETUP_VARIABLE] ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const setUp: string[] = [];
  for (const entry of entries) {
    if (entry === "erofs" || entry === "nydus") {
      if (!setUp.includes(entry)) setUp.push(entry);
    } else
      bad(
        SETUP_VARIABLE,
        `"${printable(entry)}" is no snapshotter kata-deploy sets up (it knows erofs and nydus)`,
      );
  }
  if (setUp.length > 0) out.setupSnapshotters = { value: setUp, name: SETUP_VARIABLE };

  // kata-deploy lower-cases the merge mode, but not the snapshotter mode.
  const merge = env.EROFS_MERGE_MODE?.trim().toLowerCase();
  if (merge === "merged" || merge === "unmerged")
    out.erofsMergeMode = { value: merge, name: "EROFS_MERGE_MODE" };
  else if (merge)
    bad("EROFS_MERGE_MODE", `expected merged (the default) or unmerged, got "${printable(merge)}"`);
  const mode = env.EROFS_SNAPSHOTTER_MODE?.trim();
  if (mode === "disk" || mode === "memory")
    out.erofsSnapshotterMode = { value: mode, name: "EROFS_SNAPSHOTTER_MODE" };
  else if (mode)
    bad("EROFS_SNAPSHOTTER_MODE", `expected disk (the default) or memory, got "${printable(mode)}"`);
  // The chart sets "dmverity" or nothing. kata-deploy takes any other value as off, silently: an
  // EROFS_DMVERITY=true would leave dm-verity off there, so it is refused here rather than guessed.
  const dmverity = env.EROFS_DMVERITY?.trim();
  if (dmverity?.toLowerCase() === "dmverity") out.erofsDmverity = { value: true, name: "EROFS_DMVERITY" };
  else if (dmverity)
    bad(
      "EROFS_DMVERITY",
      `expected "dmverity" (dm-verity on, as kata-deploy's chart sets it) or unset (off), got "${printable(dmverity)}"; kata-deploy would take it as off`,
    );
  return out;
}

/** A value as an error shows it: control characters escaped, so the message stays on one line. */
function printable(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}
