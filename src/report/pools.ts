// A cluster's pools: nodes grouped by what decides their plan — architecture, container runtime,
// the confidential computing they can do, their GPUs, and whether their qemu is the distribution's
// — each with the overrides that make its nodes alike, the node affinity term that selects it (by
// kubernetes.io/arch and the labels the nodes' NFD feature files give, nfd.feature_file), and the
// preflight errors and warnings its nodes have.

import { byText } from "../compare.js";
import { UserError } from "../errors.js";
import { NFD_PREFIX } from "../kube/nfd-features.js";
import type { NodeSummary } from "../kube/summary.js";
import { teeOf } from "../shims/tees.js";
import type { NodeEntry } from "./entry.js";
import { countOf, kindsOf, type NodeKind, namesOf } from "./kinds.js";
import { type UniformOverrides, uniform } from "./uniform.js";

export interface PoolKey {
  arch: string | null;
  runtime: string | null;
  /** Confidential computing usable, as the summary names it (sevSnp, tdx, ...). */
  tee: string[];
  gpus: string[];
  distroQemu: boolean;
}

export interface Requirement {
  key: string;
  operator: "In" | "NotIn" | "DoesNotExist";
  values?: string[];
}

export interface PoolCheck {
  id: string;
  severity: string;
  message: string;
  nodes: string[];
}

export interface Pool {
  /** A name for files: x86_64-containerd-sev-snp-gpu-nvidia. */
  id: string;
  key: PoolKey;
  nodes: string[];
  /** A node affinity term that selects this pool's nodes and no other pool's. */
  selector: { matchExpressions: Requirement[] };
  checks: PoolCheck[];
  overrides: UniformOverrides;
}

/** Kubernetes' name of an architecture (kubernetes.io/arch). */
const KUBE_ARCH: Record<string, string> = { x86_64: "amd64", aarch64: "arm64" };

function keyOf(s: NodeSummary): PoolKey {
  return {
    arch: s.arch,
    runtime: s.runtime.kind,
    tee: [...s.confidential].sort(),
    gpus: [...(s.gpus ?? [])].sort(),
    distroQemu: (s.distro ?? []).includes("qemu"),
  };
}

function idOf(k: PoolKey): string {
  return [
    k.arch ?? "unknown-arch",
    k.runtime ?? "no-runtime",
    ...k.tee.map((t) => teeOf(t)?.label ?? t),
    ...k.gpus.map((g) => `gpu-${g}`),
    ...(k.distroQemu ? ["distro-qemu"] : []),
  ].join("-");
}

/** What each node of the pool failed, errors first: one line per check and message, with its nodes. */
function checksOf(nodes: readonly NodeEntry[], kinds: readonly NodeKind[]): PoolCheck[] {
  const byCheck = new Map<string, { check: Omit<PoolCheck, "nodes">; kinds: NodeKind[] }>();
  for (const kind of kinds) {
    // Summaries of an earlier kata-install say only which checks failed.
    const checks =
      kind.summary.checks ??
      kind.summary.failed.map((id) => ({ id, severity: "unknown", message: "(not published)" }));
    for (const c of checks) {
      const id = `${c.severity} ${c.id} ${c.message}`;
      const entry = byCheck.get(id) ?? { check: c, kinds: [] };
      // A kind that names one check twice names its nodes twice (namesOf keeps repeats).
      entry.kinds.push(kind);
      byCheck.set(id, entry);
    }
  }
  const rank = (s: string) => ["error", "warning"].indexOf(s) + 1 || 3;
  return [...byCheck.values()]
    .map(({ check, kinds }) => ({ ...check, nodes: namesOf(nodes, kinds) }))
    .sort((a, b) => rank(a.severity) - rank(b.severity) || byText(a.id, b.id));
}

/**
 * The term that selects one pool: its architecture always; each other dimension only where the
 * pools differ in it (a label In, or its absence). A pool whose facts name no architecture is
 * selected by not being the others' (every node has kubernetes.io/arch); one with no runtime by
 * having no runtime label (the feature file writes none).
 */
