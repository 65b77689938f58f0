// The commands for a cluster: many nodes' reports, the objects that run kata-install, and the
// container's entrypoint.
import { type Command, Option } from "commander";
import { STRATEGY_NAMES as STRATEGIES } from "../host/strategy-names.js";
import type { Out } from "./options.js";

/** report: many nodes at once. */
export function reportCommand(program: Command, out: Out): void {
  program
    .command("report")
    .description(
      "many nodes at once: which shims each can run, where they disagree, one configuration for all",
    )
    .option("--facts-dir <dir>", "saved `kata-install facts --json` documents, one <node>.json per node")
    .option(
      "--kubeconfig <file>",
      "read the summaries kata-install published in the cluster's node annotations",
    )
    .option(
      "--overrides <file>",
      "with --facts-dir: decide every node with this overrides file (check one before rolling it out)",
    )
    .option("--emit-overrides <file>", "write an overrides file that gives every node the same configuration")
    .option(
      "--install-suffix <suffix>",
      "with --kubeconfig: read the summaries of the install with this MULTI_INSTALL_SUFFIX (default: the one without)",
    )
    .option("--json", "print one JSON document and nothing else on stdout")
    .addHelpText(
      "after",
      `
Nodes are compared on every fact kata-install's rules read (read off the rules, by path: kvm.device,
kernel.modules.vhost_vsock.state, runtime.version, ...; and the host kernel's virtio-fs and 9p, shown
though they decide nothing), and on the shims that result. Summaries an earlier kata-install
published are compared on what they carry. A node whose facts cannot be read is listed and left out.
Exit status 1 when no node could be read, or (--facts-dir) when a file there could not be: the report is
then partial, and says which.

Examples:
  kata-install report --facts-dir ./facts                     (facts/<node>.json from each node)
  kata-install report --facts-dir ./facts --emit-overrides uniform.toml
  kata-install report --facts-dir ./facts --overrides uniform.toml    (every node now alike?)
  kata-install report --kubeconfig ~/.kube/config --json
  kata-install report --kubeconfig ~/.kube/config --install-suffix ci   (the install kata-deploy-ci)

Each API request has 30 s to answer (KATA_INSTALL_KUBE_TIMEOUT, in seconds).`,
    )
    .action(async (options) => {
      const { runReport } = await import("../commands/report.js");
      process.exitCode = await runReport(options, out);
    });
}

