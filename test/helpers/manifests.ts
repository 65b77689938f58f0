// The objects `kata-install manifests` prints: parsed, held to Kubernetes' own schemas
// (kubernetes-models) or, for NFD's NodeFeatureRule (a CRD the models lack), to its documented
// shape, and created with the real kubectl in the in-test API server.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { DaemonSet } from "kubernetes-models/apps/v1/DaemonSet";
import { RuntimeClass } from "kubernetes-models/node.k8s.io/v1/RuntimeClass";
import { ClusterRole } from "kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole";
import { ClusterRoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding";
import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { Namespace } from "kubernetes-models/v1/Namespace";
import { Pod } from "kubernetes-models/v1/Pod";
import { ServiceAccount } from "kubernetes-models/v1/ServiceAccount";
import { expect } from "vitest";
import { parseAllDocuments } from "yaml";
import { OPERATORS } from "../../src/decide/match.js";
import { startFakeKube } from "./kube-api.js";

/** NFD's operators: kata-install's rules take them, and two of their own for versions. */
const NFD_OPERATORS: readonly string[] = OPERATORS.filter((o) => !o.startsWith("Version"));

export type Obj = { kind: string; metadata: { name: string; namespace?: string }; [key: string]: unknown };

const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  Namespace,
  ServiceAccount,
  ClusterRole,
  ClusterRoleBinding,
  ConfigMap,
  DaemonSet,
  RuntimeClass,
  Pod,
};

export function objects(yamlText: string): Obj[] {
  return parseAllDocuments(yamlText).map((doc) => {
    expect(doc.errors).toEqual([]);
    return doc.toJS() as Obj;
  });
}

/** NodeFeatureRule v1alpha1: rules with a name, labels or extendedResources, and matchFeatures. */
function validateNodeFeatureRule(rule: Obj): void {
  expect(rule.apiVersion).toBe("nfd.k8s-sigs.io/v1alpha1");
  const rules = (rule.spec as { rules: Array<Record<string, unknown>> }).rules;
  expect(rules.length).toBeGreaterThan(0);
  for (const r of rules) {
    expect(typeof r.name).toBe("string");
    expect(r.labels ?? r.extendedResources).toBeDefined();
    for (const m of r.matchFeatures as Array<{
      feature: string;
      matchExpressions: Record<string, { op: string }>;
    }>) {
      expect(m.feature).toMatch(/^[a-z]+\.[a-z_]+$/);
      for (const e of Object.values(m.matchExpressions)) expect(NFD_OPERATORS).toContain(e.op);
    }
  }
}

/** Every object passes its kind's schema. */
export function validateAll(docs: Obj[]): void {
  for (const doc of docs) {
    if (doc.kind === "NodeFeatureRule") {
      validateNodeFeatureRule(doc);
      continue;
    }
    const Model = MODELS[doc.kind];
    expect(Model, doc.kind).toBeDefined();
    expect(() =>
      new (Model as new (d: never) => { validate(): void })(doc as never).validate(),
    ).not.toThrow();
  }
}

/**
 * `kubectl apply -f` against the in-test API server, for real, after creating `namespaces` (as an
 * admin would have made them): the objects it created.
 */
export async function kubectlApply(
  yamlText: string,
  namespaces: string[] = [],
): Promise<{ output: string; created: Obj[] }> {
  const kube = await startFakeKube();
  try {
    // (Applied, not `kubectl create namespace`: that speaks protobuf, which the tests' server does not.)
    const nsFile = path.join(path.dirname(kube.kubeconfig), "namespaces.yaml");
    fs.writeFileSync(
      nsFile,
      namespaces.map((ns) => `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${ns}\n`).join("---\n"),
    );
    if (namespaces.length > 0) await kube.kubectl("apply", "--validate=false", "-f", nsFile);
    const file = path.join(path.dirname(kube.kubeconfig), "kata-install.yaml");
    fs.writeFileSync(file, yamlText);
    const output = await kube.kubectl("apply", "--validate=false", "-f", file);
    const created = [...kube.created.values()] as Obj[];
    return {
      output,
      created: created.filter((o) => !(o.kind === "Namespace" && namespaces.includes(o.metadata.name))),
    };
  } finally {
    await kube.close();
  }
}

const made: string[] = [];
export function removeValuesFiles(): void {
  for (const f of made.splice(0)) fs.rmSync(f, { recursive: true, force: true });
}

/** A values file of that name and text, in a directory of its own. */
export function valuesFile(text: string, name = "values.toml"): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-values-"));
  made.push(dir);
  fs.writeFileSync(path.join(dir, name), text);
  return path.join(dir, name);
}

type Container = {
  image: string;
  env: Array<{ name: string; value?: string }>;
  [key: string]: unknown;
};
export type PodSpec = Record<string, unknown> & { containers: Container[] };

/** The DaemonSet's pod spec, its container and its environment (the variables with a value). */
export function daemonSetOf(docs: Obj[]): {
  ds: Obj & {
    spec: Record<string, unknown> & { template: { metadata: Record<string, unknown>; spec: PodSpec } };
  };
  pod: PodSpec;
  container: Container;
  env: Record<string, string>;
} {
  const ds = docs.find((d) => d.kind === "DaemonSet") as ReturnType<typeof daemonSetOf>["ds"];
  const pod = ds.spec.template.spec;
  const container = pod.containers[0] as Container;
  const env = Object.fromEntries(
    container.env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value]),
  );
  return { ds, pod, container, env: env as Record<string, string> };
}
