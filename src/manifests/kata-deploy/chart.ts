// The keys of kata-deploy's Helm chart (4.1: helm-chart/kata-deploy/values.yaml), their kinds and
// the defaults this project compares against: the shape a values file for that chart must have.
// Written from the chart's documented keys, its defaults held to the chart's own values.yaml by
// test/manifests/chart-values.test.ts; what each key does here is map.ts's. What the chart
// sets for each of its shims is the shim's record (src/shims/table.ts).
import { type Arch, type ChartArch, type ShimName, shimRecord } from "../../shims/table.js";

export type Kind =
  | "string"
  | "bool"
  | "int"
  /** true, false or null ("~": follow shims.disableAll). */
  | "bool?"
  | "strings"
  /** A map of strings (labels, annotations, a nodeSelector). */
  | "labels"
  /** Kubernetes' own shape (affinity, resources, tolerations): passed on as it is. */
  | "object"
  | "list"
  /** A value of another chart (node-feature-discovery's subchart): anything. */
  | "any";

export interface Spec {
  kind?: Kind;
  /** Allowed values of a string. */
  oneOf?: readonly string[];
  default?: unknown;
  children?: Record<string, Spec>;
  /** A map whose keys are the user's (shim names, runtime names), each of this shape. */
  each?: Spec;
  /** Keys the chart refuses, with its message. */
  removed?: Record<string, string>;
  /** Keys beyond `children` of kind "any" (a subchart's values). */
  open?: boolean;
}

/** What read.ts makes of a value of each kind (a value not of its kind is left out, with an issue). */
interface KindValues {
  string: string;
  bool: boolean;
  int: number;
  "bool?": boolean | null;
  strings: string[];
  labels: Record<string, string>;
  object: Record<string, unknown>;
  list: unknown[];
  any: unknown;
}

/**
 * The values a file read to `S` holds: the type follows from the spec itself, so the chart's shape
 * is written once. Every key is optional (a file sets what it sets); a map with both named keys
 * and the user's (shims: disableAll and each shim) types the user's as either.
 */
export type ValueOf<S> = S extends { children: infer C; each: infer E }
  ? { [K in keyof C]?: ValueOf<C[K]> } & { [name: string]: ValueOf<E> | ValueOf<C[keyof C]> | undefined }
  : S extends { children: infer C }
    ? { [K in keyof C]?: ValueOf<C[K]> }
    : S extends { each: infer E }
      ? Record<string, ValueOf<E>>
      : S extends { kind: infer K extends Kind }
        ? KindValues[K]
        : never;

// Each keeps its literal kind (no `: Spec`), for ValueOf; `satisfies` still holds it to Spec.
const leaf = <const K extends Kind>(
  kind: K,
  dflt?: unknown,
  oneOf?: readonly string[],
): { kind: K; default?: unknown; oneOf?: readonly string[] } => ({
  kind,
  default: dflt,
  ...(oneOf ? { oneOf } : {}),
});
const image = (reference: string, tag: string) =>
  ({ children: { reference: leaf("string", reference), tag: leaf("string", tag) } }) satisfies Spec;
const probe = (initialDelay: boolean, period: number, failure: number) =>
  ({
    children: {
      enabled: leaf("bool", true),
      ...(initialDelay ? { initialDelaySeconds: leaf("int", 1) } : {}),
      periodSeconds: leaf("int", period),
      failureThreshold: leaf("int", failure),
      timeoutSeconds: leaf("int", 3),
    },
  }) satisfies Spec;

/** The default shim of kata-deploy 4.1's chart, on every architecture. */
export const CHART_DEFAULT_SHIM = "qemu-runtime-rs";

export const CHART_ARCHES: Record<ChartArch, Arch> = {
  amd64: "x86_64",
  arm64: "aarch64",
  s390x: "s390x",
  ppc64le: "ppc64le",
};
export type { ChartArch };

const SHIM = {
  children: {
    enabled: leaf("bool?", null),
    dropIn: leaf("string", ""),
    supportedArches: { kind: "strings", oneOf: Object.keys(CHART_ARCHES) },
    allowedHypervisorAnnotations: leaf("strings", []),
    containerd: { children: { snapshotter: leaf("string", ""), forceGuestPull: leaf("bool", false) } },
    crio: { children: { guestPull: leaf("bool", false) } },
    agent: { children: { httpsProxy: leaf("string", ""), noProxy: leaf("string", "") } },
    runtimeClass: {
      children: {
        nodeSelector: leaf("labels", {}),
        overheadEnabled: leaf("bool", true),
        overhead: { children: { memory: leaf("string"), cpu: leaf("string") } },
      },
    },
  },
} satisfies Spec;
/** One shim's settings, as a file gives them or as the chart's defaults have them. */
export type ShimValues = ValueOf<typeof SHIM>;

