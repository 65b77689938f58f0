import { loadCatalog } from "../decide/catalog.js";
import { renderManifests } from "../manifests/manifests.js";
import { loadValues } from "../manifests/values.js";
import { dataPath } from "../package-root.js";
import { loadTemplates } from "../render/templates.js";

export interface ManifestsOptions {
  set?: string[];
  values?: string;
}

export async function runManifests(options: ManifestsOptions, out: (text: string) => void): Promise<number> {
  const templates = await loadTemplates();
  const values = loadValues(`${templates.dir}/k8s/values.toml`, options.values, options.set ?? []);
  out(renderManifests(values, loadCatalog(dataPath("rules")), templates));
  return 0;
}
