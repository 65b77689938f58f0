// A file kata-install writes for the user (not on the node: a saved plan, a pool's overrides): whole
// or not at all, and never through or over a link. The temp file beside it is created with O_EXCL
// and no link followed, under a random name: a link another user planted at a temp name (in a sticky
// /tmp, a group's shared directory) fails the write instead of carrying the bytes to its target.
import fs from "node:fs";
import path from "node:path";
import { hostError, UserError } from "./errors.js";
import { createExclusive, tempName } from "./host/exclusive.js";

/** A temp file beside it, then a rename; `what` names the option it came from, in the error. */
export function writeFileAtomically(file: string, text: string, what: string): void {
  // A link at the name itself: a rename would replace the user's link, a write would go through it.
  const st = fs.lstatSync(file, { throwIfNoEntry: false });
  if (st?.isSymbolicLink())
    throw new UserError(
      `${what} ${file}: it is a symbolic link (to ${fs.readlinkSync(file)}): kata-install writes neither through nor over one; name the file it should be (nothing was written)`,
    );
  if (st !== undefined && !st.isFile())
    throw new UserError(`${what} ${file}: it is not a regular file (nothing was written)`);
  const temp = path.join(path.dirname(file), tempName(`.${path.basename(file)}.`));
  let made = false;
  try {
    const fd = createExclusive(temp, 0o644);
    made = true;
    try {
      fs.writeFileSync(fd, text);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(temp, file);
  } catch (error) {
    // Only the temp this run made: a name someone else planted is not ours to remove.
    if (made) fs.rmSync(temp, { force: true });
    throw hostError(`${what} ${file}: cannot write it`, error);
  }
}
