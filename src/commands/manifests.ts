import { parseAllDocuments } from "yaml";
import { UserError } from "../errors.js";
import { formatIssue } from "../input-error.js";
import { loadCatalog } from "../inputs/catalog.js";
import type { Entry } from "../manifests/kata-deploy/ledger.js";
import { renderManifests } from "../manifests/manifests.js";
import { loadValues } from "../manifests/values.js";
import { dataPath } from "../package-root.js";
import { loadTemplates } from "../render/templates.js";

export interface ManifestsOptions {
  set?: string[];
  values?: string;
  /** Print what became of each key of a kata-deploy values file, instead of the objects. */
  explainValues?: boolean;
  /** yaml (the default: documents for kubectl apply -f) or json (one List, as kubectl get -o json). */
  output?: string;
}

/** The objects as one JSON List: the same objects the YAML holds, parsed back from it. */
function asJson(yaml: string): string {
  const items = parseAllDocuments(yaml).map((doc) => doc.toJS());
  return `${JSON.stringify({ apiVersion: "v1", kind: "List", items }, null, 2)}\n`;
}

/** One line per key: where it is, what became of it. */
function explain(entries: Entry[], file: string): string {
  return entries.map((e) => `${file}:${e.line ?? "-"}\t${e.key}\t${e.status}\t${e.detail}\n`).join("");
}

export async function runManifests(
  options: ManifestsOptions,
  out: (text: string) => void,
  warn: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<number> {
  if (options.output !== undefined && !["yaml", "json"].includes(options.output))
    throw new UserError(`-o ${options.output}: expected yaml or json`);
  const templates = await loadTemplates();
  const catalog = loadCatalog(dataPath("rules"));
  const loaded = loadValues(`${templates.dir}/k8s/values.toml`, options.values, options.set ?? [], catalog);
  const file = options.values ?? "values";
  const { yaml, notes } = renderManifests(loaded.values, catalog, templates, file, loaded.origins);
  if (options.explainValues) {
    if (loaded.entries === null)
      throw new UserError("--explain-values: give a kata-deploy values file (-f values.yaml)");
    out(explain(loaded.entries, file));
    return 0;
  }
  out(options.output === "json" ? asJson(yaml) : yaml);
  if (loaded.entries !== null) {
    const count = (status: Entry["status"]) => loaded.entries?.filter((e) => e.status === status).length ?? 0;
    warn(
      `manifests: ${file} (kata-deploy's chart values): ${count("carried")} key(s) carried, ${count("not carried")} not carried (below), ${count("no effect")} without effect here (--explain-values lists them all)`,
    );
  }
  for (const note of [...loaded.notes, ...notes]) warn(`manifests: ${formatIssue(note)}`);
  if (!String(loaded.values.artifacts ?? "").trim())
    warn(
      "manifests: `artifacts` is empty: each node's install will stop and ask where Kata's artifacts come from; set one, e.g. --set artifacts=registry:HOST/REPO",
    );
  return 0;
}
