// What is installed, as a plan needs it: the artifacts in place, a restart still owed, the files
// an install wrote. Made from the journal (install/journal.ts) and read by render, below both.
import type { PlanAction } from "../changeset.js";

export interface Installed {
  /** The artifacts of the version in place. */
  artifacts: ReadonlySet<string>;
  /** A restart the runtime is still owed (one failed, or a run was cut short around one). */
  pendingRestart: PlanAction | null;
  /** The files an install wrote, by path: whether each is a link. Only these are its to remove. */
  files: ReadonlyMap<string, boolean>;
  /**
   * What an install last wrote into files wholly its own (not a block in the admin's file, not a
   * link), by path: a file that hashes otherwise now was edited on the node, and the plan says
   * that it replaces the edit. Absent: none known.
   */
  written?: ReadonlyMap<string, string>;
}

export const NOTHING_INSTALLED: Installed = { artifacts: new Set(), pendingRestart: null, files: new Map() };
