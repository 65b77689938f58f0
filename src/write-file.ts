// A file kata-install writes for the user (not on the node): whole or not at all.
import fs from "node:fs";
import path from "node:path";
import { hostError } from "./errors.js";

/** A temp file beside it, then a rename; `what` names the option it came from, in the error. */
export function writeFileAtomically(file: string, text: string, what: string): void {
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
  try {
    fs.writeFileSync(temp, text, { mode: 0o644 });
    fs.renameSync(temp, file);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw hostError(`${what} ${file}: cannot write it`, error);
  }
}
