// `kata-install manifests -f values.yaml` with kata-deploy's own Helm values (4.1): every key is
// carried over to the same effect, or refused with its line and why. The chart's values files are
// the tests' own copies (test/fixtures/kata-deploy/); each carried key of every-key.values.yaml is
// checked for its effect on the objects, which are held to Kubernetes' schemas and created by kubectl.
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { CHART, type Spec } from "../../src/manifests/kata-deploy/chart.js";
import { runCli } from "../helpers/cli.js";
import {
  daemonSetOf,
  kubectlApply,
  type Obj,
  objects,
  removeValuesFiles,
  validateAll,
  valuesFile,
} from "../helpers/manifests.js";
import { readmeFields } from "../helpers/schema-fields.js";

afterAll(removeValuesFiles);
const FIXTURES = path.resolve("test/fixtures/kata-deploy");
const fixture = (name: string) => path.join(FIXTURES, name);
/** A chart example file with its job mode turned into the DaemonSet, as its README tells a user to. */
const asDaemonSet = (name: string) =>
  valuesFile(
    fs.readFileSync(fixture(name), "utf8").replace("deploymentMode: job", "deploymentMode: daemonset"),
    name,
  );

/** `manifests -f FILE`: the objects, and what stderr said of each key not carried. */
/** `manifests -f file`, its nydus choice made (an image said to carry it) unless `more` makes it. */
function manifests(file: string, ...more: string[]) {
  const choice = more.some((m) => m.startsWith("setup_snapshotter=") || m.startsWith("nydus_in_image="))
    ? []
    : ["--set", "nydus_in_image=true"];
  const run = runCli(["manifests", "-f", file, ...choice, ...more]);
  return { ...run, docs: run.status === 0 ? objects(run.stdout) : [] };
}

/** The account of each key: key → [status, detail]. */
function explained(file: string): Map<string, [string, string]> {
  const run = runCli(["manifests", "-f", file, "--explain-values"]);
  expect(run.status, run.stderr).toBe(0);
  return new Map(
    run.stdout
      .trim()
      .split("\n")
      .map((line) => {
        const [, key, status, detail] = line.split("\t") as [string, string, string, string];
        return [key, [status, detail]];
      }),
  );
}

type MonitorView = Obj & { container: { image: string; args: string[]; [key: string]: unknown } };
type View = ReturnType<typeof daemonSetOf> & {
  docs: Obj[];
  rc: (name: string) => Obj | undefined;
  monitor: () => MonitorView | undefined;
};

