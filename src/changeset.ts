// The Changeset: every file an install would create, change or delete, with its current and new
// bytes, and the actions around them. A value: it can be shown, saved, and applied as it is.
import { createTwoFilesPatch } from "diff";
import { hash } from "./hash.js";

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
  /** A symbolic link: `before` and `after` are its targets (and the hashes theirs). */
  link?: boolean;
  /**
   * A binary copied byte for byte from kata-install's own file system (nydus-snapshotter's, from
   * kata-deploy's image): `before` and `after` are lines that say what they are, and the hashes are
   * the bytes'. Install writes exactly the bytes of this hash, or nothing.
   */
  blob?: { from: string; sha256: string; size: number };
}

export interface PlanAction {
  kind:
    | "pull-artifact"
    | "restart-runtime"
    | "reload-runtime"
    | "take-over"
    /** A systemd unit kata-install runs (nydus's), restarted on its new files / stopped as it goes. */
    | "restart-service"
    | "stop-service";
  target: string;
  reason: string;
}

export interface Changeset {
  changes: FileChange[];
  actions: PlanAction[];
  /** With an artifact source: what this node pulls, against the whole release there (bytes of layers). */
  transfer?: {
    bytes: number;
    releaseBytes: number;
    images: number;
    releaseImages: number;
    reused?: { images: number; bytes: number; version: string };
  };
}

export function sha256(text: string | null): string | null {
  return text === null ? null : hash(text);
}

export { hash };

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
  // patch makes no links: a link's change is said, as git says it, not diffed.
  if (c.link) return linkChange(c);
  if (c.blob) return blobChange(c);
  const relative = c.path.replace(/^\/+/, "");
  const from = c.action === "create" ? "/dev/null" : `a/${relative}`;
  const to = c.action === "delete" ? "/dev/null" : `b/${relative}`;
  // A whole file added or removed is every line, one hunk: written out, not searched for (the
  // release's configuration files are thousands of lines a plan).
  if (c.action !== "modify")
    return wholeFile(from, to, c.action === "create" ? "+" : "-", c.after ?? c.before ?? "");
  const patch = createTwoFilesPatch(from, to, c.before ?? "", c.after ?? "", "", "", { context: 3 });
  // The library starts with an "Index"-style rule of "=" signs, which patch does not need.
  return patch.replace(/^=+\n/, "");
}

/** The patch of a file created (sign "+") or removed ("-"), as the diff library writes it. */
function wholeFile(from: string, to: string, sign: "+" | "-", text: string): string {
  const header = `--- ${from}\n+++ ${to}\n`;
  if (text === "") return header;
  const lines = text.split("\n");
  const ended = lines.at(-1) === "";
  if (ended) lines.pop();
  const range = sign === "+" ? `-0,0 +1,${lines.length}` : `-1,${lines.length} +0,0`;
  const body = lines.map((l) => `${sign}${l}\n`).join("");
  return `${header}@@ ${range} @@\n${body}${ended ? "" : "\\ No newline at end of file\n"}`;
}

/** A binary's change as git says one it does not diff, with the bytes' hash and where they come from. */
function blobChange(c: FileChange): string {
  const relative = c.path.replace(/^\/+/, "");
  const from = c.action === "create" ? "/dev/null" : `a/${relative}`;
  const to = c.action === "delete" ? "/dev/null" : `b/${relative}`;
  const lines = [`diff --git a/${relative} b/${relative}`];
  if (c.action === "create") lines.push(`new file mode 100${c.mode.toString(8).padStart(3, "0")}`);
  if (c.action === "delete") lines.push("deleted file mode 100755");
  lines.push(`Binary files ${from} and ${to} differ`);
  if (c.beforeHash !== null) lines.push(`# was sha256:${c.beforeHash}`);
  if (c.blob && c.action !== "delete")
    lines.push(`# sha256:${c.blob.sha256}, ${c.blob.size} bytes, copied from ${c.blob.from}`);
  return `${lines.join("\n")}\n`;
}

/**
 * A link's change as git writes one (mode 120000, the target as the content): GNU patch makes and
 * removes links from it, so the printed plan still applies with `patch -p1`.
 */
function linkChange(c: FileChange): string {
  const relative = c.path.replace(/^\/+/, "");
  const noNewline = "\\ No newline at end of file";
  const lines = [`diff --git a/${relative} b/${relative}`];
  if (c.before === null) lines.push("new file mode 120000");
  if (c.after === null) lines.push("deleted file mode 120000");
  lines.push(`--- ${c.before === null ? "/dev/null" : `a/${relative}`}`);
  lines.push(`+++ ${c.after === null ? "/dev/null" : `b/${relative}`}`);
  lines.push(`@@ -${c.before === null ? "0,0" : "1"} +${c.after === null ? "0,0" : "1"} @@`);
  if (c.before !== null) lines.push(`-${c.before}`, noNewline);
  if (c.after !== null) lines.push(`+${c.after}`, noNewline);
  return `${lines.join("\n")}\n`;
}