/** manifests: the Kubernetes objects, for kubectl apply. */
export function manifestsCommand(program: Command, out: Out): void {
  program
    .command("manifests")
    .description(
      "print the Kubernetes objects that run kata-install on every node, as YAML for kubectl apply",
    )
    .option(
      "-f, --values <file>",
      "a values file: TOML (keys as in templates/k8s/values.toml), or kata-deploy's Helm chart values (.yaml)",
    )
    .option("-o, --output <format>", "yaml (documents for kubectl apply -f) or json (one List)", "yaml")
    .option(
      "--explain-values",
      "with a kata-deploy values file: print what became of each of its keys (carried, not carried, no effect), not the objects",
    )
    .option(
      "--set <key=value>",
      'set one value; VALUE is read as TOML when it can be (true, 8, ["qemu", "clh"]), else as a string; repeatable',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .addHelpText(
      "after",
      `
Prints: the ServiceAccount and RBAC (nodes get/list/patch, daemonsets get/list), the DaemonSet running
\`kata-install entrypoint install\` on every node with the host at /host, and one RuntimeClass per
shim the nodes install, handler kata-<shim>, whose nodeSelector is katacontainers.io/shim.<shim>=true:
pods of a shim are scheduled only on nodes where kata-install installed that shim.

A kata-deploy values file (-f values.yaml, the 4.1 chart's keys) is read key by key: each is carried
over to the same effect, or said on stderr not to be, with its line and why. A key it leaves out is
the chart's default, as Helm has it: \`helm get values\` and \`helm get values --all\` give the same objects.

Examples:
  kata-install manifests | kubectl apply -f -
  kata-install manifests -f kata-deploy-values.yaml --explain-values
  kata-install manifests --set image=registry.example/kata-install:0.1.0 --set 'shims=["qemu"]'
  kata-install manifests -f cluster-values.toml > kata-install.yaml`,
    )
    .action(async (options) => {
      const { runManifests } = await import("../commands/manifests.js");
      process.exitCode = await runManifests(options, out);
    });
}

/** entrypoint: the kata-deploy container's. */
export function entrypointCommand(program: Command, out: Out): void {
  program
    .command("entrypoint")
    .argument("<action>", "install, cleanup or reset")
    .description("the kata-deploy container's entrypoint: install and label the node, then wait; or clean up")
    .addOption(new Option("--host-root <dir>", "the node's root directory (default: $HOST_ROOT, else /host)"))
    .addOption(
      new Option(
        "--host-exec <strategy>",
        "how host commands run (default: $HOST_EXEC, else chroot)",
      ).choices(STRATEGIES),
    )
    .option("--kubeconfig <file>", "a kubeconfig (default: the pod's service account, else $KUBECONFIG)")
    .option(
      "--health-port <port>",
      "port of /healthz and /readyz (default: $HEALTH_PORT, else 8090; 0 picks one)",
    )
    .option(
      "--plan <file>",
      "install: apply this saved plan (plan --out) or refuse, as install --plan (default: $KATA_INSTALL_PLAN)",
    )
    .addHelpText(
      "after",
      `
Actions:
  install   claim the node (katacontainers.io/kata-runtime=false and its mark, where absent: a
            node that serves Kata keeps its labels); plan, print the plan, install it (with --plan
            or KATA_INSTALL_PLAN: that saved plan, or refuse as install --plan does); wait until
            the node reports the runtime serving the handlers (else fail, not labelled); label the
            node =true with its mark kata-deploy.katacontainers.io/<suffix|default>=true,
            katacontainers.io/shim.<shim>[-<suffix>]=true per installed shim and a summary
            annotation; lift the startup taints; then wait. On SIGTERM it cleans up only if its
            DaemonSet no longer selects the node (deleted, or its nodeSelector or required affinity
            excludes it; taints do not count): a rolling update or a restarted pod never
            uninstalls Kata from under running Kata pods.
  cleanup   if the DaemonSet no longer selects the node: remove the labels, then uninstall and
            restart the runtime if its configuration changed.
  reset     roll back an install that was cut short and remove the labels (what is installed
            stays); unless another install holds the node, restart the runtime and (containerd,
            CRI-O) the kubelet, and wait until the node is Ready.

Environment (kata-deploy's, set by the DaemonSet of \`kata-install manifests\`):
  NODE_NAME                      this node (labels are written only when it is set)
  POD_NAMESPACE, DAEMONSET_NAME  the DaemonSet to ask on SIGTERM (kube-system, kata-deploy)
  KATA_INSTALL_KUBE_TIMEOUT      seconds an API request may go unanswered (30); /readyz is 503 meanwhile
  SHIMS[_<ARCH>], DEFAULT_SHIM[_<ARCH>], DEBUG, ALLOWED_HYPERVISOR_ANNOTATIONS, AGENT_HTTPS_PROXY,
  AGENT_NO_PROXY, SNAPSHOTTER_HANDLER_MAPPING, PULL_TYPE_MAPPING, EXPERIMENTAL_FORCE_GUEST_PULL,
  EXPERIMENTAL_SETUP_SNAPSHOTTER, EROFS_SNAPSHOTTER_MODE, EROFS_MERGE_MODE, EROFS_DMVERITY,
  CONTAINERD_USER_DROP_IN_SOURCE_FILE, KATA_INSTALL_NYDUS_SNAPSHOTTER_DIR,
  INSTALLATION_PREFIX, MULTI_INSTALL_SUFFIX  as for install (see kata-install plan --help)
  ARTIFACTS, ARTIFACTS_TAG       where the artifacts come from (as --artifacts, --artifacts-tag)
  KATA_INSTALL_PLAN              a saved plan to apply (as --plan); e.g. /plans/$(NODE_NAME).json
  KATA_INSTALL_OVERRIDES         the cluster's overrides file, read instead of the node's own
  CONTAINERD_CONFIG_FILE_NAME    containerd's file in /etc/containerd
  K8S_DISTRIBUTION               k3s, rke2, k0s, microk8s, or k8s/kubeadm/vanilla (any other value: the
                                 default layout): refuse a node whose runtime is another's (CRI-O: never)
  NFD_FEATURE_FILE=true          also write the node's Kata facts for Node Feature Discovery (features.d)
  STARTUP_TAINTS                 taints to lift once installed and labelled: key or key:effect, by commas
                                 or spaces
  HANDLER_WAIT_SECONDS           how long the node may take to list the handlers written (120)
  NODE_READY_TIMEOUT_SECONDS     reset: how long the node may take to be Ready again (300)
  HOST_ROOT, HOST_EXEC           the host mount and how host commands run
  HOST_MOUNTS                    the host paths mounted under HOST_ROOT, by ":" (unset: all of the host);
                                 any other path is unknown in the facts, never absent
  HEALTH_ADDRESS, HEALTH_PORT    where /healthz and /readyz listen (0.0.0.0:8090)`,
    )
    .action(async (action: string, options) => {
      const { runEntrypoint } = await import("../commands/node-side.js");
      process.exitCode = await runEntrypoint(action, options, out);
    });
}
