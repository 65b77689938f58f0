/** An error in what the user gave us (a flag, a file): printed as it is, without a stack, exit 1. */
export class UserError extends Error {
  override readonly name = "UserError";
}

/**
 * The host refused an operation (a full disk, a read-only file system, permissions): not a bug, and
 * not the user's input either, but said the same way, in one line naming the path.
 */
export class HostError extends UserError {}

/** What to do about a system error, by its code: the line that says it ends with this. */
const ADVICE: Record<string, string> = {
  ENOSPC: "free space on that file system, then run kata-install again",
  EDQUOT: "free space (a quota is full), then run kata-install again",
  EIO: "the disk failed: check it (dmesg), then run kata-install again",
  EROFS: "that file system is mounted read-only: make it writable, then run kata-install again",
  EACCES: "kata-install must run as root, on files root may change",
  EPERM: "kata-install must run as root, on files root may change (an immutable file: chattr -i)",
  ENOENT:
    "a directory on its way is missing, or it went while kata-install ran: check the path, then run kata-install again",
  EEXIST: "something made it while kata-install ran: run kata-install again",
  ENOTDIR: "a file stands where a directory should be: move it away, then run kata-install again",
  EISDIR: "a directory stands where a file should be: move it away, then run kata-install again",
  ENOTEMPTY: "something was put in it while kata-install ran: run kata-install again",
  ELOOP: "a loop of symbolic links is on the way: fix it, then run kata-install again",
  EBUSY: "it is in use (a mount point?): free it, then run kata-install again",
  EMFILE: "too many files are open: run kata-install again",
};

function isSystemError(error: unknown): error is NodeJS.ErrnoException & { code: string } {
  const code = (error as NodeJS.ErrnoException)?.code;
  return !(error instanceof UserError) && typeof code === "string" && /^E[A-Z]+$/.test(code);
}

/** "no space left on device", from Node's "ENOSPC: no space left on device, write '…'". */
function description(e: NodeJS.ErrnoException): string {
  return e.message.replace(/^E[A-Z]+: /, "").replace(/, \w+( '.*')?$/, "");
}

function advice(code: string): string {
  return ADVICE[code] ?? "run kata-install again (--debug shows where it failed)";
}

/** A system error (ENOSPC, EACCES, ELOOP, …) as one line naming `where`; anything else unchanged. */
export function hostError(where: string, error: unknown): Error {
  if (!isSystemError(error)) return error as Error;
  const code = error.code;
  return new HostError(`${where}: ${description(error)} (${code}): ${advice(code)}`);
}

const VERBS: Record<string, string> = {
  open: "open",
  read: "read",
  write: "write",
  rename: "rename",
  unlink: "remove",
  rmdir: "remove",
  rm: "remove",
  mkdir: "create",
  symlink: "link",
  link: "link",
  stat: "look at",
  lstat: "look at",
  readlink: "read the link",
  scandir: "list",
  fsync: "flush",
  chmod: "change the mode of",
  chown: "change the owner of",
  copyfile: "copy",
};

/**
 * A system error that reached the command line unexplained, as one line: what kata-install could
 * not do, to which file, why, and what to do (never Node's "ENOENT: no such file or directory,
 * rename '…'"). Null for anything that is not a system error.
 */
export function systemErrorLine(error: unknown): string | null {
  if (!isSystemError(error)) return null;
  const code = error.code;
  const verb = error.syscall ? (VERBS[error.syscall] ?? error.syscall) : "do";
  const dest = (error as { dest?: string }).dest;
  const where = error.path ? ` ${error.path}${dest ? ` as ${dest}` : ""}` : "";
  return `cannot ${verb}${where}: ${description(error)} (${code}): ${advice(code)}`;
}