function selectorOf(key: PoolKey, all: PoolKey[]): Requirement[] {
  const out: Requirement[] = [];
  const arch = (a: string) => KUBE_ARCH[a] ?? a;
  const others = [...new Set(all.flatMap((k) => (k.arch === null ? [] : [arch(k.arch)])))].sort();
  if (key.arch) out.push({ key: "kubernetes.io/arch", operator: "In", values: [arch(key.arch)] });
  else if (others.length > 0) out.push({ key: "kubernetes.io/arch", operator: "NotIn", values: others });
  if (new Set(all.map((k) => k.runtime)).size > 1)
    out.push(
      key.runtime
        ? { key: `${NFD_PREFIX}runtime`, operator: "In", values: [key.runtime] }
        : { key: `${NFD_PREFIX}runtime`, operator: "DoesNotExist" },
    );
  const flag = (name: string, on: boolean): Requirement =>
    on
      ? { key: `${NFD_PREFIX}${name}`, operator: "In", values: ["true"] }
      : { key: `${NFD_PREFIX}${name}`, operator: "DoesNotExist" };
  for (const tee of [...new Set(all.flatMap((k) => k.tee))].sort())
    if (!all.every((k) => k.tee.includes(tee)))
      out.push(flag(`confidential.${teeOf(tee)?.label ?? tee}`, key.tee.includes(tee)));
  for (const gpu of [...new Set(all.flatMap((k) => k.gpus))].sort())
    if (!all.every((k) => k.gpus.includes(gpu))) out.push(flag(`gpu.${gpu}`, key.gpus.includes(gpu)));
  if (new Set(all.map((k) => k.distroQemu)).size > 1) out.push(flag("distro.qemu", key.distroQemu));
  return out;
}

/**
 * What a pool's name is built of: a pool names files (--emit-overrides writes overrides.<pool>.toml)
 * and TOML comments, so a value from a node's facts (its arch, a GPU's vendor) that is not a plain
 * name — a newline, a slash — is refused, naming the node, before anything is written.
 */
const NAME_PART = /^[A-Za-z0-9][A-Za-z0-9_.+-]{0,62}$/;

function checkKey(key: PoolKey, node: string): void {
  const parts: Array<[string, string | null]> = [
    ["arch", key.arch],
    ...key.gpus.map((g): [string, string] => ["a GPU's vendor", g]),
    ...key.tee.map((t): [string, string] => ["a confidential-computing feature", t]),
  ];
  for (const [what, value] of parts)
    if (value !== null && !NAME_PART.test(value))
      throw new UserError(
        `node ${node}: its facts give ${what} ${JSON.stringify(value)}, which is no name (letters, digits, _ . + -): the report names pools and their files by it; nothing was written`,
      );
}

export function poolsOf(nodes: readonly NodeEntry[], kinds: readonly NodeKind[] = kindsOf(nodes)): Pool[] {
  const groups = new Map<string, { key: PoolKey; kinds: NodeKind[] }>();
  for (const kind of kinds) {
    const key = keyOf(kind.summary);
    checkKey(key, nodes[kind.at[0] ?? 0]?.name ?? "(unnamed)");
    const id = idOf(key);
    const group = groups.get(id) ?? { key, kinds: [] };
    group.kinds.push(kind);
    groups.set(id, group);
  }
  const keys = [...groups.values()].map((g) => g.key);
  return [...groups.entries()]
    .map(([id, g]) => ({ id, g, size: countOf(g.kinds) }))
    .sort((a, b) => b.size - a.size || byText(a.id, b.id))
    .map(({ id, g }) => ({
      id,
      key: g.key,
      nodes: namesOf(nodes, g.kinds),
      selector: { matchExpressions: selectorOf(g.key, keys) },
      checks: checksOf(nodes, g.kinds),
      overrides: uniform(nodes, g.kinds),
    }));
}
