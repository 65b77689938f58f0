// The Facts document: every source's value under its key, plus the problems met on the way. It is a
// contract (saved with `facts --json`, replayed with `--facts FILE`): add fields freely (optional
// within a source, so older documents load; a new source is taken as unknown in them, see
// upgrade.ts), rename or remove one only with a schema version bump and a migration.
import * as z from "zod/mini";
import "../schema.js";
import type { Host } from "../host/host.js";
import { DetectContext, type DetectOptions } from "./context.js";
import { hypervisors } from "./hypervisors.js";
import { type KataFacts, kata } from "./kata.js";
import { withDeployHandlers } from "./kata-deploy-handlers.js";
import type { ProbeCache } from "./probe-cache.js";
import { Problem, sortProblems } from "./problems.js";
import { runtime } from "./runtime/index.js";
import type { RuntimeHandler } from "./runtime/schema.js";
import { sourcesShape } from "./source.js";
import { SOURCES, type Source } from "./sources.js";

export const SCHEMA_VERSION = 1;

export const Facts = z.object({
  schemaVersion: z.literal(SCHEMA_VERSION),
  ...sourcesShape(SOURCES),
  problems: z.array(Problem),
});
export type Facts = z.infer<typeof Facts>;

export async function detectFacts(host: Host, options: DetectOptions = {}): Promise<Facts> {
  const ctx = new DetectContext(host, options);
  const run = async (source: Source) => {
    try {
      return [source.key, await source.detect(ctx)] as const;
    } catch (error) {
      // A detector bug is a fact not read, as an unreadable file is: recorded, and the source taken
      // as unknown, so that the rest of the node is still shown (and the problem with it). Failing
      // the whole document instead would hide twelve good sources behind one bad one.
      ctx.problem(source.key, `detector failed: ${(error as Error).stack ?? String(error)}`);
      return [source.key, source.unknown] as const;
    }
  };
  // Host file reads are synchronous (see Host), so sources interleave only at their awaits. The
  // ones that start processes go alone first, until their processes are running; the rest read
  // files while those processes work.
  const early = SOURCES.filter((source) => source.startsProcesses).map(run);
  await new Promise((resolve) => setImmediate(resolve));
  const late = SOURCES.filter((source) => !source.startsProcesses).map(run);
  const values = new Map<string, unknown>(await Promise.all([...early, ...late]));
  // kata-deploy's older layouts are known by the handlers it wrote, which the runtime source reads.
  const runtimeFacts = values.get("runtime") as { handlers?: RuntimeHandler[] } | undefined;
  values.set(
    "kata",
    await withDeployHandlers(ctx, values.get("kata") as KataFacts, runtimeFacts?.handlers ?? []),
  );
  const entries = SOURCES.map((source) => [source.key, values.get(source.key)] as const);
  const document = { schemaVersion: SCHEMA_VERSION, ...Object.fromEntries(entries), problems: ctx.problems };
  // Sorting makes the document stable whatever order the parallel sources finished in.
  sortProblems(document.problems);
  // Still checked: a detector that returns what its schema does not allow is a bug to see at once.
  return Facts.parse(document);
}

/**
 * Ask Kata's installed binaries, the hypervisors and the runtime again (after an install changed
 * the node), through `probes`, so that the next detection finds their answers there. `options`:
 * where the install's detection looked (the environment's), so the same binaries are asked.
 */
export async function probeInstalled(
  host: Host,
  probes: ProbeCache,
  options: DetectOptions = {},
): Promise<void> {
  const ctx = new DetectContext(host, { ...options, probes });
  await Promise.all([kata.detect(ctx), hypervisors.detect(ctx), runtime.detect(ctx)]);
}
