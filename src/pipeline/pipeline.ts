// The stages: detect → read the release → decide → render (→ install). Progress goes to stderr
// (listr2's live view on a terminal, plain lines otherwise), so stdout stays clean for the plan or
// its JSON. The stage functions know nothing of this: each stage calls one and keeps its result.

import { parseArtifactSpecifier } from "../artifacts/open-source.js";
import type { Catalog } from "../decide/catalog.js";
import { decideFor, type Prepared } from "../decide/decide-for.js";
import type { Decision } from "../decide/decision.js";
import { installDir, installDirFromEnv } from "../decide/layout.js";
import { detectOptionsFromEnv } from "../detect/context.js";
import { detectFacts, type Facts } from "../detect/facts.js";
import { loadFacts } from "../detect/load.js";
import { ProbeCache } from "../detect/probe-cache.js";
import type { StrategyName } from "../host/command.js";
import type { Host } from "../host/host.js";
import { factsOnlyHost, openHost } from "../host/open.js";
import { prepare } from "../inputs/prepare.js";
import { installedState, journalFor } from "../install/journal.js";
import { readRelease } from "../release-read.js";
import { render } from "../render/render.js";
import { loadTemplates } from "../render/templates.js";
import { withArtifactSource as finishWithSource } from "./artifact-source.js";
import type { Planned } from "./planned.js";

/** What every deciding command takes from its command line: the stages' input. */
export interface DecideCommandOptions {
  hostRoot: string;
  hostExec?: StrategyName;
  facts?: string;
  overrides?: string;
  shims?: string;
  defaultShim?: string;
  ignorePreflightErrors?: string;
  json?: boolean;
  /** The artifact source whose release is read (else the release installed on the node). */
  artifacts?: string;
  artifactsTag?: string;
}

export type { Planned };

/**
 * The plan, finished: facts, the release, the decision, the rendered changes and, for the node
 * itself, the checks of its artifacts and paths. What `plan` prints and `install` applies, as is.
 */
export async function planPipeline(
  options: DecideCommandOptions,
  env?: Readonly<Record<string, string | undefined>>,
  given: { prepared?: Prepared; host?: Host; probes?: ProbeCache } = {},
): Promise<Planned> {
  // Every input is validated before any stage runs: a bad overrides file stops here, whole; so
  // does a malformed --artifacts (opened only once the facts give the architecture).
  parseArtifactSpecifier(options.artifacts);
  const prepared = given.prepared ?? (await prepare({ ...options, env }));
  const templates = await loadTemplates();
  // Saved facts describe another node: nothing of this machine's is read for them.
  const host =
    given.host ??
    (options.facts !== undefined
      ? await factsOnlyHost()
      : await openHost(options.hostRoot, options.hostExec));
  const ctx: Partial<Planned> = { prepared, templates, host };
  const stages: Stage[] = [
    {
      title: options.facts ? `Load facts from ${options.facts}` : `Detect the node's facts (${host.root})`,
      task: async () => {
        // What kata-install's own binaries answered before is read from its cache, not asked again.
        const probes = given.probes ?? (await ProbeCache.load(host, installDirFromEnv(env ?? {})));
        ctx.facts = options.facts
          ? await loadFacts(options.facts)
          : await detectFacts(host, { probes, ...detectOptionsFromEnv(env ?? process.env) });
      },
    },
    {
      title: "Read the Kata release",
      task: async () => {
        const read = await readRelease(options, ctx.facts as Facts, options.facts ? null : host, env ?? {});
        ctx.release = read.release;
        ctx.source = read.source;
      },
    },
    {
      title: "Decide shims, artifacts and configuration",
      task: async () => {
        const decided = decideFor(prepared, ctx.facts as Facts, ctx.release ?? null);
        ctx.decision = decided.decision;
        ctx.catalog = decided.catalog;
      },
    },
    {
      title: "Render configuration and compare with the node",
      task: async () => {
        const decision = ctx.decision as Decision;
        const installed = await installedState(journalFor(host, installDir(decision)));
        ctx.changeset = await render(
          decision,
          ctx.facts as Facts,
          ctx.catalog as Catalog,
          templates,
          host,
          installed,
        );
      },
    },
  ];
  // A plan of this node (not of saved facts) is finished here, as install applies it: the prefix's
  // and the artifacts' checks, the pulls a new release there means, every path checked.
  if (options.facts === undefined)
    stages.push({
      title: "Check the artifacts and every file the configuration names",
      task: () => finishWithSource(ctx as Planned, journalFor(host, installDirFromEnv(env ?? {}))),
    });
  await runStages(stages);
  return ctx as Planned;
}

interface Stage {
  title: string;
  task: () => Promise<void>;
}

/**
 * Run the stages in order. On a terminal, listr2 draws them live on stderr; elsewhere (CI, the
 * DaemonSet's log) each stage is one plain line on stderr, and listr2 is not even loaded.
 */
async function runStages(stages: Stage[]): Promise<void> {
  if (process.stderr.isTTY) {
    const { Listr, ListrLogger, ProcessOutput } = await import("listr2");
    const logger = new ListrLogger({ processOutput: new ProcessOutput(process.stderr, process.stderr) });
    await new Listr(
      stages.map((s) => ({ title: s.title, task: s.task })),
      { renderer: "default", rendererOptions: { logger }, exitOnError: true, registerSignalListeners: false },
    ).run();
    return;
  }
  for (const stage of stages) {
    const started = Date.now();
    try {
      await stage.task();
    } catch (error) {
      process.stderr.write(`✖ ${stage.title}\n`);
      throw error;
    }
    process.stderr.write(`✔ ${stage.title} (${Date.now() - started} ms)\n`);
  }
}
