// `kata-install report`: many nodes at once, from saved facts or from the cluster's annotations.
import fs from "node:fs";
import path from "node:path";
import { UserError } from "../errors.js";
import { prepare } from "../inputs/prepare.js";
import { indented, renderOverrides, renderPoolOverrides, renderReport } from "../output/report.js";
import { buildReport } from "../report/report.js";
import { fromCluster, fromFactsDir, type Loaded } from "../report/sources.js";
import { writeFileAtomically } from "../write-file.js";

export interface ReportOptions {
  factsDir?: string;
  kubeconfig?: string;
  overrides?: string;
  emitOverrides?: string;
  json?: boolean;
  /** With --kubeconfig: the install whose summaries to read (its MULTI_INSTALL_SUFFIX). */
  installSuffix?: string;
}

export async function runReport(options: ReportOptions, out: (text: string) => void): Promise<number> {
  if (options.factsDir !== undefined && options.kubeconfig !== undefined)
    throw new UserError(
      "report: --facts-dir and --kubeconfig are two sources of nodes: give one (a report compares the nodes of one)",
    );
  if (options.factsDir === undefined && options.kubeconfig === undefined)
    throw new UserError(
      "report: give --facts-dir DIR (saved `facts --json` files) or --kubeconfig FILE (the nodes' annotations)",
    );
  if (options.installSuffix !== undefined && options.kubeconfig === undefined)
    throw new UserError("--install-suffix: only with --kubeconfig (it names whose annotations to read)");
  if (options.overrides !== undefined && options.factsDir === undefined)
    throw new UserError("--overrides: only with --facts-dir (nodes in a cluster decided for themselves)");
  let loaded: Loaded;
  let from: string;
  if (options.factsDir !== undefined) {
    const stats = fs.statSync(options.factsDir, { throwIfNoEntry: false });
    if (stats === undefined) throw new UserError(`--facts-dir ${options.factsDir}: no such directory`);
    if (!stats.isDirectory()) throw new UserError(`--facts-dir ${options.factsDir}: not a directory`);
    // No environment and no node's overrides file: each node as its facts alone decide it.
    const prepared = await prepare({ hostRoot: "/", env: {}, overrides: options.overrides ?? null });
    loaded = await fromFactsDir(options.factsDir, prepared);
    from = `facts in ${options.factsDir}${options.overrides !== undefined ? `, decided with the overrides in ${options.overrides}` : ""}`;
  } else {
    const { kubeApi } = await import("../kube/api.js");
    const api = await kubeApi(options.kubeconfig);
    loaded = await fromCluster(api, options.installSuffix?.trim() || null);
    from = `the annotations of the nodes of ${api.server}`;
  }
  // No node read: no report to make, and the reason is each file's (or that there were none).
  if (loaded.nodes.length === 0)
    throw new UserError(
      loaded.skipped.length === 0
        ? `${from}: no node to report on${options.factsDir !== undefined ? " (no <node>.json file there: save each node's `kata-install facts --json` as one)" : ""}`
        : `${from}: no node's facts could be read:\n${loaded.skipped.map((s) => `  ${s.source}: ${indented(s.reason)}`).join("\n")}`,
    );
  const report = buildReport(loaded.nodes, loaded.skipped, loaded.partial);
  const written: string[] = [];
  if (options.emitOverrides !== undefined) {
    const file = options.emitOverrides;
    // pools/overrides.toml, as the README has it: the directory is made.
    fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    writeFileAtomically(
      file,
      renderOverrides(report.overrides, from, report.nodes.length),
      "--emit-overrides",
    );
    written.push(file);
    // Each pool's beside it: overrides.toml → overrides.<pool>.toml.
    const ext = path.extname(file);
    for (const pool of report.pools) {
      const poolFile = `${file.slice(0, file.length - ext.length)}.${pool.id}${ext || ".toml"}`;
      writeFileAtomically(poolFile, renderPoolOverrides(pool, from), "--emit-overrides");
      written.push(poolFile);
    }
  }
  out(
    options.json
      ? `${JSON.stringify({ ...report, decisions: loaded.decisions, written }, null, 2)}\n`
      : renderReport(report, from, written),
  );
  // Files given to be read that could not be: the report is partial, and a script must know. A
  // node of a cluster without a summary yet is the cluster's news, not an input error.
  if (options.factsDir !== undefined && loaded.skipped.length > 0) {
    process.stderr.write(
      `kata-install: ${loaded.skipped.length} of ${loaded.skipped.length + report.nodes.length} file(s) in ${options.factsDir} could not be read, and are left out (listed in the report)\n`,
    );
    return 1;
  }
  return 0;
}