describe("kata-deploy's values, key by key (every-key.values.yaml)", () => {
  const run = manifests(fixture("every-key.values.yaml"));
  const view: View = {
    ...daemonSetOf(run.docs),
    docs: run.docs,
    rc: (name) => run.docs.find((d) => d.kind === "RuntimeClass" && d.metadata.name === name),
    monitor: () => {
      const ds = run.docs.find((d) => d.kind === "DaemonSet" && d.metadata.name === "kata-monitor") as
        | (Obj & { spec: { template: { spec: { containers: MonitorView["container"][] } } } })
        | undefined;
      return ds && { ...ds, container: ds.spec.template.spec.containers[0] as MonitorView["container"] };
    },
  };
  /** The effect each carried key must have. */
  const EFFECTS: Record<string, (v: View) => void> = {
    deploymentMode: (v) => expect(v.ds.kind).toBe("DaemonSet"),
    imagePullPolicy: (v) => expect(v.container.imagePullPolicy).toBe("IfNotPresent"),
    imagePullSecrets: (v) => expect(v.pod.imagePullSecrets).toEqual([{ name: "regcred" }]),
    "image.tag": (v) => expect(v.env.ARTIFACTS_TAG).toBe("4.0.1"),
    k8sDistribution: (v) => expect(v.env.K8S_DISTRIBUTION).toBe("k3s"),
    "monitor.enabled": (v) => expect(v.monitor()?.metadata).toMatchObject({ name: "kata-monitor" }),
    "monitor.image.reference": (v) =>
      expect(v.monitor()?.container.image).toBe("registry.example/kata-monitor:4.0.1"),
    "monitor.image.tag": (v) => expect(v.monitor()?.container.image).toMatch(/:4\.0\.1$/),
    "monitor.listenAddress": (v) =>
      expect(v.monitor()?.container.args).toContain("-listen-address=0.0.0.0:9090"),
    "monitor.runtimeEndpoint": (v) => {
      expect(v.monitor()?.container.args).toContain(
        "-runtime-endpoint=unix:///run/k3s/containerd/containerd.sock",
      );
      expect(v.monitor()?.container.volumeMounts).toContainEqual({
        name: "containerd-sock",
        mountPath: "/run/k3s/containerd",
        readOnly: true,
      });
    },
    "monitor.logLevel": (v) => expect(v.monitor()?.container.args).toContain("-log-level=warn"),
    "monitor.port": (v) => expect(v.monitor()?.container.ports).toEqual([{ containerPort: 9090 }]),
    // Maps merge over the chart's defaults, as Helm coalesces them: the file's keys win, the rest stay.
    "monitor.securityContext": (v) =>
      expect(v.monitor()?.container.securityContext).toEqual({
        privileged: false,
        runAsUser: 0,
        runAsGroup: 0,
      }),
    "monitor.resources": (v) =>
      expect(v.monitor()?.container.resources).toEqual({
        limits: { cpu: "200m", memory: "300Mi" },
        requests: { cpu: "100m", memory: "300Mi" },
      }),
    "containerd.configFileName": (v) => expect(v.env.CONTAINERD_CONFIG_FILE_NAME).toBe("config-v3.toml"),
    nodeSelector: (v) => expect(v.pod.nodeSelector).toEqual({ kata: "yes" }),
    // With the startup taint's toleration after it: the pods that lift it must land first.
    tolerations: (v) =>
      expect(v.pod.tolerations).toEqual([
        { key: "dedicated", operator: "Equal", value: "kata", effect: "NoSchedule" },
        { key: "katacontainers.io/kata-runtime", operator: "Exists", effect: "NoSchedule" },
      ]),
    startupTaints: (v) => expect(v.env.STARTUP_TAINTS).toBe("katacontainers.io/kata-runtime:NoSchedule"),
    podLabels: (v) =>
      expect(v.ds.spec.template.metadata.labels).toEqual({ team: "platform", name: "kata-deploy" }),
    podAnnotations: (v) =>
      expect(v.ds.spec.template.metadata.annotations).toMatchObject({ "example.com/owner": "infra" }),
    affinity: (v) =>
      // The user's term, ANDed with NFD's virtualization terms (node-feature-discovery.enabled).
      expect(JSON.stringify(v.pod.affinity)).toContain('{"key":"pool","operator":"In","values":["vm"]}'),
    priorityClassName: (v) => expect(v.pod.priorityClassName).toBe("system-cluster-critical"),
    updateStrategy: (v) =>
      expect(v.ds.spec.updateStrategy).toEqual({
        type: "RollingUpdate",
        rollingUpdate: { maxUnavailable: "25%" },
      }),
    resources: (v) => expect(v.container.resources).toEqual({ requests: { cpu: "50m", memory: "64Mi" } }),
    debug: (v) => {
      expect(v.env.DEBUG).toBe("true");
      expect(v.rc("kata-qemu-debug")?.handler).toBe("kata-qemu-debug");
    },
    "health.port": (v) => {
      expect(v.env.HEALTH_PORT).toBe("8091");
      expect(v.container.ports).toEqual([{ name: "health", containerPort: 8091 }]);
    },
    "health.startupProbe.enabled": (v) => expect(v.container.startupProbe).toBeDefined(),
    "health.startupProbe.initialDelaySeconds": (v) =>
      expect(v.container.startupProbe).toMatchObject({ initialDelaySeconds: 5 }),
    "health.startupProbe.periodSeconds": (v) =>
      expect(v.container.startupProbe).toMatchObject({ periodSeconds: 20 }),
    "health.startupProbe.failureThreshold": (v) =>
      expect(v.container.startupProbe).toMatchObject({ failureThreshold: 90 }),
    "health.startupProbe.timeoutSeconds": (v) =>
      expect(v.container.startupProbe).toMatchObject({ timeoutSeconds: 4 }),
    // Turned off: its other settings go with it, as in the chart.
    "health.livenessProbe.enabled": (v) => expect(v.container.livenessProbe).toBeUndefined(),
    "health.livenessProbe.periodSeconds": (v) => expect(v.container.livenessProbe).toBeUndefined(),
    "health.livenessProbe.failureThreshold": (v) => expect(v.container.livenessProbe).toBeUndefined(),
    "health.livenessProbe.timeoutSeconds": (v) => expect(v.container.livenessProbe).toBeUndefined(),
    "health.readinessProbe.enabled": (v) => expect(v.container.readinessProbe).toBeDefined(),
    "health.readinessProbe.periodSeconds": (v) =>
      expect(v.container.readinessProbe).toMatchObject({ periodSeconds: 11 }),
    "health.readinessProbe.failureThreshold": (v) =>
      expect(v.container.readinessProbe).toMatchObject({ failureThreshold: 5 }),
    "health.readinessProbe.timeoutSeconds": (v) =>
      expect(v.container.readinessProbe).toMatchObject({ timeoutSeconds: 6 }),
    "shims.disableAll": (v) => expect(v.env.SHIMS_S390X).toBeUndefined(),
    "shims.qemu.enabled": (v) => expect(v.env.SHIMS_X86_64?.split(" ")).toContain("qemu"),
    "shims.qemu.supportedArches": (v) => expect(v.env.SHIMS_AARCH64).toBe("qemu"),
    "shims.qemu.allowedHypervisorAnnotations": (v) =>
      expect(v.env.ALLOWED_HYPERVISOR_ANNOTATIONS_X86_64).toBe("qemu:default_vcpus,default_memory"),
    "shims.qemu.dropIn": (v) => {
      const cm = v.docs.find((d) => d.kind === "ConfigMap") as Obj & { data: Record<string, string> };
      expect(cm.data["kata-install.toml"]).toContain(
        '[config.qemu]\n"hypervisor.qemu.default_memory" = 4096',
      );
    },
    "shims.qemu.containerd.snapshotter": (v) =>
      expect(v.env.SNAPSHOTTER_HANDLER_MAPPING_X86_64).toBe("qemu:overlayfs"),
    "shims.qemu.containerd.forceGuestPull": (v) =>
      expect(v.env.EXPERIMENTAL_FORCE_GUEST_PULL_X86_64?.split(",")).not.toContain("qemu"),
    "shims.qemu.crio.guestPull": (v) => expect(v.env.PULL_TYPE_MAPPING_AARCH64).toBe("qemu:guest-pull"),
    "shims.qemu.agent.httpsProxy": (v) =>
      expect(v.env.AGENT_HTTPS_PROXY).toBe("qemu=http://proxy.example:3128"),
    "shims.qemu.agent.noProxy": (v) => expect(v.env.AGENT_NO_PROXY).toBe("qemu=10.0.0.0/8"),
    "shims.qemu.runtimeClass.nodeSelector": (v) =>
      expect(v.rc("kata-qemu")?.scheduling).toEqual({
        nodeSelector: { "example.com/vm": "ok", "katacontainers.io/shim.qemu": "true" },
      }),
    "shims.qemu.runtimeClass.overheadEnabled": (v) => expect(v.rc("kata-qemu")?.overhead).toBeDefined(),
    "shims.qemu.runtimeClass.overhead.memory": (v) =>
      expect(v.rc("kata-qemu")?.overhead).toEqual({ podFixed: { memory: "512Mi", cpu: "250m" } }),
    "shims.clh.enabled": (v) => expect(v.env.SHIMS_X86_64).toBe("clh qemu"),
    "shims.clh.supportedArches": (v) => expect(v.env.SHIMS_AARCH64?.split(" ")).not.toContain("clh"),
    "shims.clh.containerd.forceGuestPull": (v) => {
      expect(v.env.EXPERIMENTAL_FORCE_GUEST_PULL_X86_64).toBe("clh");
      expect(v.env.PULL_TYPE_MAPPING_X86_64).toBe("clh:guest-pull,qemu:guest-pull");
    },
    "shims.clh.runtimeClass.overheadEnabled": (v) => expect(v.rc("kata-clh")?.overhead).toBeUndefined(),
    "defaultShim.amd64": (v) => expect(v.env.DEFAULT_SHIM_X86_64).toBe("clh"),
    "defaultShim.arm64": (v) => expect(v.env.DEFAULT_SHIM_AARCH64).toBe("qemu"),
    "runtimeClasses.enabled": (v) => expect(v.docs.filter((d) => d.kind === "RuntimeClass")).toHaveLength(5),
    "runtimeClasses.createDefault": (v) => expect(v.rc("kata-default")).toBeDefined(),
    "runtimeClasses.defaultName": (v) => expect(v.rc("kata-default")?.handler).toBe("kata-clh"),
    "runtimeClasses.overheadEnabled": (v) => expect(v.rc("kata-qemu-debug")?.overhead).toBeDefined(),
    "env.installationPrefix": (v) => expect(v.env.INSTALLATION_PREFIX).toBe("/usr/local"),
    "env.multiInstallSuffix": (v) => {
      expect(v.env.MULTI_INSTALL_SUFFIX).toBeUndefined(); // empty: the default install
      expect(v.rc("kata-qemu")?.metadata).toMatchObject({ labels: { "kata-deploy/instance": "default" } });
    },
    "node-feature-discovery.enabled": (v) => {
      expect(JSON.stringify(v.pod.affinity)).toContain("feature.node.kubernetes.io/cpu-cpuid.SVM");
      expect(v.rc("kata-qemu")?.scheduling).not.toHaveProperty(
        "nodeSelector.amd\\.feature\\.node\\.kubernetes\\.io/snp",
      );
    },
    "snapshotter.setup": (v) => expect(v.env.EXPERIMENTAL_SETUP_SNAPSHOTTER).toBe("erofs"),
    "snapshotter.erofsMergeMode": (v) => expect(v.env.EROFS_MERGE_MODE).toBe("unmerged"),
    "snapshotter.erofsSnapshotterMode": (v) => expect(v.env.EROFS_SNAPSHOTTER_MODE).toBe("memory"),
    "snapshotter.erofsDmverity": (v) => expect(v.env.EROFS_DMVERITY).toBe("dmverity"),
    "nodeFeatureRules.create": (v) => expect(v.docs.find((d) => d.kind === "NodeFeatureRule")).toBeDefined(),
    "verification.namespace": (v) =>
      expect(v.docs.find((d) => d.kind === "Pod")?.metadata).toEqual({
        name: "kata-check",
        namespace: "kata-tests",
      }),
    "verification.pod": (v) =>
      expect(v.docs.find((d) => d.kind === "Pod")).toMatchObject({ spec: { runtimeClassName: "kata-qemu" } }),
  };

  it("reads, with nothing refused, and the objects are valid", () => {
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toContain("72 key(s) carried, 0 not carried");
    validateAll(run.docs);
  });

  it("every carried key has its effect", () => {
    const accounts = explained(fixture("every-key.values.yaml"));
    const carried = [...accounts].filter(([, [status]]) => status === "carried").map(([key]) => key);
    expect(carried.sort()).toEqual(Object.keys(EFFECTS).sort());
    for (const [key, effect] of Object.entries(EFFECTS)) {
      try {
        effect(view);
      } catch (error) {
        throw new Error(`${key}: ${(error as Error).message}`);
      }
    }
  });

  it("the real kubectl creates every object", async () => {
    const { created } = await kubectlApply(run.stdout, ["kata-tests"]);
    expect(created).toHaveLength(run.docs.length);
  });
});

