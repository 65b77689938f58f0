// Helm 3, as far as a switch from kata-deploy meets it, against the tests' API server: a release
// stored as Helm stores one, and `helm uninstall` deciding what to keep from that stored release,
// not from the live objects. Read from Helm's source (helm/helm @ v3.21.4):
//   pkg/storage/driver/secrets.go:216-256  a release is a Secret sh.helm.release.v1.<name>.v<N> of
//       type helm.sh/release.v1, labelled owner=helm, name, status, version; data.release holds
//   pkg/storage/driver/util.go:37-53       base64(gzip(JSON of the release))
//   pkg/action/uninstall.go:214,224        what to delete: releaseutil.SplitManifests(rel.Manifest),
//   pkg/action/resource_policy.go:33-41    less what the *stored* manifest annotates
//                                          helm.sh/resource-policy: keep
//   pkg/action/uninstall.go:155-185        then the release's Secrets go (unless --keep-history)
// And kata-deploy 4.1.0's pod on SIGTERM (binary/src/k8s/client.rs:322-334, main.rs:1347-1409): it
// cleans its node up — labels off, Kata removed — unless the DaemonSet of its own name, in its
// namespace, exists, is not being deleted and still selects the node (the rule src/kube/selects.ts
// holds, read from that same code).
import { gunzipSync, gzipSync } from "node:zlib";
import { parseAllDocuments } from "yaml";
import { kubeApi } from "../../src/kube/api.js";
import { daemonSetSelects } from "../../src/kube/selects.js";
import type { FakeKube } from "./kube-api.js";

type Json = Record<string, unknown>;

const secretPath = (namespace: string, name: string) => `/api/v1/namespaces/${namespace}/secrets/${name}`;

/** A release as `helm install` leaves it: revision 1, deployed, its rendered manifest stored. */
export function storeRelease(kube: FakeKube, name: string, namespace: string, manifest: string): void {
  const release = { name, namespace, version: 1, info: { status: "deployed" }, manifest };
  const encoded = gzipSync(Buffer.from(JSON.stringify(release))).toString("base64");
  kube.objects.set(secretPath(namespace, `sh.helm.release.v1.${name}.v1`), {
    apiVersion: "v1",
    kind: "Secret",
    type: "helm.sh/release.v1",
    metadata: {
      name: `sh.helm.release.v1.${name}.v1`,
      namespace,
      labels: { owner: "helm", name, status: "deployed", version: "1" },
    },
    // The API carries a Secret's bytes base64-encoded; Helm's bytes are base64 themselves.
    data: { release: Buffer.from(encoded).toString("base64") },
  });
}

/** The releases `helm list -n namespace` shows: those whose Secrets are there. */
export function helmList(kube: FakeKube, namespace: string): string[] {
  const names = new Set<string>();
  for (const [where, object] of kube.objects) {
    if (!where.startsWith(`/api/v1/namespaces/${namespace}/secrets/`)) continue;
    const labels = ((object as Json).metadata as Json).labels as Record<string, string> | undefined;
    if (labels?.owner === "helm" && labels.name) names.add(labels.name);
  }
  return [...names].sort();
}

/** The API path of an object of the chart's manifest. */
function pathOf(doc: Json, namespace: string): string {
  const meta = doc.metadata as Json;
  const name = String(meta.name);
  const ns = String(meta.namespace ?? namespace);
  switch (doc.kind) {
    case "ServiceAccount":
      return `/api/v1/namespaces/${ns}/serviceaccounts/${name}`;
    case "ClusterRole":
      return `/apis/rbac.authorization.k8s.io/v1/clusterroles/${name}`;
    case "ClusterRoleBinding":
      return `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${name}`;
    case "DaemonSet":
      return `/apis/apps/v1/namespaces/${ns}/daemonsets/${name}`;
    case "RuntimeClass":
      return `/apis/node.k8s.io/v1/runtimeclasses/${name}`;
    case "ConfigMap":
      return `/api/v1/namespaces/${ns}/configmaps/${name}`;
    default:
      throw new Error(`the Helm model knows no ${String(doc.kind)}`);
  }
}

/**
 * `helm uninstall <name> -n namespace [--no-hooks]`: every object of the *stored* manifest deleted
 * but those it annotates keep (live annotations count for nothing), then the release's Secrets.
 * Returns the API paths it deleted. Nothing at all when Helm has no such release: it finds a
 * release's Secrets by their labels owner=helm and name (pkg/storage/storage.go:153-156 History →
 * driver/secrets.go:113-131 Query, a label selector), never by their names.
 */
export function helmUninstall(kube: FakeKube, name: string, namespace: string): string[] {
  const secrets = [...kube.objects.entries()]
    .filter(([p, object]) => {
      if (!p.startsWith(`/api/v1/namespaces/${namespace}/secrets/`)) return false;
      const labels = ((object as Json).metadata as Json).labels as Record<string, string> | undefined;
      return labels?.owner === "helm" && labels.name === name;
    })
    .map(([p]) => p);
  if (secrets.length === 0) return [];
  const latest = secrets.sort().at(-1) as string;
  const data = ((kube.objects.get(latest) as Json).data as Record<string, string>).release as string;
  const release = JSON.parse(
    gunzipSync(Buffer.from(Buffer.from(data, "base64").toString(), "base64")).toString(),
  ) as { manifest: string };
  const deleted: string[] = [];
  for (const doc of parseAllDocuments(release.manifest).map((d) => d.toJS() as Json | null)) {
    if (doc === null || typeof doc !== "object" || !doc.kind) continue;
    const annotations = ((doc.metadata as Json).annotations ?? {}) as Record<string, string>;
    if (annotations["helm.sh/resource-policy"] === "keep") continue;
    const where = pathOf(doc, namespace);
    if (kube.objects.delete(where)) deleted.push(where);
  }
  for (const secret of secrets) kube.objects.delete(secret);
  return deleted;
}

/**
 * What kata-deploy's pod on `node` does when it gets SIGTERM: "skip" (its DaemonSet still wants
 * the node) or "cleanup" (labels off, Kata removed from the node).
 */
export async function kataDeployOnSigterm(
  kube: FakeKube,
  node: string,
  namespace = "kube-system",
  daemonSet = "kata-deploy",
): Promise<"skip" | "cleanup"> {
  const api = await kubeApi(kube.kubeconfig);
  const ds = await api.getDaemonSet(namespace, daemonSet);
  if (ds === null || ds.deleting) return "cleanup";
  return daemonSetSelects(ds, await api.getNode(node)).selects ? "skip" : "cleanup";
}
