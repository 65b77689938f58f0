// What Node Feature Discovery does for the cluster objects, as kata-deploy's chart has it: a
// NodeFeatureRule that labels TEE nodes and advertises their key counts (the confidential
// RuntimeClasses then request one key per pod), one that labels NVIDIA GPU nodes, and the
// DaemonSet's affinity for nodes that can virtualise.
import { TEE_KEYS, TEES, type Tee } from "../shims/tees.js";

/** Labels kata-install's own NFD rules add, in a namespace NFD always allows. */
export const NFD_LABEL_PREFIX = "kata.feature.node.kubernetes.io/";

type Json = Record<string, unknown>;

/** A rule for each TEE that has one (src/shims/tees.ts): its label, and its keys as an extended resource. */
function teeRules(): Json[] {
  return TEE_KEYS.flatMap((key) => {
    const tee: Tee = TEES[key];
    if (tee.nfdRule === "none" || tee.runtimeClassSelector === "none" || tee.nfdResource === "none")
      return [];
    return [
      {
        name: tee.nfdRule.name,
        labels: { [tee.runtimeClassSelector]: "true" },
        extendedResources: { [tee.nfdResource]: tee.nfdRule.resourceFrom },
        matchFeatures: [
          { feature: "cpu.security", matchExpressions: { [tee.nfdRule.matches]: { op: "Exists" } } },
        ],
      },
    ];
  });
}

export function nodeFeatureRule(suffix: string | null): Json {
  return {
    apiVersion: "nfd.k8s-sigs.io/v1alpha1",
    kind: "NodeFeatureRule",
    metadata: {
      name: suffix ? `kata-tee-keys-${suffix}` : "kata-tee-keys",
      labels: {
        "app.kubernetes.io/managed-by": "kata-install",
        "kata-deploy/instance": suffix ?? "default",
      },
    },
    spec: {
      rules: [
        ...teeRules(),
        {
          // The display (0300) and 3D (0302) controllers of NVIDIA's vendor id: what the GPU shims
          // pass through.
          name: "nvidia.gpu",
          labels: { [`${NFD_LABEL_PREFIX}gpu.nvidia`]: "true" },
          matchFeatures: [
            {
              feature: "pci.device",
              matchExpressions: {
                vendor: { op: "In", value: ["10de"] },
                class: { op: "In", value: ["0300", "0302"] },
              },
            },
          ],
        },
      ],
    },
  };
}

/**
 * One node selector term per architecture, as kata-deploy's chart has them: x86_64 only with VMX or
 * SVM, the others as they are (arm64 by either of its names, and riscv64).
 */
const VIRTUALIZATION_TERMS = [
  [{ key: "feature.node.kubernetes.io/cpu-cpuid.VMX", operator: "In", values: ["true"] }, ["amd64"]],
  [{ key: "feature.node.kubernetes.io/cpu-cpuid.SVM", operator: "In", values: ["true"] }, ["amd64"]],
  [null, ["arm64", "aarch64"]],
  [null, ["s390x"]],
  [null, ["ppc64le"]],
  [null, ["riscv64"]],
] as const;

interface Term {
  matchExpressions?: Json[];
  matchFields?: Json[];
}

/**
 * The pod's affinity with NFD's virtualization terms ANDed into the user's required terms (each
 * pair of terms joined, as the chart does: terms are ORed, a term's expressions ANDed).
 */
export function withVirtualizationAffinity(affinity: Json): Json {
  const nodeAffinity = (affinity.nodeAffinity ?? {}) as Json;
  const required = (nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution ?? {}) as Json;
  const user = (required.nodeSelectorTerms ?? []) as Term[];
  const ours: Term[] = VIRTUALIZATION_TERMS.map(([cpu, arches]) => ({
    matchExpressions: [
      ...(cpu ? [cpu] : []),
      { key: "kubernetes.io/arch", operator: "In", values: [...arches] },
    ],
  }));
  const terms =
    user.length === 0
      ? ours
      : ours.flatMap((o) =>
          user.map((u) => {
            const term: Term = {
              matchExpressions: [...(o.matchExpressions ?? []), ...(u.matchExpressions ?? [])],
            };
            if (u.matchFields) term.matchFields = u.matchFields;
            return term;
          }),
        );
  return {
    ...affinity,
    nodeAffinity: {
      ...nodeAffinity,
      requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms },
    },
  };
}