describe("the chart's own values files read", () => {
  it("values.yaml (the chart's defaults): every node decides, the chart's defaults said where kata-install's differ", () => {
    const run = manifests(fixture("values.yaml"));
    expect(run.status, run.stderr).toBe(0);
    validateAll(run.docs);
    const { env, pod, container } = daemonSetOf(run.docs);
    expect(Object.keys(env).filter((k) => k.startsWith("SHIMS"))).toEqual([]);
    expect(env.DEFAULT_SHIM_X86_64).toBe("qemu-runtime-rs");
    // The chart's own: no toleration (Kata stays off tainted control planes), its probes.
    expect(pod.tolerations).toEqual([]);
    expect(container.startupProbe).toMatchObject({
      initialDelaySeconds: 1,
      periodSeconds: 10,
      failureThreshold: 60,
    });
    expect(container.imagePullPolicy).toBe("Always");
    // The chart's nydus set up by the nodes, as kata-deploy sets it up, with the image said to carry it.
    expect(daemonSetOf(run.docs).env.EXPERIMENTAL_SETUP_SNAPSHOTTER).toBe("nydus");
    // Without that choice, refused before the rollout (kata-install's image has no nydus binaries),
    // saying both ways out; without nydus, the nodes set none up.
    const unchosen = runCli(["manifests", "-f", fixture("values.yaml")]);
    expect(unchosen.status).toBe(1);
    expect(unchosen.stderr).toMatch(
      /snapshotter\.setup: nydus: each containerd 1\.7 and 2\.x node would set nydus-for-kata-tee up .* choose before the rollout\. Without nydus: --set setup_snapshotter= .* With it: an image that adds the binaries/,
    );
    const without = manifests(fixture("values.yaml"), "--set", "setup_snapshotter=");
    expect(without.status, without.stderr).toBe(0);
    expect(daemonSetOf(without.docs).env.EXPERIMENTAL_SETUP_SNAPSHOTTER).toBeUndefined();
    // Every shim the chart enables is a release's: the nodes decide among them all, none refused here.
    expect(run.stderr).not.toMatch(/shims: not carried/);
    expect(run.stderr).toMatch(/nodeFeatureRules\.create: not carried: auto asks the cluster/);
  });

  it("try-kata-tee: the TEE shims pinned on x86_64 and s390x, nydus and guest pull as the chart maps them", () => {
    const run = manifests(fixture("try-kata-tee.values.yaml"));
    expect(run.status, run.stderr).toBe(0);
    validateAll(run.docs);
    const { env } = daemonSetOf(run.docs);
    expect(env.SHIMS_X86_64?.split(" ")).toEqual([
      "qemu-snp",
      "qemu-snp-runtime-rs",
      "qemu-tdx",
      "qemu-tdx-runtime-rs",
      "qemu-coco-dev",
      "qemu-coco-dev-runtime-rs",
    ]);
    expect(env.SNAPSHOTTER_HANDLER_MAPPING_X86_64).toBe(
      "qemu-snp:nydus,qemu-snp-runtime-rs:nydus,qemu-tdx:nydus,qemu-tdx-runtime-rs:nydus,qemu-coco-dev:nydus,qemu-coco-dev-runtime-rs:nydus",
    );
    expect(env.PULL_TYPE_MAPPING_S390X).toBe(
      "qemu-se:guest-pull,qemu-se-runtime-rs:guest-pull,qemu-coco-dev:guest-pull,qemu-coco-dev-runtime-rs:guest-pull",
    );
    expect(env.DEFAULT_SHIM_X86_64).toBe("qemu-snp");
    expect(env.DEFAULT_SHIM_S390X).toBe("qemu-se");
    // Every shim the chart enables gets its RuntimeClass, the Rust TEE variants too (the nodes
    // install them from their release, with a warning that no rule of kata-install's vets them).
    expect(run.docs.filter((d) => d.kind === "RuntimeClass").map((d) => d.metadata.name)).toEqual([
      "kata-qemu-coco-dev",
      "kata-qemu-coco-dev-runtime-rs",
      "kata-qemu-se",
      "kata-qemu-se-runtime-rs",
      "kata-qemu-snp",
      "kata-qemu-snp-runtime-rs",
      "kata-qemu-tdx",
      "kata-qemu-tdx-runtime-rs",
    ]);
    expect(run.stderr).not.toMatch(/not carried: kata-install does not serve/);
  });

  it("job mode is refused, naming what to do: no DaemonSet (a long-running pod with a token) in its place", () => {
    for (const name of ["try-kata-nvidia-gpu.values.yaml", "try-kata-nvidia-cpu.values.yaml"]) {
      const run = manifests(fixture(name));
      expect(run.status).toBe(1);
      expect(run.stdout).toBe("");
      const line =
        fs
          .readFileSync(fixture(name), "utf8")
          .split("\n")
          .findIndex((l) => l.startsWith("deploymentMode:")) + 1;
      expect(run.stderr).toContain(
        `${name}:${line}: deploymentMode: job: kata-install has no job mode (per-node Jobs without a service-account token); it runs a DaemonSet`,
      );
      expect(run.stderr).toContain("Set deploymentMode: daemonset to take that DaemonSet");
    }
  });

  it("try-kata-nvidia-gpu (as a DaemonSet): the GPU shims with their gpu-operator selectors; nydus and erofs carried", () => {
    const run = manifests(asDaemonSet("try-kata-nvidia-gpu.values.yaml"));
    expect(run.status, run.stderr).toBe(0);
    validateAll(run.docs);
    const gpu = run.docs.find((d) => d.metadata.name === "kata-qemu-nvidia-gpu-snp") as Obj;
    expect(gpu.scheduling).toEqual({
      nodeSelector: {
        "nvidia.com/cc.ready.state": "true",
        "amd.feature.node.kubernetes.io/snp": "true",
        "katacontainers.io/shim.qemu-nvidia-gpu-snp": "true",
      },
    });
    expect(gpu.overhead).toEqual({ podFixed: { memory: "10240Mi", cpu: "1.0" } });
    // setup: ["nydus", "erofs"], erofsSnapshotterMode: memory, erofsDmverity: true.
    expect(run.stderr).not.toMatch(/erofsSnapshotterMode|erofsDmverity/);
    // containerd.userDropIn: mounted beside the overrides, named to every node's install.
    expect(run.stderr).not.toMatch(/containerd\.userDropIn/);
    const { env, container, pod } = daemonSetOf(run.docs);
    expect(env.EXPERIMENTAL_SETUP_SNAPSHOTTER).toBe("nydus,erofs");
    expect(env.EROFS_SNAPSHOTTER_MODE).toBe("memory");
    expect(env.EROFS_DMVERITY).toBe("dmverity");
    expect(env.EROFS_MERGE_MODE).toBeUndefined();
    expect(env.CONTAINERD_USER_DROP_IN_SOURCE_FILE).toBe("/etc/kata-install/containerd-user-dropin.toml");
    const cm = run.docs.find(
      (d) => d.kind === "ConfigMap" && d.metadata.name === "kata-deploy-overrides",
    ) as Obj & {
      data: Record<string, string>;
    };
    expect(cm.data["containerd-user-dropin.toml"]).toBe(
      "[plugins.'io.containerd.snapshotter.v1.erofs']\n  enable_fsverity = false\n",
    );
    expect(container.volumeMounts).toContainEqual({
      name: "overrides",
      mountPath: "/etc/kata-install",
      readOnly: true,
    });
    expect(pod.volumes).toContainEqual({ name: "overrides", configMap: { name: "kata-deploy-overrides" } });
  });

  it("a containerd.userDropIn containerd could not load stops manifests, named", () => {
    const run = manifests(
      valuesFile(
        "containerd:\n  userDropIn: |\n    [plugins.'io.containerd.snapshotter.v1.erofs'\n",
        "values.yaml",
      ),
    );
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(
      /containerd_user_drop_in: invalid TOML at line 1, .*: containerd could not load it/,
    );
  });

  it("try-kata-nvidia-cpu: the release's NVIDIA CPU shims go to the nodes, each with its RuntimeClass", () => {
    const run = manifests(asDaemonSet("try-kata-nvidia-cpu.values.yaml"));
    expect(run.status, run.stderr).toBe(0);
    validateAll(run.docs);
    expect(daemonSetOf(run.docs).env.SHIMS_X86_64).toBe("qemu-nvidia-cpu qemu-nvidia-cpu-runtime-rs");
    expect(run.docs.filter((d) => d.kind === "RuntimeClass").map((d) => d.handler)).toEqual([
      "kata-qemu-nvidia-cpu",
      "kata-qemu-nvidia-cpu-runtime-rs",
    ]);
    expect(run.stderr).not.toMatch(/would install nothing/);
  });

  it("each try-kata file: the real kubectl creates every object", async () => {
    for (const file of [
      fixture("try-kata-tee.values.yaml"),
      asDaemonSet("try-kata-nvidia-gpu.values.yaml"),
      fixture("values.yaml"),
    ]) {
      const run = manifests(file);
      const name = path.basename(file);
      const { created } = await kubectlApply(run.stdout);
      expect(created.length, name).toBe(run.docs.length);
    }
  });
});

