// `kata-install manifests`: valid objects (checked against Kubernetes' own schemas, and created by
// the real kubectl in a small API server), RuntimeClasses for the shims installed that only select
// nodes with their shim, kata-deploy's environment, a source of artifacts by default, and values
// files and --set checked key by key. (kata-deploy's own Helm values: test/manifests/kata-deploy.test.ts.)
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import {
  daemonSetOf,
  kubectlApply,
  type Obj,
  objects,
  type PodSpec,
  removeValuesFiles,
  validateAll,
  valuesFile,
} from "../helpers/manifests.js";

afterAll(removeValuesFiles);

describe("kata-install manifests", () => {
  const run = runCli(["manifests"]);
  const docs = objects(run.stdout);
  const find = (kind: string, name?: string) =>
    docs.find((d) => d.kind === kind && (name === undefined || d.metadata.name === name)) as Obj;
  const classes = (list: Obj[]) => list.filter((d) => d.kind === "RuntimeClass");

  it("prints valid objects: every one passes Kubernetes' schema for its kind", () => {
    expect(run.status).toBe(0);
    expect(run.stderr).toBe("");
    expect(docs.slice(0, 4).map((d) => d.kind)).toEqual([
      "ServiceAccount",
      "ClusterRole",
      "ClusterRoleBinding",
      "DaemonSet",
    ]);
    validateAll(docs);
  });

  it("a source of artifacts by default: the release's images, by version, so a node installs rather than stops", () => {
    const { env } = daemonSetOf(docs);
    expect(env.ARTIFACTS).toBe("registry:ghcr.io/kata-containers/kata-install-artifacts");
    expect(env.ARTIFACTS_TAG).toBe("4.1.0");
    // Overridable, and a version alone moves the tag.
    const other = runCli([
      "manifests",
      "--set",
      "kata_version=4.2.0",
      "--set",
      "artifacts=registry:mirror.example/kata",
    ]);
    expect(daemonSetOf(objects(other.stdout)).env).toMatchObject({
      ARTIFACTS: "registry:mirror.example/kata",
      ARTIFACTS_TAG: "4.2.0",
    });
    // Emptied: said, since every node's install would stop and ask.
    const none = runCli(["manifests", "--set", "artifacts="]);
    expect(daemonSetOf(objects(none.stdout)).env.ARTIFACTS).toBeUndefined();
    expect(none.stderr).toContain("manifests: `artifacts` is empty");
    // Nothing said of another registry; of the published one with a release it does not publish, one
    // line, where the value was given.
    expect(other.stderr).not.toContain("not published");
    const unpublished = runCli(["manifests", "--set", "kata_version=3.2.0"]);
    expect(unpublished.status, unpublished.stderr).toBe(0);
    expect(unpublished.stderr).toContain(
      "manifests: --set: kata_version: ghcr.io/kata-containers/kata-install-artifacts/<artifact>:3.2.0 were not published by kata-install's release workflow (it publishes Kata 4.1.0's)",
    );
    const image = runCli(["manifests", "--set", "image=ghcr.io/kata-containers/kata-install:latest"]);
    expect(image.stderr).toContain(
      "manifests: --set: image: ghcr.io/kata-containers/kata-install:latest was not published by kata-install's release workflow (it publishes ghcr.io/kata-containers/kata-install:v0.1.0 with this version)",
    );
    expect(runCli(["manifests"]).stderr).not.toContain("not published");
  });

  it("when every node decides: a RuntimeClass per shim kata-install installs unasked, each selecting its shim's nodes", () => {
    const names = classes(docs).map((d) => d.metadata.name);
    expect(names).toContain("kata-qemu");
    expect(names).not.toContain("kata-qemu-coco-dev"); // opt-in: only when asked for
    expect(names).not.toContain("kata-remote");
    expect(find("RuntimeClass", "kata-qemu")).toMatchObject({
      handler: "kata-qemu",
      // kata-deploy's chart raised qemu to 320Mi after VMMs were OOM-killed in the pod's cgroup.
      overhead: { podFixed: { memory: "320Mi", cpu: "250m" } },
      scheduling: { nodeSelector: { "katacontainers.io/shim.qemu": "true" } },
      metadata: {
        labels: { "app.kubernetes.io/managed-by": "kata-install", "kata-deploy/instance": "default" },
        annotations: { "katacontainers.io/kata-version": "4.1.0" },
      },
    });
    expect(find("RuntimeClass", "kata-clh")).toMatchObject({ overhead: { podFixed: { memory: "130Mi" } } });
    expect(find("RuntimeClass", "kata-qemu-tdx")).toMatchObject({
      overhead: { podFixed: { memory: "2048Mi", cpu: "1.0" } },
    });
    // Each selects its shim's nodes; the NVIDIA GPU shims also the GPU operator's label, as
    // kata-deploy's chart has them by default: not in confidential mode for the plain GPU shim, in it
    // (and on an SEV-SNP node) for the SNP one.
    const gpu: Record<string, Record<string, string>> = {
      "qemu-nvidia-gpu": { "nvidia.com/cc.ready.state": "false" },
      "qemu-nvidia-gpu-runtime-rs": { "nvidia.com/cc.ready.state": "false" },
      "qemu-nvidia-gpu-snp": {
        "nvidia.com/cc.ready.state": "true",
        "amd.feature.node.kubernetes.io/snp": "true",
      },
      "qemu-nvidia-gpu-tdx": {
        "nvidia.com/cc.ready.state": "true",
        "intel.feature.node.kubernetes.io/tdx": "true",
      },
    };
    expect(names).toEqual(expect.arrayContaining(["kata-qemu-nvidia-gpu", "kata-qemu-nvidia-gpu-snp"]));
    for (const rc of classes(docs)) {
      const shim = (rc.handler as string).slice("kata-".length);
      expect((rc.scheduling as { nodeSelector: object }).nodeSelector, shim).toEqual({
        ...gpu[shim],
        [`katacontainers.io/shim.${shim}`]: "true",
      });
    }
    expect(find("RuntimeClass", "kata-qemu-nvidia-gpu")).toMatchObject({
      overhead: { podFixed: { memory: "10240Mi", cpu: "1.0" } },
    });
  });

  it("every overhead as kata-deploy's chart sets it, and a shim's selector replaced or emptied by the values", () => {
    const all = objects(
      runCli([
        "manifests",
        "--set",
        'runtime_classes.shims=["qemu-nvidia-cpu", "qemu-snp-runtime-rs", "clh-azure", "qemu-coco-dev-runtime-rs", "qemu-nvidia-gpu", "qemu-nvidia-gpu-snp"]',
        "--set",
        "runtime_classes.node_selector_by_shim.qemu-nvidia-gpu={}",
        "--set",
        'runtime_classes.node_selector_by_shim.qemu-nvidia-gpu-snp={ "example.com/cc" = "on" }',
      ]).stdout,
    );
    const rcOf = (name: string) => classes(all).find((d) => d.metadata.name === name) as Obj;
    const overhead = (name: string) => (rcOf(name).overhead as { podFixed: object }).podFixed;
    expect(overhead("kata-qemu-nvidia-cpu")).toEqual({ memory: "320Mi", cpu: "250m" });
    expect(overhead("kata-qemu-snp-runtime-rs")).toEqual({ memory: "2048Mi", cpu: "1.0" });
    expect(overhead("kata-clh-azure")).toEqual({ memory: "130Mi", cpu: "250m" });
    expect(overhead("kata-qemu-coco-dev-runtime-rs")).toEqual({ memory: "320Mi", cpu: "250m" });
    const selector = (name: string) => (rcOf(name).scheduling as { nodeSelector: object }).nodeSelector;
    expect(selector("kata-qemu-nvidia-gpu")).toEqual({ "katacontainers.io/shim.qemu-nvidia-gpu": "true" });
    expect(selector("kata-qemu-nvidia-gpu-snp")).toEqual({
      "example.com/cc": "on",
      "katacontainers.io/shim.qemu-nvidia-gpu-snp": "true",
    });
  });

  it("kata-monitor, as kata-deploy's chart deploys it: the release's image, the runtime's socket of the distribution", () => {
    const run = runCli(["manifests", "--set", "monitor.enabled=true", "--set", "k8s_distribution=rke2"]);
    expect(run.status, run.stderr).toBe(0);
    const out = objects(run.stdout);
    validateAll(out);
    const monitor = out.find((d) => d.kind === "DaemonSet" && d.metadata.name === "kata-monitor") as Obj & {
      spec: { selector: object; template: { spec: PodSpec } };
    };
    expect(monitor.spec.selector).toEqual({
      matchLabels: { "app.kubernetes.io/name": "kata-monitor", "app.kubernetes.io/instance": "kata-deploy" },
    });
    const container = monitor.spec.template.spec.containers[0];
    expect(container).toMatchObject({
      image: "quay.io/kata-containers/kata-monitor:4.1.0",
      args: [
        "-listen-address=0.0.0.0:8090",
        "-log-level=info",
        "-runtime-endpoint=unix:///run/k3s/containerd/containerd.sock",
      ],
      volumeMounts: [
        { name: "containerd-sock", mountPath: "/run/k3s/containerd", readOnly: true },
        { name: "sbs", mountPath: "/run/vc/sbs/", readOnly: true },
      ],
    });
    expect(monitor.spec.template.spec.tolerations).toEqual([]);
    // Off by default, as in the chart.
    expect(docs.filter((d) => d.metadata.name === "kata-monitor")).toEqual([]);
  });

  it("K8S_DISTRIBUTION: kubeadm is the default layout, taken as it is; a value no one knows is read so too, and said", () => {
    const kubeadm = runCli(["manifests", "--set", "k8s_distribution=kubeadm"]);
    expect(kubeadm.status, kubeadm.stderr).toBe(0);
    expect(kubeadm.stderr).toBe("");
    expect(daemonSetOf(objects(kubeadm.stdout)).env.K8S_DISTRIBUTION).toBe("kubeadm");
    const other = runCli(["manifests", "--set", "k8s_distribution=openshift"]);
    expect(other.status).toBe(0);
    expect(other.stderr).toContain(
      "manifests: --set: k8s_distribution: K8S_DISTRIBUTION=openshift is not one of k8s, kubeadm, vanilla, k0s, k3s, rke2, microk8s: read as the default layout",
    );
  });

  it("setup_snapshotter and the erofs values: kata-deploy's variables on the DaemonSet; a value the nodes would refuse, refused here", () => {
    const run = runCli([
      "manifests",
      "--set",
      "setup_snapshotter=erofs",
      "--set",
      "erofs_snapshotter_mode=memory",
      "--set",
      "erofs_dmverity=true",
    ]);
    expect(run.status, run.stderr).toBe(0);
    const { env } = daemonSetOf(objects(run.stdout));
    expect([env.EXPERIMENTAL_SETUP_SNAPSHOTTER, env.EROFS_SNAPSHOTTER_MODE, env.EROFS_DMVERITY]).toEqual([
      "erofs",
      "memory",
      "dmverity",
    ]);
    expect(env.EROFS_MERGE_MODE).toBeUndefined();
    const refused = runCli([
      "manifests",
      "--set",
      "setup_snapshotter=nydus,stargz",
      "--set",
      "erofs_merge_mode=flat",
    ]);
    expect(refused.status).toBe(1);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toContain('setup_snapshotter: "stargz" is no snapshotter kata-deploy sets up');
    expect(refused.stderr).toContain(
      'erofs_merge_mode: expected merged (the default) or unmerged, got "flat"',
    );
  });

  it("only the shims being installed get one: shims = [qemu], one RuntimeClass; with debug, its -debug one too", () => {
    const one = objects(runCli(["manifests", "--set", 'shims=["qemu"]']).stdout);
    expect(classes(one).map((d) => d.metadata.name)).toEqual(["kata-qemu"]);
    const perArch = objects(
      runCli([
        "manifests",
        "--set",
        'arch.x86_64.shims=["clh"]',
        "--set",
        'arch.aarch64.shims=["qemu"]',
        "--set",
        "debug=true",
      ]).stdout,
    );
    expect(classes(perArch).map((d) => [d.metadata.name, d.handler])).toEqual([
      ["kata-clh", "kata-clh"],
      ["kata-qemu", "kata-qemu"],
      ["kata-clh-debug", "kata-clh-debug"],
      ["kata-qemu-debug", "kata-qemu-debug"],
    ]);
    // The debug class lands where the shim is (its node has the debug handler beside it).
    expect(classes(perArch)[2]?.scheduling).toEqual({
      nodeSelector: { "katacontainers.io/shim.clh": "true" },
    });
    expect(daemonSetOf(perArch).env).toMatchObject({
      SHIMS_X86_64: "clh",
      SHIMS_AARCH64: "qemu",
      DEBUG: "true",
    });
  });

  it("the DaemonSet: kata-deploy's environment, the host at /host, probes, time to clean up", () => {
    const { pod, container, env } = daemonSetOf(docs);
    expect(container.args).toEqual(["install"]);
    // The image the release workflow publishes for this version: a tag that never moves.
    expect(container).toMatchObject({
      image: "ghcr.io/kata-containers/kata-install:v0.1.0",
      imagePullPolicy: "IfNotPresent",
    });
    expect(container.env.find((e) => e.name === "NODE_NAME")).toEqual({
      name: "NODE_NAME",
      valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } },
    });
    // Nothing pinned: every node decides its own shims.
    expect(Object.keys(env)).not.toContain("SHIMS");
    // kata-deploy's chart's: 600 s to clean up (a k3s server restarts whole), no toleration (Kata
    // stays off tainted control planes), its objects' names.
    expect(pod.terminationGracePeriodSeconds).toBe(600);
    expect(pod.tolerations).toEqual([]);
    expect(pod.serviceAccountName).toBe("kata-deploy-sa");
    expect(find("ClusterRole").metadata.name).toBe("kata-deploy-role");
    expect(find("ClusterRole").rules).toContainEqual({
      apiGroups: ["apps"],
      resources: ["daemonsets"],
      verbs: ["get", "list"],
    });
    expect(find("ClusterRoleBinding")).toMatchObject({
      metadata: { name: "kata-deploy-rb" },
      roleRef: { name: "kata-deploy-role" },
      subjects: [{ kind: "ServiceAccount", name: "kata-deploy-sa", namespace: "kube-system" }],
    });
    for (const d of docs.filter((o) => o.kind !== "RuntimeClass"))
      expect((d.metadata as { labels?: object }).labels, d.kind).toMatchObject({
        "app.kubernetes.io/managed-by": "kata-install",
      });
    expect(pod.priorityClassName).toBe("system-node-critical");
    expect(container.readinessProbe).toEqual({
      httpGet: { path: "/readyz", port: "health" },
      periodSeconds: 10,
      failureThreshold: 3,
      timeoutSeconds: 3,
    });
    expect(container.startupProbe).toMatchObject({ initialDelaySeconds: 1, failureThreshold: 60 });
    // The host under /host, path by path (test/manifests/unprivileged-pod.test.ts holds the list).
    const mounts = container.volumeMounts as Array<{ mountPath: string }>;
    expect(mounts[0]).toEqual({ name: "tmp", mountPath: "/tmp" });
    for (const m of mounts.slice(1)) expect(m.mountPath).toMatch(/^\/host\/[a-z]/);
    expect(env.HOST_ROOT).toBe("/host");
    expect(env.HOST_MOUNTS?.split(":")).toContain("/etc/containerd");
  });

  it("startup taints: the DaemonSet tolerates each one it does not tolerate yet, as its pods lift them", () => {
    const run = runCli([
      "manifests",
      "--set",
      'startup_taints=["kata.io/not-ready:NoSchedule", "other"]',
      "--set",
      'tolerations=[{ key = "other", operator = "Exists" }]',
    ]);
    expect(run.status, run.stderr).toBe(0);
    const { pod, env } = daemonSetOf(objects(run.stdout));
    expect(env.STARTUP_TAINTS).toBe("kata.io/not-ready:NoSchedule,other");
    expect(pod.tolerations).toEqual([
      { key: "other", operator: "Exists" },
      { key: "kata.io/not-ready", operator: "Exists", effect: "NoSchedule" },
    ]);
  });

  it("values from a file and --set: shims pinned, a suffix that names every object and label, the pod's settings", () => {
    const file = valuesFile(
      [
        'namespace = "kata-system"',
        "create_namespace = true",
        'multi_install_suffix = "lts"',
        'node_selector = { pool = "vm" }',
        'image_pull_secrets = [{ name = "regcred" }]',
        'pod_labels = { team = "platform" }',
        'pod_annotations = { "example.com/owner" = "infra" }',
        'resources = { requests = { cpu = "50m", memory = "64Mi" } }',
        'update_strategy = { type = "OnDelete" }',
        "[probes.liveness]",
        "enabled = false",
        "[runtime_classes]",
        "create_default = true",
        'labels = { tier = "kata" }',
        'annotations = { "example.com/doc" = "https://example.com/kata" }',
        "overhead_enabled_by_shim = { clh = false }",
        'node_selector_by_shim = { qemu = { "example.com/vm" = "ok" } }',
        "",
      ].join("\n"),
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
      "image=registry.example/kata-install:1.0",
      "--set",
      "node_selector.kata=yes",
    ]);
    expect(set.status, set.stderr).toBe(0);
    const out = objects(set.stdout);
    validateAll(out);
    expect(out[0]).toMatchObject({ kind: "Namespace", metadata: { name: "kata-system" } });
    const { ds, pod, container, env } = daemonSetOf(out);
    expect(ds.metadata.name).toBe("kata-deploy-lts"); // two installs, two DaemonSets
    // And, as kata-deploy's chart names a second install's, its ServiceAccount and RBAC.
    expect(
      out
        .filter((d) => d.kind.startsWith("Cluster") || d.kind === "ServiceAccount")
        .map((d) => d.metadata.name),
    ).toEqual(["kata-deploy-sa-lts", "kata-deploy-role-lts", "kata-deploy-rb-lts"]);
    expect(pod.serviceAccountName).toBe("kata-deploy-sa-lts");
    expect(container.image).toBe("registry.example/kata-install:1.0");
    expect(pod.nodeSelector).toEqual({ pool: "vm", kata: "yes" });
    expect(pod.imagePullSecrets).toEqual([{ name: "regcred" }]);
    expect(ds.spec.template.metadata).toEqual({
      labels: { team: "platform", name: "kata-deploy-lts" },
      annotations: { "example.com/owner": "infra" },
    });
    expect(container.resources).toEqual({ requests: { cpu: "50m", memory: "64Mi" } });
    expect(container.livenessProbe).toBeUndefined();
    expect(ds.spec.updateStrategy).toEqual({ type: "OnDelete" });
    expect(env).toMatchObject({
      SHIMS: "qemu clh",
      DEFAULT_SHIM: "qemu",
      MULTI_INSTALL_SUFFIX: "lts",
      DAEMONSET_NAME: "kata-deploy-lts",
    });
    const rcs = classes(out);
    expect(rcs.map((d) => d.metadata.name)).toEqual(["kata-clh-lts", "kata-qemu-lts"]);
    expect(rcs[1]).toMatchObject({
      handler: "kata-qemu-lts",
      metadata: {
        labels: { tier: "kata", "kata-deploy/instance": "lts" },
        annotations: { "example.com/doc": "https://example.com/kata" },
      },
      scheduling: { nodeSelector: { "example.com/vm": "ok", "katacontainers.io/shim.qemu-lts": "true" } },
    });
    expect(rcs[0]?.overhead).toBeUndefined();
    // No "kata" RuntimeClass with a suffix, as kata-deploy's chart: said why.
    expect(set.stderr).toContain(
      'runtime_classes.create_default: no "kata" RuntimeClass with multi_install_suffix',
    );
  });

  it("the default RuntimeClass, as kata-deploy's chart makes it: kata, handler kata-<default shim>", () => {
    const out = objects(
      runCli([
        "manifests",
        "--set",
        'shims=["qemu", "clh"]',
        "--set",
        "default_shim=clh",
        "--set",
        "runtime_classes.create_default=true",
      ]).stdout,
    );
    expect(classes(out).find((d) => d.metadata.name === "kata")).toMatchObject({
      handler: "kata-clh",
      scheduling: { nodeSelector: { "katacontainers.io/shim.clh": "true" } },
    });
  });

  it("overrides for every node: a ConfigMap the DaemonSet mounts, checked as the nodes check it", () => {
    const file = valuesFile('[overrides.config.qemu]\n"hypervisor.qemu.default_memory" = 4096\n');
    const out = objects(runCli(["manifests", "-f", file]).stdout);
    validateAll(out);
    const cm = out.find((d) => d.kind === "ConfigMap") as Obj & { data: Record<string, string> };
    expect(cm.metadata.name).toBe("kata-deploy-overrides");
    expect(cm.data["kata-install.toml"]).toContain('"hypervisor.qemu.default_memory" = 4096');
    const { ds, env, container } = daemonSetOf(out);
    expect(env.KATA_INSTALL_OVERRIDES).toBe("/etc/kata-install/kata-install.toml");
    expect(container.volumeMounts).toContainEqual({
      name: "overrides",
      mountPath: "/etc/kata-install",
      readOnly: true,
    });
    // A change of the file rolls the pods.
    expect((ds.spec.template.metadata.annotations as Record<string, string>)["checksum/overrides"]).toMatch(
      /^[0-9a-f]{64}$/,
    );
    const bad = runCli([
      "manifests",
      "-f",
      valuesFile('[overrides.config.qemu]\n"hypervisor.qemu.shared_fs" = "virtio-fss"\n'),
    ]);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain(
      'overrides.config.qemu."hypervisor.qemu.shared_fs": "virtio-fss" is not one of',
    );
  });

  it("a custom runtime of the overrides gets its RuntimeClass on its base shim's nodes, with the base's overhead", () => {
    const file = valuesFile(
      [
        "[overrides.custom_runtimes.kata-qemu-lowmem]",
        'base = "qemu"',
        "[overrides.custom_runtimes.kata-qemu-lowmem.config]",
        '"hypervisor.qemu.default_memory" = 1024',
        "[runtime_classes.custom.kata-qemu-lowmem]",
        'metadata = { labels = { tier = "small" } }',
        'overhead = { podFixed = { memory = "200Mi" } }',
        "",
      ].join("\n"),
    );
    const out = objects(runCli(["manifests", "-f", file, "--set", 'shims=["qemu"]']).stdout);
    validateAll(out);
    expect(classes(out).find((d) => d.metadata.name === "kata-qemu-lowmem")).toMatchObject({
      handler: "kata-qemu-lowmem",
      metadata: { labels: { tier: "small" } },
      overhead: { podFixed: { memory: "200Mi", cpu: "250m" } },
      scheduling: { nodeSelector: { "katacontainers.io/shim.qemu": "true" } },
    });
    const stray = runCli(["manifests", "--set", "runtime_classes.custom.kata-x={}"]);
    expect(stray.stderr).toContain("runtime_classes.custom.kata-x: no such custom runtime");
  });

  it("NFD: the NodeFeatureRule, one TEE key per confidential pod, TEE selectors, the virtualization affinity", () => {
    const out = objects(
      runCli([
        "manifests",
        "--set",
        'shims=["qemu", "qemu-snp", "qemu-tdx"]',
        "--set",
        "nfd.node_feature_rules=true",
        "--set",
        "nfd.virtualization_affinity=true",
        "--set",
        "runtime_classes.tee_node_selectors=true",
      ]).stdout,
    );
    validateAll(out);
    const rule = out.find((d) => d.kind === "NodeFeatureRule") as Obj & {
      spec: { rules: Array<{ name: string }> };
    };
    expect(rule.metadata.name).toBe("kata-tee-keys");
    expect(rule.spec.rules.map((r) => r.name)).toEqual(["amd.sev-snp", "intel.tdx", "nvidia.gpu"]);
    const rc = (name: string) => classes(out).find((d) => d.metadata.name === name) as Obj;
    expect(rc("kata-qemu-snp")).toMatchObject({
      overhead: { podFixed: { memory: "2048Mi", cpu: "1.0", "sev-snp.amd.com/esids": "1" } },
      scheduling: {
        nodeSelector: {
          "katacontainers.io/shim.qemu-snp": "true",
          "amd.feature.node.kubernetes.io/snp": "true",
        },
      },
    });
    expect(rc("kata-qemu-tdx")).toMatchObject({ overhead: { podFixed: { "tdx.intel.com/keys": "1" } } });
    expect(rc("kata-qemu").scheduling).toEqual({ nodeSelector: { "katacontainers.io/shim.qemu": "true" } });
    const terms = (
      daemonSetOf(out).pod.affinity as {
        nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: unknown[] } };
      }
    ).nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms;
    // As kata-deploy's chart has them: x86_64 by VMX or SVM, arm64 by either name, s390x, ppc64le, riscv64.
    const arch = (values: string[]) => ({ key: "kubernetes.io/arch", operator: "In", values });
    const cpuid = (flag: string) => ({
      key: `feature.node.kubernetes.io/cpu-cpuid.${flag}`,
      operator: "In",
      values: ["true"],
    });
    expect(terms).toEqual([
      { matchExpressions: [cpuid("VMX"), arch(["amd64"])] },
      { matchExpressions: [cpuid("SVM"), arch(["amd64"])] },
      { matchExpressions: [arch(["arm64", "aarch64"])] },
      { matchExpressions: [arch(["s390x"])] },
      { matchExpressions: [arch(["ppc64le"])] },
      { matchExpressions: [arch(["riscv64"])] },
    ]);
  });

  it("a verification pod, applied in its namespace", () => {
    const pod =
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: kata-check\nspec:\n  runtimeClassName: kata-qemu\n  restartPolicy: Never\n  containers:\n    - name: c\n      image: busybox\n      command: ["true"]\n';
    const file = valuesFile(`[verification]\npod = '''\n${pod}'''\nnamespace = "kata-tests"\n`);
    const out = objects(runCli(["manifests", "-f", file]).stdout);
    validateAll(out);
    expect(out.at(-1)).toMatchObject({
      kind: "Pod",
      metadata: { name: "kata-check", namespace: "kata-tests" },
      spec: { runtimeClassName: "kata-qemu" },
    });
    const bad = runCli(["manifests", "--set", "verification.pod=kind: Deployment"]);
    expect(bad.stderr).toContain("verification.pod: expected one Pod with metadata.name");
  });

  it("-o json: the same objects as one List, which kubectl applies too", async () => {
    const json = runCli(["manifests", "-o", "json", "--set", 'shims=["qemu"]']);
    expect(json.status, json.stderr).toBe(0);
    const list = JSON.parse(json.stdout) as { kind: string; items: Obj[] };
    expect(list.kind).toBe("List");
    expect(list.items).toEqual(objects(runCli(["manifests", "--set", 'shims=["qemu"]']).stdout));
    const { created } = await kubectlApply(json.stdout);
    expect(created.map((o) => o.kind)).toEqual(list.items.map((o) => o.kind));
    expect(runCli(["manifests", "-o", "xml"]).stderr).toContain("-o xml: expected yaml or json");
  });

  it("a value cannot break the YAML: it stays one string", () => {
    const evil = 'x"\n      privileged: true\n#';
    const set = runCli(["manifests", "--set", `priority_class_name=${evil}`]);
    expect(set.status, set.stderr).toBe(0);
    const ds = objects(set.stdout).find((o) => o.kind === "DaemonSet") as unknown as {
      spec: { template: { spec: { priorityClassName?: string } } };
    };
    expect(ds.spec.template.spec.priorityClassName).toBe(evil);
  });

  it("an image that is no image reference is refused by its key, as every node would fail to pull it", () => {
    for (const [set, shown] of [
      ["image=quay.io/x\n      privileged: true", '"quay.io/x\\n      privileged: true"'],
      ["image=Quay.io/Kata/Install:v1", '"Quay.io/Kata/Install:v1"'],
      ["kata_version=4.1.0 rc", '"4.1.0 rc"'],
      ["artifacts=registry:quay.io/kata containers", '"quay.io/kata containers"'],
    ] as const) {
      const run = runCli(["manifests", "--set", set.replace("\\n", "\n")]);
      expect(run.status, set).toBe(1);
      expect(run.stdout).toBe("");
      expect(run.stderr).toContain(`--set: ${set.split("=")[0]}: `);
      expect(run.stderr).toContain(`${shown} is not an image`);
    }
    // A digest, a port, a tag: all references.
    const good = runCli([
      "manifests",
      "--set",
      `image=registry.local:5000/kata/install:v1@sha256:${"a".repeat(64)}`,
    ]);
    expect(good.status, good.stderr).toBe(0);
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
      `${file}:5: runtime_classes.creat: unknown key (known here: annotations, create,`,
    );
    expect(bad.stderr).toContain("--set noequals: expected KEY=VALUE");
    // What the API server or the pod would refuse, refused here, each named.
    const objects_ = runCli([
      "manifests",
      ...["--set", "health_port=99999", "--set", "namespace=Bad_NS", "--set", "image="],
      ...["--set", "termination_grace_period_seconds=-5"],
    ]);
    expect(objects_.status).toBe(1);
    expect(objects_.stdout).toBe("");
    for (const line of [
      'namespace: "Bad_NS" is no Kubernetes name',
      "image: empty: the DaemonSet's pods would have no image to run",
      "health_port: 99999 is not an integer from 1 to 65535",
      "termination_grace_period_seconds: -5 is not an integer from 0 to 2147483647",
    ])
      expect(objects_.stderr).toContain(line);
    // A probe or an update strategy the API server would refuse; each blamed where it was given.
    const probes = valuesFile('name = "kata-deploy"\n\n[probes.liveness]\ntimeout_seconds = 0\n');
    const refused = runCli([
      "manifests",
      "-f",
      probes,
      ...["--set", "probes.startup.period_seconds=-5", "--set", 'update_strategy={ type = "Bogus" }'],
      ...["--set", "namespace=Bad_NS"],
    ]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toBe(
      [
        "kata-install: the manifests' values are invalid:",
        `  ${probes}:4: probes.liveness.timeout_seconds: 0 is not an integer from 1 to 2147483647`,
        '  --set: namespace: "Bad_NS" is no Kubernetes name: up to 63 lower-case letters, digits and "-", starting and ending with a letter or digit',
        "  --set: probes.startup.period_seconds: -5 is not an integer from 1 to 2147483647",
        '  --set: update_strategy.type: "Bogus": expected "RollingUpdate" or "OnDelete"',
        "",
      ].join("\n"),
    );
    const strategies = runCli([
      "manifests",
      "--set",
      'update_strategy={ type = "OnDelete", rollingUpdate = { maxUnavailable = 1 } }',
    ]);
    expect(strategies.stderr).toContain(
      'update_strategy.rollingUpdate: only with type "RollingUpdate" (OnDelete replaces a pod when you delete it)',
    );
    expect(
      runCli([
        "manifests",
        "--set",
        'update_strategy={ rollingUpdate = { maxUnavailable = "half", surge = 1 } }',
      ]).stderr,
    ).toMatch(
      /update_strategy\.rollingUpdate\.maxUnavailable: "half": expected a number of pods \(0 or more\) or a percentage \("10%"\)\n.*update_strategy\.rollingUpdate\.surge: unknown field/,
    );
    // Each one the API server takes is taken.
    for (const strategy of [
      '{ type = "OnDelete" }',
      '{ rollingUpdate = { maxUnavailable = "25%", maxSurge = 0 } }',
    ]) {
      const ok = runCli(["manifests", "--set", `update_strategy=${strategy}`]);
      expect(ok.status, ok.stderr).toBe(0);
      validateAll(objects(ok.stdout));
    }
  });

  it("saved plans for every node: the admin's ConfigMap mounted at /plans, each node applying its own", () => {
    const out = objects(runCli(["manifests", "--set", "plans.config_map=node-plans"]).stdout);
    validateAll(out);
    const { ds, env, container } = daemonSetOf(out);
    // The kubelet expands $(NODE_NAME) only from a variable defined before it.
    expect(env.KATA_INSTALL_PLAN).toBe("/plans/$(NODE_NAME).json");
    const names = (container.env as Array<{ name: string }>).map((e) => e.name);
    expect(names.indexOf("NODE_NAME")).toBeLessThan(names.indexOf("KATA_INSTALL_PLAN"));
    expect(container.volumeMounts).toContainEqual({ name: "plans", mountPath: "/plans", readOnly: true });
    expect(ds.spec.template.spec.volumes).toContainEqual({
      name: "plans",
      configMap: { name: "node-plans", optional: true },
    });
    // The ConfigMap is the admin's: kata-install makes none.
    expect(out.filter((d) => d.kind === "ConfigMap")).toEqual([]);
    // Without it, no plan is asked for.
    expect(daemonSetOf(docs).env.KATA_INSTALL_PLAN).toBeUndefined();
    const bad = runCli(["manifests", "--set", "plans.config_map=Node_Plans"]);
    expect(bad.stderr).toContain(
      '--set: plans.config_map: "Node_Plans" is no ConfigMap name: up to 253 lower-case letters, digits, "-" and ".", starting and ending with a letter or digit',
    );
  });

  it("what the nodes would refuse is refused here: an unknown shim, a bad mapping, a suffix that collides", () => {
    const bad = runCli([
      "manifests",
      "--set",
      'shims=["qemu", "nope"]',
      "--set",
      "arch.x86_64.pull_type_mapping=qemu:sideways",
      "--set",
      "multi_install_suffix=tdx",
    ]);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('shims: unknown shim "nope" (known: clh,');
    expect(bad.stderr).toContain(
      'arch.x86_64.pull_type_mapping: "sideways" for qemu: expected one of guest-pull, default',
    );
    expect(bad.stderr).toContain(
      'multi_install_suffix: "tdx" makes qemu\'s handler kata-qemu-tdx, which is the handler of the shim qemu-tdx',
    );
  });

  it("the real kubectl creates every object in an API server, the namespace first", async () => {
    const withNamespace = runCli([
      "manifests",
      "--set",
      "namespace=kata-system",
      "--set",
      "create_namespace=true",
      "--set",
      "nfd.node_feature_rules=true",
      "-f",
      valuesFile('[overrides]\nshims = ["qemu"]\n'),
    ]);
    const all = objects(withNamespace.stdout);
    const { output, created } = await kubectlApply(withNamespace.stdout);
    expect(output).toContain("namespace/kata-system created");
    expect(output).toContain("daemonset.apps/kata-deploy created");
    expect(output).toContain("nodefeaturerule.nfd.k8s-sigs.io/kata-tee-keys created");
    expect(created.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual(
      all.map((o) => `${o.kind}/${o.metadata.name}`).sort(),
    );
    // The overrides pinned qemu: one RuntimeClass.
    expect(created.filter((o) => o.kind === "RuntimeClass").map((o) => o.metadata.name)).toEqual([
      "kata-qemu",
    ]);
  });
});
