/** An error in what the user gave us (a flag, a file): printed as it is, without a stack, exit 1. */
export class UserError extends Error {
  override readonly name = "UserError";
}

/**
 * The host refused an operation (a full disk, a read-only file system, permissions): not a bug, and
 * not the user's input either, but said the same way, in one line naming the path.
 */
export class HostError extends UserError {}

/** A system error (ENOSPC, EACCES, ELOOP, …) as one line naming `where`; anything else unchanged. */
export function hostError(where: string, error: unknown): Error {
  const e = error as NodeJS.ErrnoException;
  if (error instanceof UserError || typeof e?.code !== "string" || !/^E[A-Z]+$/.test(e.code))
    return error as Error;
  const text = e.message.replace(/^E[A-Z]+: /, "").replace(/, \w+( '.*')?$/, "");
  return new HostError(`${where}: ${text} (${e.code})`);
}
