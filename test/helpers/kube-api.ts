// A small Kubernetes API server for tests (no real one can run here): objects of the kinds
// kata-install and kubectl touch, kept by their API path, got, listed (in pages), created,
// replaced, patched (JSON merge, JSON patch and strategic merge patch, as the API applies each) and
// deleted; and the discovery documents kubectl reads before it acts — enough for
// @kubernetes/client-node and for the real kubectl to be pointed at it. It refuses what the real one
// refuses: a stale resourceVersion (409), a label key or value Kubernetes does not take and an
// immutable field changed (422), a name taken (409), a namespace that does not exist (404). Every
// request is recorded.
import { execFile } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { jsonPatch, mergePatch, PatchError, strategicMergePatch } from "./kube-patch.js";
import { immutableChanged, invalid } from "./kube-validate.js";

export { mergePatch } from "./kube-patch.js";

const run = promisify(execFile);

type Json = Record<string, unknown>;

/** A view of the server's objects of one kind, keyed as the tests name them. */
export interface ObjectView {
  get(key: string): Json | undefined;
  set(key: string, object: Json): void;
  delete(key: string): boolean;
  has(key: string): boolean;
  keys(): string[];
  values(): Json[];
}

export interface FakeKube {
  url: string;
  /** A kubeconfig file naming this server, for the client and for kubectl. */
  kubeconfig: string;
  /** The real kubectl against this server (asynchronously: the server runs in this process). */
  kubectl(...args: string[]): Promise<string>;
  /** Every object, by its API path. */
  objects: Map<string, Json>;
  /** Nodes by name. */
  nodes: ObjectView;
  /** DaemonSets by namespace/name. */
  daemonsets: ObjectView;
  /** Objects created through the API (kubectl apply), by their API path, as they are now. */
  created: ObjectView;
  requests: Array<{ method: string; path: string; contentType?: string; body?: unknown }>;
  close(): Promise<void>;
}

/** A Node as the kubelet keeps it: Ready, its runtime's handlers not reported (`extra` to say otherwise). */
export function node(name: string, labels: Record<string, string> = {}, extra: Json = {}): Json {
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: { name, labels, annotations: {} },
    spec: {},
    status: { conditions: [{ type: "Ready", status: "True" }] },
    ...extra,
  };
}

const RESOURCES: Record<string, Array<[string, string, boolean]>> = {
  "/api/v1": [
    ["nodes", "Node", false],
    ["namespaces", "Namespace", false],
    ["serviceaccounts", "ServiceAccount", true],
    ["configmaps", "ConfigMap", true],
    ["secrets", "Secret", true],
    ["pods", "Pod", true],
  ],
  "/apis/apps/v1": [["daemonsets", "DaemonSet", true]],
  "/apis/batch/v1": [["jobs", "Job", true]],
  "/apis/rbac.authorization.k8s.io/v1": [
    ["clusterroles", "ClusterRole", false],
    ["clusterrolebindings", "ClusterRoleBinding", false],
    ["roles", "Role", true],
    ["rolebindings", "RoleBinding", true],
  ],
  "/apis/node.k8s.io/v1": [["runtimeclasses", "RuntimeClass", false]],
  "/apis/nfd.k8s-sigs.io/v1alpha1": [["nodefeaturerules", "NodeFeatureRule", false]],
};

interface Target {
  group: string;
  namespace: string | null;
  resource: string;
  kind: string;
  /** Null: the collection. */
  name: string | null;
}

/** What an API path names: an object or a collection, of a known resource. */
function parse(p: string): Target | null {
  const m = /^(\/api\/v1|\/apis\/[^/]+\/[^/]+)\/(.+)$/.exec(p);
  if (!m) return null;
  const group = m[1] as string;
  const parts = (m[2] as string).split("/").map(decodeURIComponent);
  let namespace: string | null = null;
  if (parts[0] === "namespaces" && parts.length >= 3) {
    namespace = parts[1] as string;
    parts.splice(0, 2);
  }
  if (parts.length > 2) return null;
  const found = RESOURCES[group]?.find(([name]) => name === parts[0]);
  if (!found) return null;
  // A namespaced resource is listed across namespaces, never created outside one.
  if (!found[2] && namespace !== null) return null;
  return { group, namespace, resource: found[0], kind: found[1], name: parts[1] ?? null };
}

