// The few Kubernetes API calls kata-install makes, through @kubernetes/client-node: read and
// merge-patch this node, list nodes (paged, for large clusters), read our DaemonSet. Loaded only by
// the commands that talk to a cluster: the client alone takes longer to load than a no-op install.
import path from "node:path";
import { UserError } from "../errors.js";
import { readInputText } from "../input-file.js";
import type { MergePatch, NodeMeta } from "./node-labels.js";

export interface KubeNode {
  name: string;
  resourceVersion?: string;
  meta: NodeMeta;
  taints: Array<{ key: string; value?: string; effect: string }>;
  /**
   * The handlers the kubelet says the runtime serves (status.runtimeHandlers); null when it does not
   * say (the kubelet fills it in only with some feature gates, and older runtimes report none).
   */
  runtimeHandlers: string[] | null;
  /** The node's Ready condition: "True", "False" or "Unknown". */
  ready: string;
}

export interface NodeSelectorTerm {
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
  matchFields?: Array<{ key: string; operator: string; values?: string[] }>;
}

/** What the entrypoint needs of a DaemonSet, to know whether it still wants a node. */
export interface DaemonSetView {
  namespace: string;
  name: string;
  uid?: string;
  deleting: boolean;
  nodeSelector: Record<string, string>;
  /** requiredDuringSchedulingIgnoredDuringExecution terms, as the API has them; null without any. */
  nodeAffinityTerms: NodeSelectorTerm[] | null;
}

export interface KubeApi {
  /** Where it talks to, for messages. */
  readonly server: string;
  getNode(name: string): Promise<KubeNode>;
  patchNode(name: string, patch: MergePatch): Promise<KubeNode>;
  listNodes(): Promise<KubeNode[]>;
  /** Null when there is no such DaemonSet (it was deleted). */
  getDaemonSet(namespace: string, name: string): Promise<DaemonSetView | null>;
  /** Every DaemonSet of the cluster, in all namespaces. */
  listDaemonSets(): Promise<DaemonSetView[]>;
}

export class KubeError extends Error {}

/** A kubeconfig with many clusters and inline certificates is tens of kilobytes. */
const MAX_KUBECONFIG_BYTES = 4 << 20;

/**
 * How long one API request may go unanswered (KATA_INSTALL_KUBE_TIMEOUT, seconds; 30 by default):
 * an API server that accepts and never answers must not hang `report --kubeconfig` or the
 * entrypoint, whose readiness stays "not ready" meanwhile.
 */
export function requestTimeoutMs(env: Readonly<Record<string, string | undefined>> = process.env): number {
  const given = env.KATA_INSTALL_KUBE_TIMEOUT;
  if (given === undefined || given === "") return 30_000;
  const seconds = Number(given);
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 3600)
    throw new UserError(
      `environment: KATA_INSTALL_KUBE_TIMEOUT: expected seconds (more than 0, at most 3600), got ${JSON.stringify(given)}`,
    );
  return seconds * 1000;
}

/**
 * A client from a kubeconfig file, or, without one, from the pod's service account (in-cluster) or
 * $KUBECONFIG / ~/.kube/config, as kubectl does.
 */