describe("the user's values only (`helm get values` without --all)", () => {
  // Helm renders a release from its values coalesced over the chart's (pkg/chart/common/util/
  // coalesce.go @ helm v4: maps merge key by key, anything else the release sets wins).
  const full = parse(fs.readFileSync(fixture("values.yaml"), "utf8"));
  it.each([
    ["nothing (a release installed with the chart's defaults)", {}],
    [
      "debug, a shim off, the pod's resources in part",
      { debug: true, shims: { clh: { enabled: false } }, resources: { limits: { memory: "64Mi" } } },
    ],
  ])("%s: the same objects as the values Helm computed (--all)", (_name, user) => {
    const coalesce = (base: unknown, over: unknown): unknown =>
      base !== null &&
      typeof base === "object" &&
      !Array.isArray(base) &&
      over !== null &&
      typeof over === "object" &&
      !Array.isArray(over)
        ? Object.fromEntries(
            [...new Set([...Object.keys(base), ...Object.keys(over)])].map((k) => [
              k,
              k in (over as object)
                ? coalesce((base as Record<string, unknown>)[k], (over as Record<string, unknown>)[k])
                : (base as Record<string, unknown>)[k],
            ]),
          )
        : over;
    const mine = manifests(valuesFile(stringify(user), "user-supplied.yaml"));
    const all = manifests(valuesFile(stringify(coalesce(full, user)), "all.yaml"));
    expect(mine.status, mine.stderr).toBe(0);
    expect(all.status, all.stderr).toBe(0);
    expect(mine.stdout).toBe(all.stdout);
    expect(mine.docs.length).toBeGreaterThan(3);
  });
});

