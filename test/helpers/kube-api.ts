// A small Kubernetes API server for tests (no real one can run here): nodes (get, list with
// pages, merge-patch as RFC 7386 says: null removes a key), DaemonSets (get), the creation of the
// objects `manifests` prints (namespaced ones only in a namespace that exists, names unique), and
// the discovery documents kubectl reads before it acts — enough for @kubernetes/client-node and
// for the real kubectl to be pointed at it. Every request is recorded.
import { execFile } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

type Json = Record<string, unknown>;

export interface FakeKube {
  url: string;
  /** A kubeconfig file naming this server, for the client and for kubectl. */
  kubeconfig: string;
  /** The real kubectl against this server (asynchronously: the server runs in this process). */
  kubectl(...args: string[]): Promise<string>;
  nodes: Map<string, Json>;
  daemonsets: Map<string, Json>;
  /** Objects created through the API (kubectl apply), by their API path. */
  created: Map<string, Json>;
  requests: Array<{ method: string; path: string; contentType?: string; body?: unknown }>;
  close(): Promise<void>;
}

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== "object" || patch === null || Array.isArray(patch)) return patch;
  const out: Json =
    typeof target === "object" && target !== null && !Array.isArray(target) ? { ...(target as Json) } : {};
  for (const [key, value] of Object.entries(patch as Json)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

export function node(name: string, labels: Record<string, string> = {}, extra: Json = {}): Json {
  return { apiVersion: "v1", kind: "Node", metadata: { name, labels, annotations: {} }, spec: {}, ...extra };
}

const RESOURCES: Record<string, Array<[string, string, boolean]>> = {
  "/api/v1": [
    ["nodes", "Node", false],
    ["namespaces", "Namespace", false],
    ["serviceaccounts", "ServiceAccount", true],
    ["configmaps", "ConfigMap", true],
    ["pods", "Pod", true],
  ],
  "/apis/apps/v1": [["daemonsets", "DaemonSet", true]],
  "/apis/rbac.authorization.k8s.io/v1": [
    ["clusterroles", "ClusterRole", false],
    ["clusterrolebindings", "ClusterRoleBinding", false],
    ["roles", "Role", true],
    ["rolebindings", "RoleBinding", true],
  ],
  "/apis/node.k8s.io/v1": [["runtimeclasses", "RuntimeClass", false]],
  "/apis/nfd.k8s-sigs.io/v1alpha1": [["nodefeaturerules", "NodeFeatureRule", false]],
};

/** A collection path kubectl creates into: its group path, namespace (or null) and resource. */
function collection(p: string): { group: string; namespace: string | null; resource: string } | null {
  const m = /^(\/api\/v1|\/apis\/[^/]+\/[^/]+)(?:\/namespaces\/([^/]+))?\/([^/]+)$/.exec(p);
  if (!m) return null;
  const group = m[1] as string;
  const found = RESOURCES[group]?.find(([name]) => name === m[3]);
  if (!found || found[2] !== (m[2] !== undefined)) return null;
  return { group, namespace: m[2] ?? null, resource: m[3] as string };
}

function discovery(p: string): Json | null {
  if (p === "/api") return { kind: "APIVersions", versions: ["v1"], serverAddressByClientCIDRs: [] };
  if (p === "/apis") {
    const groups = Object.keys(RESOURCES)
      .filter((g) => g.startsWith("/apis/"))
      .map((g) => {
        const [group, version] = g.slice("/apis/".length).split("/") as [string, string];
        const gv = { groupVersion: `${group}/${version}`, version };
        return { name: group, versions: [gv], preferredVersion: gv };
      });
    return { kind: "APIGroupList", apiVersion: "v1", groups };
  }
  const resources = RESOURCES[p];
  if (!resources) return null;
  return {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: p === "/api/v1" ? "v1" : p.slice("/apis/".length),
    resources: resources.map(([name, kind, namespaced]) => ({
      name,
      singularName: kind.toLowerCase(),
      namespaced,
      kind,
      verbs: ["create", "delete", "get", "list", "patch", "update", "watch"],
    })),
  };
}

export async function startFakeKube(): Promise<FakeKube> {
  const nodes = new Map<string, Json>();
  const daemonsets = new Map<string, Json>();
  const created = new Map<string, Json>();
  const namespaceExists = (ns: string) =>
    ["default", "kube-system"].includes(ns) || created.has(`/api/v1/namespaces/${ns}`);
  const requests: FakeKube["requests"] = [];
  let version = 1;
  const notFound = (kind: string, name: string) => ({
    status: 404,
    body: {
      kind: "Status",
      apiVersion: "v1",
      status: "Failure",
      message: `${kind} "${name}" not found`,
      reason: "NotFound",
      code: 404,
    },
  });
  const handle = (method: string, url: URL, body: string): { status: number; body: Json } => {
    const p = url.pathname;
    const found = discovery(p);
    if (method === "GET" && found) return { status: 200, body: found };
    const nodeMatch = /^\/api\/v1\/nodes\/([^/]+)$/.exec(p);
    if (nodeMatch) {
      const name = decodeURIComponent(nodeMatch[1] as string);
      const current = nodes.get(name);
      if (!current) return notFound("nodes", name);
      if (method === "GET") return { status: 200, body: current };
      if (method === "PATCH") {
        const patch = JSON.parse(body) as { metadata?: { resourceVersion?: string } };
        // A resourceVersion in the patch is a precondition, as the API server takes it.
        const wanted = patch.metadata?.resourceVersion;
        if (wanted !== undefined && wanted !== (current.metadata as Json).resourceVersion)
          return {
            status: 409,
            body: {
              kind: "Status",
              status: "Failure",
              code: 409,
              reason: "Conflict",
              message: "the object has been modified",
            },
          };
        const patched = mergePatch(current, patch) as Json;
        (patched.metadata as Json).resourceVersion = String(++version);
        nodes.set(name, patched);
        return { status: 200, body: patched };
      }
    }
    if (p === "/api/v1/nodes" && method === "GET") {
      const all = [...nodes.keys()].sort();
      const limit = Number(url.searchParams.get("limit") ?? 0) || all.length;
      const start = Number(url.searchParams.get("continue") ?? 0);
      const items = all.slice(start, start + limit).map((n) => nodes.get(n));
      const next = start + limit < all.length ? String(start + limit) : undefined;
      return {
        status: 200,
        body: {
          kind: "NodeList",
          apiVersion: "v1",
          metadata: { resourceVersion: String(version), ...(next ? { continue: next } : {}) },
          items,
        },
      };
    }
    const dsMatch = /^\/apis\/apps\/v1\/namespaces\/([^/]+)\/daemonsets\/([^/]+)$/.exec(p);
    if (dsMatch && method === "GET") {
      const key = `${dsMatch[1]}/${dsMatch[2]}`;
      const ds = daemonsets.get(key);
      return ds ? { status: 200, body: ds } : notFound("daemonsets.apps", dsMatch[2] as string);
    }
    const stored = created.get(p);
    if (method === "GET" && stored) return { status: 200, body: stored };
    const into = method === "POST" ? collection(p) : null;
    if (into) {
      const object = JSON.parse(body) as Json;
      const meta = (object.metadata ?? {}) as Json;
      if (into.namespace !== null && !namespaceExists(into.namespace))
        return notFound("namespaces", into.namespace);
      const where = `${p}/${meta.name}`;
      if (created.has(where))
        return {
          status: 409,
          body: { kind: "Status", status: "Failure", code: 409, reason: "AlreadyExists" },
        };
      const stamped = { ...object, metadata: { ...meta, resourceVersion: String(++version) } };
      created.set(where, stamped);
      return { status: 201, body: stamped };
    }
    // Anything else kubectl may look up (apply reads each object first): absent.
    if (method === "GET") return notFound("object", path.posix.basename(p));
    return { status: 405, body: { kind: "Status", status: "Failure", code: 405, message: "not supported" } };
  };
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString();
    });
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://localhost");
      requests.push({
        method: req.method ?? "",
        path: url.pathname,
        contentType: req.headers["content-type"],
        ...(body ? { body: JSON.parse(body) } : {}),
      });
      const answer = handle(req.method ?? "GET", url, body);
      res.writeHead(answer.status, { "Content-Type": "application/json" });
      res.end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-kube-"));
  const kubeconfig = path.join(dir, "kubeconfig");
  fs.writeFileSync(
    kubeconfig,
    `apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: ${url}
    insecure-skip-tls-verify: true
users:
- name: test
  user: {}
contexts:
- name: test
  context: {cluster: test, user: test}
current-context: test
`,
  );
  return {
    url,
    kubeconfig,
    kubectl: async (...args) =>
      (
        await run("kubectl", ["--kubeconfig", kubeconfig, "--request-timeout=10s", ...args], {
          encoding: "utf8",
        })
      ).stdout,
    nodes,
    daemonsets,
    created,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        fs.rmSync(dir, { recursive: true, force: true });
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A DaemonSet whose pods go to nodes matching `nodeSelector`. */
export function daemonSet(namespace: string, name: string, nodeSelector: Record<string, string> = {}): Json {
  return {
    apiVersion: "apps/v1",
    kind: "DaemonSet",
    metadata: { name, namespace },
    spec: {
      selector: { matchLabels: { name } },
      template: {
        metadata: { labels: { name } },
        spec: { nodeSelector, containers: [{ name, image: "kata-install" }] },
      },
    },
  };
}

/**
 * Someone else changes node `name` on the server right after `api` first reads it (`change` edits
 * the stored object; its resourceVersion moves on): a race, replayed. Returns the count of reads.
 */
export function changeAfterFirstRead(
  api: { getNode(name: string): Promise<unknown> },
  kube: FakeKube,
  name: string,
  change: (stored: Json) => void,
): () => number {
  const getNode = api.getNode.bind(api);
  let reads = 0;
  api.getNode = async (n: string) => {
    const seen = await getNode(n);
    if (++reads === 1) {
      const stored = kube.nodes.get(name) as Json;
      change(stored);
      const meta = stored.metadata as Json;
      meta.resourceVersion = String(Number(meta.resourceVersion ?? 0) + 1);
    }
    return seen;
  };
  return () => reads;
}
