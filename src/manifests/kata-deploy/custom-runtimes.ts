// kata-deploy's customRuntimes: each a handler of its own (named by the `handler` of its
// runtimeClass) on a base shim's configuration with a drop-in over it. Here, the overrides'
// [custom_runtimes.<handler>] every node reads (base, config, snapshotter, pull_type), and the
// runtimeClass given as runtime_classes.custom.<handler>, over the one kata-install makes.

import { parse } from "yaml";
import { CHART_SHIMS } from "./chart.js";
import { dropInConfig } from "./drop-in.js";
import { type Mapping, setPath, type Table } from "./mapping.js";

export function mapCustomRuntimes(m: Mapping): void {
  const { catalog, ledger } = m;
  for (const [name, runtime] of Object.entries(m.values.customRuntimes?.runtimes ?? {})) {
    const at = ["customRuntimes", "runtimes", name];
    const issue = (key: string, message: string) => m.issue([...at, key], message);
    let rc: Table = {};
    try {
      // Any YAML: what is not a map of its keys is no RuntimeClass, and names no handler below.
      rc = (parse(runtime.runtimeClass ?? "") ?? {}) as Table;
    } catch (error) {
      issue("runtimeClass", `not YAML: ${(error as Error).message.split("\n")[0]}`);
    }
    const handler = typeof rc.handler === "string" ? rc.handler : "";
    const base = runtime.baseConfig ?? "";
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
    const dropIn = runtime.dropIn ?? "";
    if (dropIn.trim() !== "")
      target.config = dropInConfig(m.chart, [...at, "dropIn"], dropIn, base, catalog, m.issues);
    const snapshotter = runtime.containerd?.snapshotter ?? "";
    if (snapshotter !== "") target.snapshotter = snapshotter;
    const pullType = runtime.crio?.pullType ?? "";
    if (pullType === "guest-pull") target.pull_type = pullType;
    else if (pullType !== "") issue("crio", `pullType "${pullType}": expected guest-pull or nothing`);
    setPath(m.overlay, ["overrides", "custom_runtimes", handler], target);
    const { kind: _kind, apiVersion: _version, ...object } = rc;
    setPath(m.overlay, ["runtime_classes", "custom", handler], {
      ...object,
      inherit_base_overhead: runtime.inheritBaseOverhead !== false,
    });
    ledger.carried(at, `overrides [custom_runtimes.${handler}] and its RuntimeClass`);
  }
}
