// The Changeset: every file an install would create, change or delete, with its current and new
// bytes, and the actions around them. A value: it can be shown, saved, and applied as it is.
import { createHash } from "node:crypto";
import { createTwoFilesPatch } from "diff";

export type FileAction = "create" | "modify" | "delete";

export interface FileChange {
  /** Host path ("/etc/containerd/config.toml"). */
  path: string;
  action: FileAction;
  before: string | null;
  after: string | null;
  mode: number;
  reason: string;
  /** Kata's own configuration, or the container runtime's: install writes the runtime's last. */
  role: "kata" | "runtime";
  /** sha256 of the current bytes (null: absent), so a saved plan can tell the host moved on. */
  beforeHash: string | null;
  /**
   * What uninstall gives back, when not the current bytes: the node's own file without another
   * installer's parts (kata-deploy's imports or handlers, taken over), so that uninstall never
   * brings back what would dangle once Kata is gone.
   */
  restore?: string | null;
  /** The admin's file holds this install's marked block: its suffix (MULTI_INSTALL_SUFFIX, or ""). */
  block?: string;
}

export interface PlanAction {
  kind: "pull-artifact" | "restart-runtime" | "reload-runtime" | "take-over";
  target: string;
  reason: string;
}

export interface Changeset {
  changes: FileChange[];
  actions: PlanAction[];
  /** With an artifact source: what this node pulls, against the whole release there (bytes of layers). */
  transfer?: { bytes: number; releaseBytes: number; images: number; releaseImages: number };
}

export function sha256(text: string | null): string | null {
  return text === null ? null : createHash("sha256").update(text).digest("hex");
}

export function change(
  path: string,
  before: string | null,
  after: string | null,
  mode: number,
  reason: string,
  role: FileChange["role"],
): FileChange | null {
  if (before === after) return null;
  const action: FileAction = before === null ? "create" : after === null ? "delete" : "modify";
  return { path, action, before, after, mode, reason, role, beforeHash: sha256(before) };
}

/** A unified diff that `patch -p1` applies inside the host root: a/… and b/…, /dev/null for new or removed files. */
export function unifiedDiff(c: FileChange): string {
  const relative = c.path.replace(/^\/+/, "");
  const from = c.action === "create" ? "/dev/null" : `a/${relative}`;
  const to = c.action === "delete" ? "/dev/null" : `b/${relative}`;
  const patch = createTwoFilesPatch(from, to, c.before ?? "", c.after ?? "", "", "", { context: 3 });
  // The library starts with an "Index"-style rule of "=" signs, which patch does not need.
  return patch.replace(/^=+\n/, "");
}