describe("custom runtimes (customRuntimes)", () => {
  const CUSTOM = `customRuntimes:
  enabled: true
  runtimes:
    my-gpu-runtime:
      baseConfig: qemu-nvidia-gpu
      dropIn: |
        [hypervisor.qemu]
        default_vcpus = 4
      runtimeClass: |
        kind: RuntimeClass
        apiVersion: node.k8s.io/v1
        metadata:
          name: kata-my-gpu-runtime
          labels:
            team: ml
        handler: kata-my-gpu-runtime
        overhead:
          podFixed:
            memory: "640Mi"
        scheduling:
          nodeSelector:
            katacontainers.io/kata-runtime: "true"
      containerd:
        snapshotter: nydus
      crio:
        pullType: guest-pull
    lean:
      baseConfig: qemu
      inheritBaseOverhead: false
      runtimeClass: |
        handler: kata-lean
    azure:
      baseConfig: clh-azure
      runtimeClass: |
        handler: kata-azure
`;

  it("each is the overrides' [custom_runtimes.<handler>] on every node, and its RuntimeClass on its base shim's nodes", () => {
    const file = valuesFile(CUSTOM, "values.yaml");
    const run = manifests(file);
    expect(run.status, run.stderr).toBe(0);
    validateAll(run.docs);
    const cm = run.docs.find((d) => d.kind === "ConfigMap") as Obj & { data: Record<string, string> };
    expect(cm.data["kata-install.toml"]).toContain(
      '[custom_runtimes.kata-my-gpu-runtime]\nbase = "qemu-nvidia-gpu"\nsnapshotter = "nydus"\npull_type = "guest-pull"\n\n[custom_runtimes.kata-my-gpu-runtime.config]\n"hypervisor.qemu.default_vcpus" = 4',
    );
    const rc = (name: string) => run.docs.find((d) => d.kind === "RuntimeClass" && d.metadata.name === name);
    // The base's overhead (10240Mi, 1.0 CPU) under the class's own, as the chart merges them.
    expect(rc("kata-my-gpu-runtime")).toMatchObject({
      handler: "kata-my-gpu-runtime",
      metadata: { labels: { team: "ml", "app.kubernetes.io/managed-by": "kata-install" } },
      overhead: { podFixed: { memory: "640Mi", cpu: "1.0" } },
      scheduling: {
        nodeSelector: {
          "katacontainers.io/kata-runtime": "true",
          "katacontainers.io/shim.qemu-nvidia-gpu": "true",
        },
      },
    });
    expect(rc("kata-lean")).toMatchObject({ handler: "kata-lean" });
    expect(rc("kata-lean")?.overhead).toBeUndefined();
    // A base of the release's that no rule describes is carried like any: its nodes install it.
    expect(rc("kata-azure")).toMatchObject({ handler: "kata-azure" });
    expect(run.stderr).not.toMatch(/customRuntimes\.runtimes\.azure.*not carried/);
  });

  it("a drop-in value Kata does not take is an error at its line (keys are the release's: its nodes check them)", () => {
    const file = valuesFile(CUSTOM.replace("default_vcpus = 4", 'shared_fs = "virtio-fss"'), "values.yaml");
    const run = manifests(file);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(
      `${file}:8: customRuntimes.runtimes.my-gpu-runtime.dropIn: hypervisor.qemu.shared_fs: "virtio-fss" is not one of`,
    );
  });
});

