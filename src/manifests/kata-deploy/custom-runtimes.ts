// kata-deploy's customRuntimes: each a handler of its own (named by the `handler` of its
// runtimeClass) on a base shim's configuration with a drop-in over it. Here, the overrides'
// [custom_runtimes.<handler>] every node reads (base, config, snapshotter, pull_type), and the
// runtimeClass given as runtime_classes.custom.<handler>, over the one kata-install makes.

import { parse } from "yaml";
import type { Catalog } from "../../decide/catalog.js";
import type { InputIssue } from "../../decide/input-error.js";
import { CHART_SHIMS } from "./chart.js";
import { dropInConfig } from "./drop-in.js";
import type { Ledger } from "./ledger.js";
import type { ChartFile } from "./read.js";

type Table = Record<string, unknown>;

export function mapCustomRuntimes(
  chart: ChartFile,
  catalog: Catalog,
  ledger: Ledger,
  set: (path: string[], value: unknown) => void,
  issues: InputIssue[],
): void {
  const runtimes = ((chart.values.customRuntimes as Table | undefined)?.runtimes ?? {}) as Record<
    string,
    Table
  >;
  for (const [name, runtime] of Object.entries(runtimes)) {
    const at = ["customRuntimes", "runtimes", name];
    const issue = (key: string, message: string) =>
      issues.push({
        file: chart.file,
        line: chart.lineOf([...at, key]),
        key: [...at, key].join("."),
        message,
      });
    let rc: Table = {};
    try {
      rc = (parse(String(runtime.runtimeClass ?? "")) ?? {}) as Table;
    } catch (error) {
      issue("runtimeClass", `not YAML: ${(error as Error).message.split("\n")[0]}`);
    }
    const handler = typeof rc.handler === "string" ? rc.handler : "";
    const base = String(runtime.baseConfig ?? "");
    if (handler === "") {
      ledger.noEffect(at, "its runtimeClass names no handler: the chart leaves it out too");
      continue;
    }
    if (!catalog.shims.has(base) && (!CHART_SHIMS.includes(base) || catalog.unserved.has(base))) {
      ledger.notCarried(
        at,
        `its baseConfig ${base}: kata-install does not serve it: ${catalog.unserved.get(base) ?? "no such shim"}`,
      );
      continue;
    }
    const target: Table = { base };
    const dropIn = String(runtime.dropIn ?? "");
    if (dropIn.trim() !== "")
      target.config = dropInConfig(chart, [...at, "dropIn"], dropIn, base, catalog, issues);
    const snapshotter = String((runtime.containerd as Table | undefined)?.snapshotter ?? "");
    if (snapshotter !== "") target.snapshotter = snapshotter;
    const pullType = String((runtime.crio as Table | undefined)?.pullType ?? "");
    if (pullType === "guest-pull") target.pull_type = pullType;
    else if (pullType !== "") issue("crio", `pullType "${pullType}": expected guest-pull or nothing`);
    set(["overrides", "custom_runtimes", handler], target);
    const { kind: _kind, apiVersion: _version, ...object } = rc;
    set(["runtime_classes", "custom", handler], {
      ...object,
      inherit_base_overhead: runtime.inheritBaseOverhead !== false,
    });
    ledger.carried(at, `overrides [custom_runtimes.${handler}] and its RuntimeClass`);
  }
}
