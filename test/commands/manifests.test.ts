// `kata-install manifests`: valid objects (checked against Kubernetes' own schemas, and applied by
// the real kubectl to a small API server), RuntimeClasses that only select nodes with their shim,
// kata-deploy's environment, and values files and --set checked key by key.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { DaemonSet } from "kubernetes-models/apps/v1/DaemonSet";
import { RuntimeClass } from "kubernetes-models/node.k8s.io/v1/RuntimeClass";
import { ClusterRole } from "kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole";
import { ClusterRoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding";
import { Namespace } from "kubernetes-models/v1/Namespace";
import { ServiceAccount } from "kubernetes-models/v1/ServiceAccount";
import { afterAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { runCli } from "../helpers/cli.js";
import { startFakeKube } from "../helpers/kube-api.js";

type Obj = { kind: string; metadata: { name: string }; [key: string]: unknown };

const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  Namespace,
  ServiceAccount,
  ClusterRole,
  ClusterRoleBinding,
  DaemonSet,
  RuntimeClass,
};

function objects(yamlText: string): Obj[] {
  return parseAllDocuments(yamlText).map((doc) => {
    expect(doc.errors).toEqual([]);
    return doc.toJS() as Obj;
  });
}

const made: string[] = [];
afterAll(() => {
  for (const f of made) fs.rmSync(f, { recursive: true, force: true });
});
function valuesFile(text: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-values-"));
  made.push(dir);
  fs.writeFileSync(path.join(dir, "values.toml"), text);
  return path.join(dir, "values.toml");
}

describe("kata-install manifests", () => {
  const run = runCli(["manifests"]);
  const docs = objects(run.stdout);
  const find = (kind: string, name?: string) =>
    docs.find((d) => d.kind === kind && (name === undefined || d.metadata.name === name)) as Obj;

  it("prints valid objects: every one passes Kubernetes' schema for its kind", () => {
    expect(run.status).toBe(0);
    // Without a source of artifacts every node's install would stop: said, on stderr.
    expect(run.stderr).toContain("manifests: no `artifacts` set");
    expect(docs.slice(0, 4).map((d) => d.kind)).toEqual([
      "ServiceAccount",
      "ClusterRole",
      "ClusterRoleBinding",
      "DaemonSet",
    ]);
    for (const doc of docs) {
      const Model = MODELS[doc.kind];
      expect(Model, doc.kind).toBeDefined();
      expect(() =>
        new (Model as new (d: never) => { validate(): void })(doc as never).validate(),
      ).not.toThrow();
    }
  });

  it("one RuntimeClass per shim, selecting only the nodes labelled with that shim", () => {
    const qemu = find("RuntimeClass", "kata-qemu");
    expect(qemu).toMatchObject({
      handler: "kata-qemu",
      overhead: { podFixed: { memory: "160Mi", cpu: "250m" } },
      scheduling: { nodeSelector: { "katacontainers.io/shim.qemu": "true" } },
    });
    expect(find("RuntimeClass", "kata-qemu-tdx")).toMatchObject({
      overhead: { podFixed: { memory: "2048Mi" } },
    });
    const classes = docs.filter((d) => d.kind === "RuntimeClass");
    for (const rc of classes)
      expect(Object.keys((rc.scheduling as { nodeSelector: object }).nodeSelector)).toEqual([
        `katacontainers.io/shim.${(rc.handler as string).slice("kata-".length)}`,
      ]);
  });

  it("the DaemonSet: kata-deploy's environment, the host at /host, probes, time to clean up", () => {
    const ds = find("DaemonSet") as unknown as {
      spec: { template: { spec: Record<string, unknown> & { containers: Array<Record<string, unknown>> } } };
    };
    const pod = ds.spec.template.spec;
    const container = pod.containers[0] as {
      args: string[];
      env: Array<{ name: string; value?: string; valueFrom?: unknown }>;
      readinessProbe: unknown;
      volumeMounts: unknown;
    };
    expect(container.args).toEqual(["install"]);
    expect(container.env.find((e) => e.name === "NODE_NAME")?.valueFrom).toEqual({
      fieldRef: { fieldPath: "spec.nodeName" },
    });
    // Nothing pinned: every node decides its own shims.
    expect(container.env.map((e) => e.name)).not.toContain("SHIMS");
    expect(pod.terminationGracePeriodSeconds).toBe(300);
    expect(pod.serviceAccountName).toBe("kata-deploy");
    expect(container.readinessProbe).toEqual({
      httpGet: { path: "/readyz", port: "health" },
      periodSeconds: 10,
    });
    expect(container.volumeMounts).toEqual([
      { name: "host", mountPath: "/host", mountPropagation: "HostToContainer" },
    ]);
  });

  it("values from a file and --set: shims pinned, a suffix, a default RuntimeClass", () => {
    const file = valuesFile(
      'namespace = "kata-system"\ncreate_namespace = true\nmulti_install_suffix = "lts"\nnode_selector = { pool = "vm" }\n',
    );
    const set = runCli([
      "manifests",
      "-f",
      file,
      "--set",
      'shims=["qemu", "clh"]',
      "--set",
      "default_shim=qemu",
      "--set",
      "runtime_classes.create_default=true",
      "--set",
      "image=registry.example/kata-install:1.0",
      "--set",
      "node_selector.kata=yes",
    ]);
    expect(set.status, set.stderr).toBe(0);
    const out = objects(set.stdout);
    expect(out[0]).toMatchObject({ kind: "Namespace", metadata: { name: "kata-system" } });
    const ds = out.find((d) => d.kind === "DaemonSet") as unknown as {
      spec: {
        template: {
          spec: {
            nodeSelector: object;
            containers: Array<{ image: string; env: Array<{ name: string; value: string }> }>;
          };
        };
      };
    };
    const container = ds.spec.template.spec.containers[0];
    expect(container?.image).toBe("registry.example/kata-install:1.0");
    expect(ds.spec.template.spec.nodeSelector).toEqual({ pool: "vm", kata: "yes" });
    const env = Object.fromEntries(
      (container?.env ?? []).filter((e) => e.value).map((e) => [e.name, e.value]),
    );
    expect(env).toMatchObject({ SHIMS: "qemu clh", DEFAULT_SHIM: "qemu", MULTI_INSTALL_SUFFIX: "lts" });
    const kata = out.find((d) => d.kind === "RuntimeClass" && d.metadata.name === "kata");
    expect(kata).toMatchObject({ handler: "kata-qemu-lts" });
    expect(out.find((d) => d.metadata.name === "kata-clh-lts")).toBeDefined();
  });

  it("a value cannot break the YAML: it stays one string", () => {
    const evil = 'x"\n      privileged: true\n#';
    const set = runCli(["manifests", "--set", `image=${evil}`]);
    expect(set.status).toBe(0);
    const ds = objects(set.stdout).find((d) => d.kind === "DaemonSet") as unknown as {
      spec: { template: { spec: { containers: Array<{ image: string }> } } };
    };
    expect(ds.spec.template.spec.containers[0]?.image).toBe(evil);
  });

  it("bad values: every problem at once, with file, line and key; nothing printed", () => {
    const file = valuesFile(
      'namespace = "kube-system"\nimgae = "typo"\ndebug = "yes"\n[runtime_classes]\ncreat = true\n',
    );
    const bad = runCli(["manifests", "-f", file, "--set", 'shims=["qemu", "nope"]', "--set", "noequals"]);
    expect(bad.status).toBe(1);
    expect(bad.stdout).toBe("");
    expect(bad.stderr).toContain(`${file}:2: imgae: unknown key`);
    expect(bad.stderr).toContain(`${file}:3: debug: expected a boolean, got a string`);
    expect(bad.stderr).toContain(
      `${file}:5: runtime_classes.creat: unknown key (known here: create, create_default,`,
    );
    expect(bad.stderr).toContain("--set noequals: expected KEY=VALUE");
  });

  it("an unknown shim is named", () => {
    const bad = runCli(["manifests", "--set", 'shims=["qemu", "nope"]']);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('shims: unknown shim "nope" (known: clh,');
  });

  it("the real kubectl applies them (client-side dry run) against an API server", async () => {
    const kube = await startFakeKube();
    try {
      const file = path.join(path.dirname(kube.kubeconfig), "kata-install.yaml");
      fs.writeFileSync(file, run.stdout);
      const applied = await kube.kubectl("apply", "--dry-run=client", "--validate=false", "-f", file);
      expect(applied).toContain("serviceaccount/kata-deploy created (dry run)");
      expect(applied).toContain("daemonset.apps/kata-deploy created (dry run)");
      expect(applied).toContain("runtimeclass.node.k8s.io/kata-qemu created (dry run)");
    } finally {
      await kube.close();
    }
  });
});
