// What kata-deploy edits in a shim's configuration file itself (rather than in a config.d drop-in):
// 4.x appends ALLOWED_HYPERVISOR_ANNOTATIONS to `enable_annotations` and sets
// `experimental_force_guest_pull` in its copy; 3.x also wrote the agent's proxy, DEBUG's flags
// and kernel parameters into the release's file in place. Only these keys are read back: the
// rest of such a file is the release's (of whatever version kata-deploy installed), which the
// release being installed replaces.
import { isTable, type TomlTable } from "./toml.js";

/** Kernel parameters kata-deploy adds: the agent's proxy, and DEBUG's. */
const DEPLOY_PARAM = /^(agent\.https_proxy=|agent\.no_proxy=|agent\.log=debug$|initcall_debug$)/;

/** kata-deploy's edits found in `table` (a shim's configuration), as dotted keys. */
export function deployEdits(table: TomlTable): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const hypervisors = table.hypervisor;
  for (const [name, section] of Object.entries(isTable(hypervisors) ? hypervisors : {})) {
    if (!isTable(section)) continue;
    const at = `hypervisor.${name}`;
    if (Array.isArray(section.enable_annotations) && section.enable_annotations.length > 0)
      out[`${at}.enable_annotations`] = section.enable_annotations;
    if (typeof section.kernel_params === "string") {
      const params = section.kernel_params.split(/\s+/).filter((p) => DEPLOY_PARAM.test(p));
      if (params.length > 0) out[`${at}.kernel_params`] = params.join(" ");
    }
    if (section.enable_debug === true) out[`${at}.enable_debug`] = true;
  }
  const runtime = isTable(table.runtime) ? table.runtime : {};
  if (runtime.experimental_force_guest_pull === true) out["runtime.experimental_force_guest_pull"] = true;
  if (runtime.enable_debug === true) out["runtime.enable_debug"] = true;
  const agent = isTable(table.agent) && isTable(table.agent.kata) ? table.agent.kata : {};
  if (agent.enable_debug === true) out["agent.kata.enable_debug"] = true;
  if (agent.debug_console_enabled === true) out["agent.kata.debug_console_enabled"] = true;
  return out;
}
