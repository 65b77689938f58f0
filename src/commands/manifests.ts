import { loadCatalog } from "../decide/catalog.js";
import { renderManifests } from "../manifests/manifests.js";
import { loadValues } from "../manifests/values.js";
import { dataPath } from "../package-root.js";
import { loadTemplates } from "../render/templates.js";

export interface ManifestsOptions {
  set?: string[];
  values?: string;
}

export async function runManifests(
  options: ManifestsOptions,
  out: (text: string) => void,
  warn: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<number> {
  const templates = await loadTemplates();
  const values = loadValues(`${templates.dir}/k8s/values.toml`, options.values, options.set ?? []);
  out(renderManifests(values, loadCatalog(dataPath("rules")), templates));
  if (!String(values.artifacts ?? "").trim())
    warn(
      "manifests: no `artifacts` set: each node's install will stop and ask where Kata's artifacts come from; set one, e.g. --set artifacts=registry:HOST/REPO --set artifacts_tag=<kata version>",
    );
  return 0;
}
