// `kata-install report`: many nodes at once, from saved facts or from the cluster's annotations.
import fs from "node:fs";
import path from "node:path";
import { prepare } from "../decide/prepare.js";
import { UserError } from "../errors.js";
import { renderOverrides, renderReport } from "../output/report.js";
import { loadTemplates } from "../render/templates.js";
import { buildReport } from "../report/report.js";
import { fromCluster, fromFactsDir, type Loaded } from "../report/sources.js";

export interface ReportOptions {
  factsDir?: string;
  kubeconfig?: string;
  overrides?: string;
  emitOverrides?: string;
  json?: boolean;
}

export async function runReport(options: ReportOptions, out: (text: string) => void): Promise<number> {
  if ((options.factsDir === undefined) === (options.kubeconfig === undefined))
    throw new UserError(
      "report: give --facts-dir DIR (saved `facts --json` files) or --kubeconfig FILE (the nodes' annotations)",
    );
  if (options.overrides !== undefined && options.factsDir === undefined)
    throw new UserError("--overrides: only with --facts-dir (nodes in a cluster decided for themselves)");
  let loaded: Loaded;
  let from: string;
  if (options.factsDir !== undefined) {
    if (!fs.statSync(options.factsDir, { throwIfNoEntry: false })?.isDirectory())
      throw new UserError(`--facts-dir ${options.factsDir}: not a directory`);
    // No environment and no node's overrides file: each node as its facts alone decide it.
    const prepared = prepare({ hostRoot: "/", env: {}, overrides: options.overrides ?? null });
    loaded = fromFactsDir(options.factsDir, prepared, await loadTemplates());
    from = `facts in ${options.factsDir}`;
  } else {
    const { kubeApi } = await import("../kube/api.js");
    const api = await kubeApi(options.kubeconfig);
    loaded = await fromCluster(api);
    from = `the annotations of the nodes of ${api.server}`;
  }
  const report = buildReport(loaded.nodes, loaded.skipped);
  if (options.emitOverrides !== undefined)
    atomicWriteFile(options.emitOverrides, renderOverrides(report.overrides, from, report.nodes.length));
  out(
    options.json
      ? `${JSON.stringify({ ...report, decisions: loaded.decisions }, null, 2)}\n`
      : renderReport(report),
  );
  return report.nodes.length === 0 ? 1 : 0;
}

/** Written whole or not at all: a temp file beside it, then a rename. */
function atomicWriteFile(file: string, text: string): void {
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
  try {
    fs.writeFileSync(temp, text, { mode: 0o644 });
    fs.renameSync(temp, file);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw new UserError(
      `--emit-overrides ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
}