export async function kubeApi(kubeconfig?: string): Promise<KubeApi> {
  const k8s = await import("@kubernetes/client-node");
  const config = new k8s.KubeConfig();
  // Read by kata-install's own bounds first: a FIFO or a device given as one must not hang it.
  const read = kubeconfig === undefined ? null : readInputText(kubeconfig, MAX_KUBECONFIG_BYTES);
  if (read !== null && !read.ok)
    throw new UserError(`${kubeconfig}: ${read.reason}: it must be a kubeconfig file`);
  try {
    if (kubeconfig && read?.ok) {
      config.loadFromString(read.text);
      // As loadFromFile does: certificate and key files named relative to the kubeconfig.
      config.makePathsAbsolute(path.dirname(kubeconfig));
    } else config.loadFromDefault();
  } catch (error) {
    throw new KubeError(`${kubeconfig ?? "kubeconfig"}: ${(error as Error).message}`);
  }
  const server = config.getCurrentCluster()?.server ?? "(no cluster)";
  const core = config.makeApiClient(k8s.CoreV1Api);
  const apps = config.makeApiClient(k8s.AppsV1Api);
  const timeoutMs = requestTimeoutMs();
  const within = `${timeoutMs / 1000} s`;
  /** Per request: a deadline (the request is aborted when it passes), and kata-install's name. */
  const options = (given?: Parameters<typeof k8s.setHeaderOptions>[2]) => {
    const withAgent = k8s.setHeaderOptions("User-Agent", "kata-install", given);
    const middleware = [...(withAgent.middleware ?? [])];
    const named = middleware.pop();
    if (named !== undefined)
      middleware.push({
        pre: (request) => {
          request.setSignal(AbortSignal.timeout(timeoutMs));
          return named.pre(request);
        },
        post: (response) => named.post(response),
      });
    return { ...withAgent, middleware };
  };
  const call = async <T>(what: string, request: () => Promise<T>): Promise<T> => {
    try {
      return await request();
    } catch (error) {
      const e = error as { code?: number; body?: string; message?: string; name?: string; type?: string };
      if (e.name === "AbortError" || e.name === "TimeoutError" || e.type === "aborted")
        throw new KubeError(
          `${server}: ${what}: no answer within ${within} (KATA_INSTALL_KUBE_TIMEOUT sets how long a request may take)`,
        );
      const detail = e.body ? (safeMessage(e.body) ?? e.message) : e.message;
      throw new KubeError(`${server}: ${what}: ${e.code ? `HTTP ${e.code}: ` : ""}${detail}`);
    }
  };
  const view = (node: import("@kubernetes/client-node").V1Node): KubeNode => ({
    name: node.metadata?.name ?? "",
    resourceVersion: node.metadata?.resourceVersion,
    meta: { labels: node.metadata?.labels ?? {}, annotations: node.metadata?.annotations ?? {} },
    taints: (node.spec?.taints ?? []).map((t) => ({ key: t.key, value: t.value, effect: t.effect })),
    runtimeHandlers: node.status?.runtimeHandlers
      ? node.status.runtimeHandlers.map((h) => h.name ?? "").filter(Boolean)
      : null,
    ready: node.status?.conditions?.find((c) => c.type === "Ready")?.status ?? "Unknown",
  });
  const dsView = (ds: import("@kubernetes/client-node").V1DaemonSet): DaemonSetView => {
    const pod = ds.spec?.template.spec;
    const required = pod?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
    return {
      namespace: ds.metadata?.namespace ?? "",
      name: ds.metadata?.name ?? "",
      uid: ds.metadata?.uid,
      deleting: ds.metadata?.deletionTimestamp !== undefined,
      nodeSelector: pod?.nodeSelector ?? {},
      nodeAffinityTerms: required ? (required.nodeSelectorTerms ?? []) : null,
    };
  };
  return {
    server,
    async getNode(name) {
      return view(await call(`get node ${name}`, () => core.readNode({ name }, options())));
    },
    async patchNode(name, patch) {
      const merge = options(k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch));
      return view(await call(`patch node ${name}`, () => core.patchNode({ name, body: patch }, merge)));
    },
    async listNodes() {
      const out: KubeNode[] = [];
      let token: string | undefined;
      do {
        const page = await call("list nodes", () =>
          core.listNode({ limit: 500, _continue: token }, options()),
        );
        out.push(...page.items.map(view));
        token = page.metadata?._continue || undefined;
      } while (token);
      return out;
    },
    async getDaemonSet(namespace, name) {
      let ds: import("@kubernetes/client-node").V1DaemonSet;
      try {
        ds = await apps.readNamespacedDaemonSet({ namespace, name }, options());
      } catch (error) {
        if ((error as { code?: number }).code === 404) return null;
        return call(`get daemonset ${namespace}/${name}`, () => Promise.reject(error));
      }
      return dsView(ds);
    },
    async listDaemonSets() {
      const out: DaemonSetView[] = [];
      let token: string | undefined;
      do {
        const page = await call("list daemonsets", () =>
          apps.listDaemonSetForAllNamespaces({ limit: 500, _continue: token }, options()),
        );
        out.push(...page.items.map(dsView));
        token = page.metadata?._continue || undefined;
      } while (token);
      return out;
    },
  };
}

function safeMessage(body: string): string | undefined {
  try {
    return (JSON.parse(body) as { message?: string }).message;
  } catch {
    return undefined;
  }
}
