// The stages as listr2 tasks: detect → decide → render (→ install, later). Progress goes to stderr
// (a live view on a terminal, plain lines otherwise), so stdout stays clean for the plan or JSON.
// The stage functions know nothing of this: each task calls one and keeps its result.
import { Listr, ListrLogger, ProcessOutput } from "listr2";
import type { DecideCommandOptions } from "./commands/decide-run.js";
import { openHost } from "./commands/facts.js";
import type { Decision } from "./decide/decision.js";
import { decideFor, type Prepared, prepare } from "./decide/prepare.js";
import { detectFacts, type Facts } from "./detect/facts.js";
import { loadFacts } from "./detect/load.js";
import type { Host } from "./host/host.js";
import type { Changeset } from "./render/changeset.js";
import { render } from "./render/render.js";
import { loadTemplates, type Templates } from "./render/templates.js";

export interface Planned {
  prepared: Prepared;
  templates: Templates;
  host: Host;
  facts: Facts;
  decision: Decision;
  changeset: Changeset;
}

export async function planPipeline(options: DecideCommandOptions, env?: Readonly<Record<string, string | undefined>>): Promise<Planned> {
  // Every input is validated before any stage runs: a bad overrides file stops here, whole.
  const prepared = prepare({ ...options, env });
  const templates = loadTemplates();
  const host = await openHost(options.hostRoot, options.hostExec);
  const ctx: Partial<Planned> = { prepared, templates, host };
  const tasks = new Listr<Partial<Planned>>(
    [
      {
        title: options.facts ? `Load facts from ${options.facts}` : `Detect the node's facts (${host.root})`,
        task: async (c) => {
          c.facts = options.facts ? await loadFacts(options.facts) : await detectFacts(host);
        },
      },
      {
        title: "Decide shims, artifacts and configuration",
        task: (c) => {
          c.decision = decideFor(prepared, c.facts as Facts).decision;
        },
      },
      {
        title: "Render configuration and compare with the node",
        task: async (c) => {
          c.changeset = await render(c.decision as Decision, c.facts as Facts, prepared.catalog, templates, host);
        },
      },
    ],
    {
      ctx,
      renderer: "default",
      fallbackRenderer: "simple",
      fallbackRendererCondition: !process.stderr.isTTY,
      rendererOptions: { logger: toStderr() },
      fallbackRendererOptions: { logger: toStderr() },
      exitOnError: true,
      registerSignalListeners: false,
    },
  );
  await tasks.run();
  return ctx as Planned;
}

function toStderr(): ListrLogger {
  return new ListrLogger({ processOutput: new ProcessOutput(process.stderr, process.stderr) });
}