describe("refused, with the file, line and why; nothing printed", () => {
  it("unknown keys, kinds, values the chart does not take, removed keys, unknown shims", () => {
    const file = valuesFile(
      [
        "imagePullPolicy: Sometimes", // 1
        "debug: yes please", // 2
        "nodeSelectr: {}", // 3
        "job:", // 4
        "  nodeSelector: {}", // 5
        "shims:", // 6
        "  qemu-foo:", // 7
        "    enabled: true", // 8
        "  qemu:", // 9
        "    supportedArches: [amd64, riscv64]", // 10
        "nodeFeatureRules:", // 11
        "  create: sometimes", // 12
        "",
      ].join("\n"),
      "values.yaml",
    );
    const run = manifests(file);
    expect(run.status).toBe(1);
    expect(run.stdout).toBe("");
    for (const expected of [
      `${file}:1: imagePullPolicy: "Sometimes": expected one of "Always", "IfNotPresent", "Never"`,
      `${file}:2: debug: expected true or false, got a string`,
      `${file}:3: nodeSelectr: not a key of kata-deploy's chart (known here: affinity,`,
      `${file}:5: job.nodeSelector: has been removed from the chart`,
      `${file}:10: shims.qemu.supportedArches: "riscv64": expected some of amd64, arm64, s390x, ppc64le`,
      `${file}:7: shims.qemu-foo: not a shim of kata-deploy's chart`,
    ])
      expect(run.stderr).toContain(expected);
  });

  it("a drop-in: TOML that does not parse, or a value Kata does not take, at its line in the values file", () => {
    const file = valuesFile(
      [
        "shims:", // 1
        "  qemu:", // 2
        "    dropIn: |", // 3
        "      [hypervisor.qemu]", // 4
        "      default_memory = 4096", // 5
        '      block_device_driver = "floppy"', // 6
        "  clh:", // 7
        "    dropIn: |", // 8
        "      [hypervisor.clh", // 9
        "",
      ].join("\n"),
      "values.yaml",
    );
    const run = manifests(file);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(
      `${file}:6: shims.qemu.dropIn: hypervisor.qemu.block_device_driver: "floppy" is not one of`,
    );
    expect(run.stderr).toMatch(new RegExp(`${file}:9: shims\\.clh\\.dropIn: not valid TOML`));
  });

  it("a YAML syntax error, at its line", () => {
    const file = valuesFile("debug: true\nshims: [\n", "values.yaml");
    const run = manifests(file);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(new RegExp(`${file}:\\d+: not valid YAML`));
  });
});