const REMOVED_JOB_KEY =
  "has been removed from the chart: node selection is the top-level nodeSelector and affinity.nodeAffinity, in both deployment modes";

export const CHART = {
  children: {
    deploymentMode: leaf("string", "daemonset", ["daemonset", "job"]),
    job: {
      removed: {
        nodeSelector: REMOVED_JOB_KEY,
        nodeAffinity: REMOVED_JOB_KEY,
        nodeSelectorExpressions: REMOVED_JOB_KEY,
      },
      children: {
        dispatcherImage: image("quay.io/kata-containers/kata-deploy-job-dispatcher", ""),
        dispatcherNodeSelector: leaf("labels", {}),
        dispatcherTolerations: leaf("list", []),
        parallelism: leaf("int", 100),
        nodes: leaf("strings", []),
        waitForNodesSeconds: leaf("int", 120),
        nodeSettleSeconds: leaf("int", 15),
        waitNodeReadySeconds: leaf("int", 300),
        cleanup: {
          removed: { nodeSelectorExpressions: "has been renamed job.cleanup.nodeAffinity in the chart" },
          children: {
            nodes: leaf("strings", []),
            nodeSelector: leaf("labels", {}),
            nodeAffinity: leaf("object", {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [
                  { matchExpressions: [{ key: "katacontainers.io/kata-runtime", operator: "Exists" }] },
                ],
              },
            }),
          },
        },
        ttlSecondsAfterFinished: leaf("int", 600),
        activeDeadlineSeconds: leaf("int", 3600),
        backoffLimit: leaf("int", 3),
      },
    },
    imagePullPolicy: leaf("string", "Always", ["Always", "IfNotPresent", "Never"]),
    imagePullSecrets: leaf("list", []),
    image: image("quay.io/kata-containers/kata-deploy", ""),
    kubectlImage: image("quay.io/kata-containers/kubectl", "latest"),
    monitor: {
      children: {
        enabled: leaf("bool", false),
        image: image("quay.io/kata-containers/kata-monitor", ""),
        listenAddress: leaf("string", "0.0.0.0:8090"),
        runtimeEndpoint: leaf("string", ""),
        logLevel: leaf("string", ""),
        port: leaf("int", 8090),
        securityContext: leaf("object", { privileged: false, runAsUser: 0, runAsGroup: 0 }),
        resources: leaf("object", {
          limits: { cpu: "200m", memory: "300Mi" },
          requests: { cpu: "200m", memory: "300Mi" },
        }),
      },
    },
    // The chart takes any value: one it does not know is the default layout.
    k8sDistribution: leaf("string", "k8s"),
    containerd: {
      children: {
        configDir: leaf("string", ""),
        runtimeSocket: leaf("string", ""),
        configFileName: leaf("string", ""),
        userDropIn: leaf("string", ""),
      },
    },
    nodeSelector: leaf("labels", {}),
    tolerations: leaf("list", []),
    startupTaints: leaf("strings", []),
    podLabels: leaf("labels", {}),
    podAnnotations: leaf("labels", {}),
    affinity: leaf("object", {}),
    priorityClassName: leaf("string", "system-node-critical"),
    updateStrategy: leaf("object", { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 1 } }),
    resources: leaf("object", { requests: { cpu: "25m", memory: "16Mi" } }),
    debug: leaf("bool", false),
    devkit: leaf("bool", false),
    logLevel: leaf("string", "", ["", "error", "warn", "info", "debug", "trace"]),
    health: {
      children: {
        port: leaf("int", 8090),
        startupProbe: probe(true, 10, 60),
        livenessProbe: probe(false, 30, 3),
        readinessProbe: probe(false, 10, 3),
      },
    },
    snapshotter: {
      children: {
        setup: { kind: "strings", default: ["nydus"], oneOf: ["nydus", "erofs"] },
        erofsMergeMode: leaf("string", "", ["", "merged", "unmerged"]),
        erofsSnapshotterMode: leaf("string", "", ["", "disk", "memory"]),
        erofsDmverity: leaf("bool", false),
      },
    },
    shims: { children: { disableAll: leaf("bool", false) }, each: SHIM },
    defaultShim: {
      children: Object.fromEntries(
        Object.keys(CHART_ARCHES).map((a) => [a, leaf("string", CHART_DEFAULT_SHIM)]),
      ),
    },
    runtimeClasses: {
      children: {
        enabled: leaf("bool", true),
        createDefault: leaf("bool", false),
        defaultName: leaf("string", "kata"),
        overheadEnabled: leaf("bool", true),
      },
    },
    env: {
      children: {
        installationPrefix: leaf("string", ""),
        hostOS: leaf("string", ""),
        multiInstallSuffix: leaf("string", ""),
      },
    },
    "node-feature-discovery": { children: { enabled: leaf("bool", false) }, open: true },
    nodeFeatureRules: { children: { create: leaf("any", "auto") } },
    verification: {
      children: {
        namespace: leaf("string", "default"),
        timeout: leaf("int", 180),
        daemonsetTimeout: leaf("int", 1200),
        pod: leaf("string", ""),
      },
    },
    customRuntimes: {
      children: {
        enabled: leaf("bool", false),
        runtimes: {
          each: {
            children: {
              baseConfig: leaf("string"),
              dropIn: leaf("string", ""),
              runtimeClass: leaf("string", ""),
              inheritBaseOverhead: leaf("bool", true),
              containerd: { children: { snapshotter: leaf("string", "") } },
              crio: { children: { pullType: leaf("string", "") } },
            },
          },
        },
      },
    },
    // Used by the chart's templates, not in its values.yaml.
    // Not in the chart's values.yaml: its templates take them with `default`.
    nameOverride: leaf("string"),
    fullnameOverride: leaf("string"),
  },
} satisfies Spec;
/** A values file for the chart, as read (read.ts). */
export type ChartValues = ValueOf<typeof CHART>;