const pathOf = (t: Target, name: string) =>
  `${t.group}${t.namespace !== null ? `/namespaces/${t.namespace}` : ""}/${t.resource}/${name}`;

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

const status = (code: number, reason: string, message: string) => ({
  status: code,
  body: { kind: "Status", apiVersion: "v1", status: "Failure", code, reason, message },
});

function view(
  objects: Map<string, Json>,
  pathFor: (key: string) => string,
  keyOf: (p: string) => string | null,
) {
  return {
    get: (key: string) => objects.get(pathFor(key)),
    set: (key: string, object: Json) => void objects.set(pathFor(key), object),
    delete: (key: string) => objects.delete(pathFor(key)),
    has: (key: string) => objects.has(pathFor(key)),
    keys: () => [...objects.keys()].map(keyOf).filter((k): k is string => k !== null),
    values: () => [...objects.entries()].filter(([p]) => keyOf(p) !== null).map(([, o]) => o),
  };
}

export async function startFakeKube(): Promise<FakeKube> {
  const objects = new Map<string, Json>();
  const createdPaths = new Set<string>();
  const requests: FakeKube["requests"] = [];
  let version = 1;
  let uids = 0;
  const namespaceExists = (ns: string) =>
    ["default", "kube-system"].includes(ns) || objects.has(`/api/v1/namespaces/${ns}`);
  const nodes = view(
    objects,
    (name) => `/api/v1/nodes/${name}`,
    (p) => /^\/api\/v1\/nodes\/([^/]+)$/.exec(p)?.[1] ?? null,
  );
  const daemonsets = view(
    objects,
    (key) => {
      const [ns, name] = key.split("/");
      return `/apis/apps/v1/namespaces/${ns}/daemonsets/${name}`;
    },
    (p) => {
      const m = /^\/apis\/apps\/v1\/namespaces\/([^/]+)\/daemonsets\/([^/]+)$/.exec(p);
      return m ? `${m[1]}/${m[2]}` : null;
    },
  );
  const created = view(
    objects,
    (p) => p,
    (p) => (createdPaths.has(p) ? p : null),
  );

  /** The object as stored after a write: its resourceVersion moved on, checked as the API checks it. */
  const store = (t: Target, where: string, next: Json, before: Json | undefined) => {
    const problem = invalid(t.kind, next) ?? (before ? immutableChanged(t.kind, before, next) : null);
    if (problem) return status(422, "Invalid", problem);
    const meta = (next.metadata ?? {}) as Json;
    next.metadata = {
      ...meta,
      resourceVersion: String(++version),
      uid: (before?.metadata as Json | undefined)?.uid ?? meta.uid ?? `uid-${++uids}`,
    };
    objects.set(where, next);
    return { status: before ? 200 : 201, body: next };
  };
  const conflict = (t: Target, name: string) =>
    status(
      409,
      "Conflict",
      `Operation cannot be fulfilled on ${t.resource} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    );

  const handle = (method: string, url: URL, body: string, contentType: string) => {
    const p = url.pathname;
    const found = discovery(p);
    if (method === "GET" && found) return { status: 200, body: found };
    const t = parse(p);
    if (!t) {
      if (method === "GET") return status(404, "NotFound", `the server could not find ${p}`);
      return status(405, "MethodNotAllowed", "not supported");
    }
    if (t.name === null) {
      if (method === "GET") {
        const prefix = `${t.group}${t.namespace !== null ? `/namespaces/${t.namespace}` : ""}`;
        const all = [...objects.keys()]
          .filter((k) => {
            const o = parse(k);
            return o?.resource === t.resource && o.group === t.group && k.startsWith(prefix);
          })
          .filter((k) => matchesLabels(objects.get(k), url.searchParams.get("labelSelector")))
          .sort();
        const limit = Number(url.searchParams.get("limit") ?? 0) || all.length;
        const start = Number(url.searchParams.get("continue") ?? 0);
        const next = start + limit < all.length ? String(start + limit) : undefined;
        return {
          status: 200,
          body: {
            kind: `${t.kind}List`,
            apiVersion: "v1",
            metadata: { resourceVersion: String(version), ...(next ? { continue: next } : {}) },
            items: all.slice(start, start + limit).map((k) => objects.get(k)),
          },
        };
      }
      if (method === "POST") {
        const object = JSON.parse(body) as Json;
        const name = String((object.metadata as Json | undefined)?.name ?? "");
        if (t.namespace !== null && !namespaceExists(t.namespace))
          return status(404, "NotFound", `namespaces "${t.namespace}" not found`);
        const where = pathOf(t, name);
        if (objects.has(where)) return status(409, "AlreadyExists", `${t.resource} "${name}" already exists`);
        const answer = store(t, where, { ...object }, undefined);
        if (answer.status === 201) createdPaths.add(where);
        return answer;
      }
      return status(405, "MethodNotAllowed", "not supported");
    }
    const where = pathOf(t, t.name);
    const current = objects.get(where);
    if (!current) return status(404, "NotFound", `${t.resource} "${t.name}" not found`);
    const currentVersion = (current.metadata as Json | undefined)?.resourceVersion;
    if (method === "GET") return { status: 200, body: current };
    if (method === "DELETE") {
      objects.delete(where);
      createdPaths.delete(where);
      return { status: 200, body: current };
    }
    if (method === "PUT") {
      const next = JSON.parse(body) as Json;
      const wanted = (next.metadata as Json | undefined)?.resourceVersion;
      if (wanted !== undefined && wanted !== currentVersion) return conflict(t, t.name);
      return store(t, where, next, current);
    }
    if (method === "PATCH") {
      const patch = JSON.parse(body) as unknown;
      let next: Json;
      try {
        if (contentType.startsWith("application/json-patch+json"))
          next = jsonPatch(current, patch as Array<{ op: string; path: string }>) as Json;
        else {
          // A resourceVersion in the patch is a precondition, as the API server takes it.
          const wanted = ((patch as Json).metadata as Json | undefined)?.resourceVersion;
          if (wanted !== undefined && wanted !== currentVersion) return conflict(t, t.name);
          if (contentType.startsWith("application/merge-patch+json"))
            next = mergePatch(current, patch) as Json;
          else if (contentType.startsWith("application/strategic-merge-patch+json"))
            next = strategicMergePatch(current, patch) as Json;
          else return status(415, "UnsupportedMediaType", `the tests' server does not take ${contentType}`);
        }
      } catch (error) {
        if (error instanceof PatchError) return status(error.code, "Invalid", error.message);
        throw error;
      }
      return store(t, where, next, current);
    }
    return status(405, "MethodNotAllowed", "not supported");
  };
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString();
    });
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://localhost");
      const contentType = req.headers["content-type"] ?? "";
      let parsed: unknown;
      try {
        parsed = body ? JSON.parse(body) : undefined;
      } catch {
        parsed = body;
      }
      requests.push({
        method: req.method ?? "",
        path: url.pathname,
        contentType: req.headers["content-type"],
        ...(parsed !== undefined ? { body: parsed } : {}),
      });
      const answer = handle(req.method ?? "GET", url, body, contentType);
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
    objects,
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

/**
 * An equality-based label selector (`owner=helm,name=kata-deploy`, `key`, `key!=value`) as the API
 * server applies it to a list: kubectl delete -l lists with it, then deletes what the list holds.
 */
function matchesLabels(object: unknown, selector: string | null): boolean {
  if (selector === null || selector === "") return true;
  const labels = (((object as Json | undefined)?.metadata as Json | undefined)?.labels ?? {}) as Record<
    string,
    string
  >;
  return selector.split(",").every((term) => {
    const [key, value] = term.includes("!=")
      ? term.split("!=")
      : term.includes("=")
        ? term.split(/==?/)
        : [term, undefined];
    if (key === undefined) return true;
    if (term.includes("!=")) return labels[key] !== value;
    return value === undefined ? key in labels : labels[key] === value;
  });
}
