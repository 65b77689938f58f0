// kata-deploy's CONTAINERD_USER_DROP_IN_SOURCE_FILE (its chart's containerd.userDropIn, mounted
// from a ConfigMap): containerd settings of the admin's own, loaded after Kata's handlers so that
// they may override them. src/inputs/user-drop-in.ts reads it; here is where it cannot go.
import { RUNTIME_LAYOUTS } from "../detect/runtime/layouts.js";
import type { RuntimeKind } from "../detect/runtime/schema.js";
import type { Check } from "./decision.js";

export const USER_DROP_IN_VARIABLE = "CONTAINERD_USER_DROP_IN_SOURCE_FILE";

export interface UserDropIn {
  /** Where it was read (the variable's value). */
  file: string;
  /** Its bytes, as they are copied onto the node. */
  text: string;
  /** The variable that named it. */
  name: string;
}

/**
 * Where the admin's drop-in cannot go on this node, as a check: containerd edited in place (1.x,
 * or an unknown version; microk8s's template) replaces a plugin's whole table with an imported
 * file's, so a drop-in naming the CRI plugin would take every handler away — kata-deploy refuses it
 * there too; CRI-O has no containerd to give it to (one DaemonSet's environment is the cluster's:
 * said, not an error).
 */
export function userDropInChecks(
  dropIn: UserDropIn | null,
  runtime: RuntimeKind | null,
  inPlace: boolean,
): Check[] {
  if (dropIn === null || runtime === null) return [];
  const check = (severity: Check["severity"], message: string, hint: string): Check[] => [
    { id: "containerd-user-drop-in", severity, status: "fail", message, hint, rule: "decide" },
  ];
  const placement = RUNTIME_LAYOUTS[runtime].handlers.kind;
  if (placement === "crio")
    return check(
      "warning",
      `${dropIn.name} names a containerd drop-in (${dropIn.file}), and this node runs CRI-O: ignored here`,
      "CRI-O's own settings go in a crio.conf.d drop-in of the node's",
    );
  if (placement === "template" || (placement === "containerd" && inPlace))
    return check(
      "error",
      `${dropIn.name}: containerd's configuration is edited in place on this node (containerd 1.x, or a version not known), and containerd 1.x replaces a plugin's whole table with an imported file's: ${dropIn.file} cannot be imported safely (kata-deploy refuses it there too)`,
      "upgrade containerd to 2.x, or unset the variable and put those settings into containerd's own configuration",
    );
  return [];
}