/**
 * The chart's shims in the order of its values.yaml: the order its per-architecture lists come in
 * (SHIMS_<ARCH>). What the chart sets for each is its record's (src/shims/table.ts `chart`); a
 * shim with a chart entry missing here, or one here without, fails test/shims/table.test.ts.
 */
const CHART_ORDER: readonly ShimName[] = [
  "clh",
  "clh-azure",
  "clh-runtime-rs",
  "clh-azure-runtime-rs",
  "dragonball",
  "fc",
  "qemu",
  "qemu-runtime-rs",
  "qemu-nvidia-cpu",
  "qemu-nvidia-cpu-runtime-rs",
  "qemu-nvidia-gpu",
  "qemu-nvidia-gpu-runtime-rs",
  "qemu-nvidia-gpu-snp",
  "qemu-nvidia-gpu-snp-runtime-rs",
  "qemu-nvidia-gpu-tdx",
  "qemu-nvidia-gpu-tdx-runtime-rs",
  "qemu-snp",
  "qemu-snp-runtime-rs",
  "qemu-tdx",
  "qemu-tdx-runtime-rs",
  "qemu-se",
  "qemu-se-runtime-rs",
  "qemu-coco-dev",
  "qemu-coco-dev-runtime-rs",
  "remote",
  "openvmm-azure-runtime-rs",
];

export const CHART_SHIMS: readonly string[] = CHART_ORDER.filter(
  (name) => shimRecord(name)?.chart !== "none",
);

/** The chart's default values for one of its shims (as values.yaml has them). */
export function shimDefaults(name: string): ShimValues | undefined {
  const record = shimRecord(name);
  if (record === undefined || record.chart === "none") return undefined;
  const s = record.chart;
  const nodeSelector = record.runtimeClass.nodeSelector;
  const tee = s.guestPull
    ? {
        crio: { guestPull: true },
        agent: { httpsProxy: "", noProxy: "" },
        ...(name === "remote" ? {} : { containerd: { snapshotter: s.snapshotter, forceGuestPull: false } }),
      }
    : {};
  return {
    enabled: s.enabled ? null : false,
    supportedArches: s.arches,
    allowedHypervisorAnnotations: [],
    containerd: { snapshotter: s.snapshotter },
    ...tee,
    ...(nodeSelector === "none" ? {} : { runtimeClass: { nodeSelector } }),
  };
}

/**
 * The chart's defaults as a values tree (each leaf's `default`; a map of the user's keys, such as
 * shims, has none here: its entries' defaults are the shims' records). What a file leaves out is
 * this, as Helm coalesces a release's values over its chart's.
 */
export function chartDefaults(spec: Spec = CHART): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, child] of Object.entries(spec.children ?? {})) {
    if (child.children !== undefined) {
      const sub = chartDefaults(child);
      if (Object.keys(sub).length > 0) out[name] = sub;
    } else if (child.default !== undefined) out[name] = child.default;
  }
  return out;
}
