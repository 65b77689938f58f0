// A rollback that could not finish (the disk that failed the write fails the rollback too) is said,
// never swallowed: what it left as the cut-short run made it, and the command that finishes it. The
// journal keeps recording all of it, so the next install or uninstall rolls the rest back first.
import { HostError } from "../errors.js";
import type { JournalStore } from "./journal.js";

/** What a rollback had not put back when it stopped. */
export interface Left {
  /** Files, links and absences the cut-short run made, still as it made them. */
  files: string[];
  /** The artifacts' switch still in place: `current` on this version. */
  version: string | null;
  /** A staging directory not removed. */
  staging: string | null;
}

/** recover() stopped: the node is partly rolled back, and the journal still records the rest. */
export class RollbackIncomplete extends HostError {
  constructor(store: JournalStore, failure: unknown, left: Left) {
    // The first few by name (the runtime's come first), the rest counted: the journal has them all.
    const named = left.files.slice(0, 3);
    const more = left.files.length - named.length;
    const items = [
      ...named,
      ...(more > 0 ? [`${more} more file(s) of the run`] : []),
      ...(left.version === null
        ? []
        : [`the artifacts' switch (${store.prefix}/current -> versions/${left.version})`]),
      ...(left.staging === null ? [] : [left.staging]),
    ];
    const root = store.host.root === "/" ? "" : ` --host-root ${store.host.root}`;
    super(
      `the rollback did not finish: ${firstLine(failure)}; ${items.length > 0 ? `left as the run made them: ${items.join(", ")}` : "only the journal's record of the run is left"}. The journal (${store.file}) still records it: once that is fixed, \`kata-install uninstall${root}\` (or \`install\`) rolls the rest back first`,
    );
  }
}

/** A failure, and the rollback after it that did not finish either: both said, in one line. */
export class RollbackFailed extends HostError {}

function firstLine(error: unknown): string {
  return ((error as Error)?.message ?? String(error)).split("\n")[0] ?? "";
}

/**
 * After `cause`: roll back what this run did (`recover`), then throw `cause`. A rollback that stops
 * too is said with it (RollbackFailed), and `after` (the runtime's restart on its old files) is
 * not tried on a node left between two states.
 */
export async function rollBack(
  recover: () => Promise<unknown>,
  cause: unknown,
  after?: () => Promise<void>,
): Promise<never> {
  try {
    await recover();
  } catch (failure) {
    if (!(failure instanceof RollbackIncomplete)) throw failure;
    throw new RollbackFailed(`${firstLine(cause)}; then ${failure.message}`);
  }
  await after?.();
  throw cause;
}
