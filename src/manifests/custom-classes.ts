// The RuntimeClasses of the cluster's custom runtimes (the overrides' [custom_runtimes.<handler>],
// kata-deploy's customRuntimes): one per handler, on its base shim's nodes (a node installs a custom
// runtime only where it installs the base), with the base's overhead unless told not to inherit
// it, and the class the values give (runtime_classes.custom.<handler>, kata-deploy's runtimeClass)
// over it, as kata-deploy's chart merges them.
import type { InputIssue } from "../input-error.js";
import type { RuntimeClassSpec } from "./runtime-class.js";
import type { Values } from "./values.js";

type Table = Record<string, unknown>;

const isTable = (v: unknown): v is Table => v !== null && typeof v === "object" && !Array.isArray(v);

export function customRuntimeClasses(
  v: Values,
  baseSpec: (shim: string, name: string, handler: string) => RuntimeClassSpec,
  file: string,
  issues: InputIssue[],
): RuntimeClassSpec[] {
  const runtimes = ((v.overrides as Table).custom_runtimes ?? {}) as Record<string, Table>;
  const given = (v.runtime_classes as Table).custom as Record<string, Table>;
  for (const handler of Object.keys(given))
    if (!(handler in runtimes))
      issues.push({
        file,
        key: `runtime_classes.custom.${handler}`,
        message: "no such custom runtime: name one of the overrides' [custom_runtimes.<handler>]",
      });
  return Object.entries(runtimes).map(([handler, runtime]) => {
    const base = baseSpec(String(runtime.base), handler, handler);
    const { inherit_base_overhead: inherit = true, ...rc } = given[handler] ?? {};
    if (rc.handler !== undefined && rc.handler !== handler)
      issues.push({
        file,
        key: `runtime_classes.custom.${handler}.handler`,
        message: `expected "${handler}"`,
      });
    const meta = isTable(rc.metadata) ? rc.metadata : {};
    const podFixed = (
      isTable(rc.overhead) && isTable(rc.overhead.podFixed) ? rc.overhead.podFixed : {}
    ) as Record<string, string>;
    const overhead = { ...(inherit ? (base.overhead ?? {}) : {}), ...podFixed };
    const scheduling = isTable(rc.scheduling) ? rc.scheduling : {};
    return {
      ...base,
      name: typeof meta.name === "string" ? meta.name : handler,
      labels: { ...base.labels, ...((meta.labels ?? {}) as Record<string, string>) },
      annotations: { ...base.annotations, ...((meta.annotations ?? {}) as Record<string, string>) },
      overhead: Object.keys(overhead).length > 0 ? overhead : null,
      // Its own selector, and always the base shim's label: the handler is only where the base is.
      nodeSelector: { ...((scheduling.nodeSelector ?? {}) as Record<string, string>), ...base.nodeSelector },
      ...(Array.isArray(scheduling.tolerations) ? { tolerations: scheduling.tolerations } : {}),
    };
  });
}