/** Every key of the chart's shape, as docs/commands.md's table names them (`<shim>` for a shim's). */
function chartKeys(spec: Spec, at: string[] = []): string[] {
  const own = (name: string) => [...at, name].join(".");
  const children = Object.entries(spec.children ?? {}).flatMap(([name, child]) =>
    child.children || child.each ? chartKeys(child, [...at, name]) : [own(name)],
  );
  const each = spec.each ? chartKeys(spec.each, [...at, at.at(-1) === "shims" ? "<shim>" : "<name>"]) : [];
  return [...children, ...each];
}

describe("docs/commands.md", () => {
  it("the values mapping table covers every key of the chart, each once", () => {
    const readme = fs.readFileSync("docs/commands.md", "utf8");
    // A row names keys ("a, b"), or all under one ("job.*").
    const rows = readmeFields(readme, "### kata-deploy's Helm values, key by key").map(([cell]) =>
      cell.split(", "),
    );
    const covers = (pattern: string, key: string) =>
      pattern.endsWith("*") ? key.startsWith(pattern.slice(0, -1)) : pattern === key;
    const keys = [...chartKeys(CHART), "node-feature-discovery.<any other key>"];
    for (const key of keys)
      expect(
        rows.flat().filter((p) => covers(p, key)),
        key,
      ).toHaveLength(1);
    for (const pattern of rows.flat())
      expect(
        keys.some((k) => covers(pattern, k)),
        pattern,
      ).toBe(true);
  });
});
