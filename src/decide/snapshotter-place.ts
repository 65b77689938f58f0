// What the two snapshotters EXPERIMENTAL_SETUP_SNAPSHOTTER sets up (erofs, nydus) share: where on a
// node kata-install can set one up, and the shape of the checks that say where it cannot. Neither
// on CRI-O. erofs goes only into a containerd drop-in of kata-install's own (it needs containerd
// 2.2, which always has one); nydus also where containerd's own file is edited in place.
import { RUNTIME_LAYOUTS } from "../detect/runtime/layouts.js";
import type { RuntimeKind } from "../detect/runtime/schema.js";
import type { Check } from "./decision.js";

export type SnapshotterPlace =
  /** kata-install's own containerd drop-in carries it. */
  | "drop-in"
  /** CRI-O: a containerd snapshotter has nothing to act on (kata-deploy ignores it there). */
  | "crio"
  /** microk8s: its containerd template, edited in place. */
  | "template"
  /** containerd's own file, edited in place (1.x, or a version not known). */
  | "in-place";

export function snapshotterPlace(runtime: RuntimeKind, inPlace: boolean): SnapshotterPlace {
  const placement = RUNTIME_LAYOUTS[runtime].handlers.kind;
  if (placement === "crio") return "crio";
  if (placement === "template") return "template";
  return inPlace ? "in-place" : "drop-in";
}

/** A failed check of the setup, from the decide stage. */
export function setupCheck(
  severity: Check["severity"],
  message: string,
  hint: string,
  id = "snapshotter-setup",
): Check {
  return { id, severity, status: "fail", message, hint, rule: "decide" };
}
