// The cluster objects kata-install needs: namespace (optional), ServiceAccount and RBAC, the
// DaemonSet that runs `entrypoint install` on every node, and one RuntimeClass per shim whose
// nodeSelector is the label kata-install puts on nodes that have that shim.
import { type Catalog, unknownShim } from "../decide/catalog.js";
import { InputError, type InputIssue } from "../decide/input-error.js";
import { shimLabel } from "../kube/node-labels.js";
import type { Templates } from "../render/templates.js";
import type { Values } from "./values.js";

/** kata-deploy's variables from the values: only those set, so nodes decide the rest themselves. */
function environment(v: Values): Array<{ name: string; value: string }> {
  const text = (key: string) => String(v[key] ?? "").trim();
  const env: Array<[string, string]> = [
    ["SHIMS", (v.shims as string[]).join(" ")],
    ["DEFAULT_SHIM", text("default_shim")],
    ["DEBUG", v.debug ? "true" : ""],
    ["ARTIFACTS", text("artifacts")],
    ["ARTIFACTS_TAG", text("artifacts_tag")],
    ["ALLOWED_HYPERVISOR_ANNOTATIONS", text("allowed_hypervisor_annotations")],
    ["SNAPSHOTTER_HANDLER_MAPPING", text("snapshotter_handler_mapping")],
    ["PULL_TYPE_MAPPING", text("pull_type_mapping")],
    ["AGENT_HTTPS_PROXY", text("agent_https_proxy")],
    ["AGENT_NO_PROXY", text("agent_no_proxy")],
    ["INSTALLATION_PREFIX", text("installation_prefix")],
    ["MULTI_INSTALL_SUFFIX", text("multi_install_suffix")],
  ];
  return env.filter(([, value]) => value !== "").map(([name, value]) => ({ name, value }));
}

export function renderManifests(v: Values, catalog: Catalog, templates: Templates): string {
  const issues: InputIssue[] = [];
  const shim = (key: string, name: string) => {
    if (!catalog.shims.has(name)) issues.push({ file: "values", key, message: unknownShim(name, catalog) });
  };
  for (const name of v.shims as string[]) shim("shims", name);
  if (v.default_shim) shim("default_shim", v.default_shim as string);
  const rc = v.runtime_classes as Values;
  for (const name of rc.shims as string[]) shim("runtime_classes.shims", name);
  for (const name of Object.keys(rc.overhead_by_shim as Values))
    shim("runtime_classes.overhead_by_shim", name);
  if (rc.create_default && !v.default_shim)
    issues.push({ file: "values", key: "runtime_classes.create_default", message: "needs default_shim" });
  if (issues.length > 0) throw new InputError("the manifests' values are invalid", issues);

  const suffix = String(v.multi_install_suffix ?? "").trim();
  const handler = (name: string) => (suffix ? `kata-${name}-${suffix}` : `kata-${name}`);
  const shims = (rc.shims as string[]).length > 0 ? (rc.shims as string[]) : catalog.shimNames();
  const overheadOf = (name: string) => (rc.overhead_by_shim as Values)[name] ?? rc.overhead;
  const classes = rc.create
    ? shims.map((name) => ({
        name: handler(name),
        handler: handler(name),
        overhead: overheadOf(name),
        node_selector: { [shimLabel(name)]: "true" },
      }))
    : [];
  if (rc.create && rc.create_default) {
    const name = v.default_shim as string;
    classes.push({
      name: String(rc.default_name),
      handler: handler(name),
      overhead: overheadOf(name),
      node_selector: { [shimLabel(name)]: "true" },
    });
  }
  return templates
    .render("k8s/kata-install.yaml.njk", { v, env: environment(v), runtime_classes: classes })
    .trimStart();
}
