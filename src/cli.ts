// Command-line wiring only. Each command's module is imported when that command runs, so `--help`
// and a mistyped flag cost nothing but commander.
import { Command, Option } from "commander";

import { STRATEGY_NAMES as STRATEGIES } from "./host/strategy-names.js";

function hostRootOption(): Option {
  return new Option(
    "--host-root <dir>",
    "the node's root directory: / on the node, /host in the kata-deploy container",
  ).default("/");
}

function hostExecOption(): Option {
  return new Option(
    "--host-exec <strategy>",
    "how host commands run: direct (root /), root-exec (run the file under the root: test hosts), chroot or nsenter (container)",
  ).choices(STRATEGIES);
}

export function buildProgram(out: (text: string) => void = (t) => process.stdout.write(t)): Command {
  const program = new Command("kata-install")
    .description(
      "Install Kata Containers on a node the careful way: detect what the node is, decide from rules what it\n" +
        "can run, render the configuration, show the exact diff, and only then install, reversibly.",
    )
    .version(process.env.npm_package_version ?? "0.1.0", "-V, --version")
    .showHelpAfterError("(run with --help for usage)")
    .addHelpText(
      "after",
      `
Stages: detect → decide → render → install. Each command stops at a stage:
  facts       what the node is (CPU, KVM, kernel modules, hypervisors, runtime, devices)
  preflight   the checks an install must pass, and the shims this node gets
  explain     every decided value, the source that set it and what it beat
  shims       what each shim can do, and whether it can run on this node
  plan        the exact changes an install would make: a diff per file, then the actions
  install     apply the plan: artifacts, Kata's configuration, the runtime's, a restart if needed
  uninstall   undo it, byte for byte
  artifacts   split Kata's release into the artifact sub-containers

Every error is one line; --debug (with any command) adds the stack trace.

In a cluster:
  manifests   the DaemonSet, RBAC and one RuntimeClass per shim, for kubectl apply
  entrypoint  the container's entrypoint: install and label the node, clean up when deselected
  report      which shims each node can run, where nodes differ, one configuration for all

Examples:
  kata-install --dry-run                   what an install would change on this node, as a diff
                                           (install --dry-run; takes every option of install)
  kata-install facts                       a readable summary of this node
  kata-install facts --json > node.json    the same as one JSON document, to save or replay
  kata-install facts --host-root /host     a node mounted elsewhere (the kata-deploy container)
  kata-install preflight                   can this node run Kata, and which shims?
  kata-install explain shared_fs           why each shim shares files the way it does
  kata-install plan                        what an install would change, as a diff (nothing is written)`,
    );

  program
    .command("facts")
    .description("detect the node's facts: what Kata depends on, and what could not be read")
    .addOption(hostRootOption())
    .addOption(hostExecOption())
    .option("--json", "print one JSON document (the Facts contract) and nothing else on stdout")
    .option("--facts <file>", "validate and show a saved facts document instead of reading a node")
    .option(
      "--nfd",
      "print what Kata can do here as a Node Feature Discovery feature file (features.d), for NFD to label the node",
    )
    .addHelpText(
      "after",
      `
Nothing on the host is changed. Files or commands that could not be read are listed as problems
(in --json, under "problems") rather than guessed at.

Examples:
  kata-install facts --json --host-root / > $(hostname).json
  kata-install facts --facts node.json
  kata-install facts --nfd > /etc/kubernetes/node-feature-discovery/features.d/kata-install`,
    )
    .action(async (options) => {
      const { runFacts } = await import("./commands/facts.js");
      process.exitCode = await runFacts(options, out);
    });

  const decideOptions = (command: Command) =>
    command
      .addOption(hostRootOption())
      .addOption(hostExecOption())
      .option(
        "--facts <file>",
        "decide from a saved facts document (facts --json) instead of reading the node",
      )
      .option(
        "--overrides <file>",
        "the administrator's overrides (TOML); default /etc/kata-containers/kata-install.toml under the host root, if present",
      )
      .option(
        "--shims <list>",
        "install exactly these shims (comma-separated): beats the overrides file and SHIMS",
      )
      .option("--default-shim <shim>", "the shim that the default runtime handler uses")
      .option(
        "--ignore-preflight-errors <ids>",
        "check ids (comma-separated) whose errors become warnings, or all",
      )
      .option(
        "--artifacts <source>",
        "the Kata release, as its artifact images: registry:HOST/REPOSITORY (images <artifact>:<tag>), oci-layout:DIR (images tagged by artifact name) or dir:DIR (DIR/<artifact>/opt/kata/...); each shim's configuration is the release's own, read from it (without: the release kata-install installed on this node)",
      )
      .option(
        "--artifacts-tag <tag>",
        "with registry: the tag of the artifact images (Kata's version; default latest)",
      )
      .option("--json", "print one JSON document and nothing else on stdout");

  decideOptions(
    program
      .command("preflight")
      .description(
        "run every preflight check, kubeadm style, and show the shims and artifacts this node gets",
      ),
  )
    .addHelpText(
      "after",
      `
Exits 1 when an error remains (an install would refuse this node), 0 otherwise. An ignored error
is shown as a warning. kata-deploy's environment (SHIMS_<ARCH>, DEFAULT_SHIM, DEBUG, ...) is read
too, and overrides always win over rules; where one contradicts the node, a warning says so.

Examples:
  kata-install preflight
  kata-install preflight --ignore-preflight-errors=nested-virtualization
  kata-install preflight --facts node.json --overrides pinned.toml --json`,
    )
    .action(async (options) => {
      const { runPreflight } = await import("./commands/node-side.js");
      process.exitCode = await runPreflight(options, out);
    });

  decideOptions(
    program
      .command("explain")
      .argument(
        "[keys...]",
        "what to explain: a configuration key, a shim, shim:key, shims.<name> or artifacts.<name>",
      )
      .description(
        "show each decided value, the source that set it (default, rule, environment, overrides file, flag) and the ones it beat",
      ),
  )
    .addHelpText(
      "after",
      `
Examples:
  kata-install explain                                  everything
  kata-install explain hypervisor.qemu.shared_fs        one key, for every shim that has it
  kata-install explain qemu:hypervisor.qemu.path clh    one key of one shim, and all of clh`,
    )
    .action(async (keys: string[], options) => {
      const { runExplain } = await import("./commands/node-side.js");
      process.exitCode = await runExplain(keys, options, out);
    });

  decideOptions(
    program
      .command("shims")
      .description(
        "print what each shim can do and, for this node, which ones can run and why the others cannot",
      ),
  ).action(async (options) => {
    const { runShims } = await import("./commands/node-side.js");
    process.exitCode = await runShims(options, out);
  });

  const planHelp = `
Nothing is written. The output is the preflight verdict, the shims and artifacts with their
reasons, a unified diff per file (paths relative to the host root: \`patch -p1\` applies them
there), then the actions (artifact pulls, a runtime restart when its configuration changes).
Progress goes to stderr; stdout holds only the plan (or its JSON).

Exit codes: 0 nothing to change (or changes, without --detailed-exitcode); 2 changes pending
(with --detailed-exitcode); 1 a preflight error remains (the diff is still printed) or bad input.

--out FILE saves the plan (the plan --json document) with the sha256 of everything it was made
from: the node's facts, kata-install's rules, templates and artifact catalogue, the overrides file,
the kata-deploy variables it read, the current bytes of every file it changes and the new ones.
\`install --plan FILE\` applies exactly that plan, or refuses, naming what changed since. A plan with
a preflight error is not saved.

kata-deploy's environment is read as its DaemonSet sets it, here too: SHIMS[_<ARCH>],
DEFAULT_SHIM[_<ARCH>], DEBUG, ALLOWED_HYPERVISOR_ANNOTATIONS, AGENT_HTTPS_PROXY, AGENT_NO_PROXY,
SNAPSHOTTER_HANDLER_MAPPING, PULL_TYPE_MAPPING, EXPERIMENTAL_FORCE_GUEST_PULL, CONTAINERD_CONFIG_FILE_NAME,
and INSTALLATION_PREFIX and MULTI_INSTALL_SUFFIX, which say where Kata is (<prefix>/opt/kata[-<suffix>]):
set them the same for install, plan and uninstall.

Examples:
  kata-install plan
  kata-install plan --facts node.json --host-root /mnt/node --json
  kata-install plan --detailed-exitcode >/dev/null; echo $?
  kata-install plan --artifacts oci-layout:/srv/kata-oci --out node-1.plan.json`;

  decideOptions(
    program
      .command("plan")
      .description("show what an install would change, exactly, without changing anything"),
  )
    .option("--detailed-exitcode", "exit 2 when changes are pending, 0 when there are none")
    .option(
      "--out <file>",
      "also save the plan, with the hashes of everything it was made from, for install --plan",
    )
    .addHelpText("after", planHelp)
    .action(async (options) => {
      const { runPlan } = await import("./commands/node-side.js");
      process.exitCode = await runPlan(options, out);
    });

  decideOptions(
    program
      .command("install")
      .description(
        "install Kata on this node: exactly what `plan` shows, transactionally, with a journal that uninstall replays",
      ),
  )
    .option("--dry-run", "show the plan and stop: the same output as `plan`")
    .option("--detailed-exitcode", "with --dry-run: exit 2 when changes are pending")
    .option(
      "--plan <file>",
      "apply a plan saved by plan --out, exactly, or refuse if the node or the inputs changed since",
    )
    .option(
      "--runtime-timeout <seconds>",
      "how long to wait for the runtime to answer after its restart",
      "30",
    )
    .addHelpText(
      "after",
      `
Order: take the node's lock; roll back an install that was cut short (kill -9, power loss); plan;
refuse if a preflight error remains; put the artifacts in place (a new version directory, switched
in with one rename); write Kata's configuration, then the runtime's; restart or reload the runtime
only if a file it reads changed, and wait until it answers. Every step is journalled under
<prefix>/.install, so the next run (or uninstall) finishes or undoes a cut-short one. A second
install of the same plan changes nothing and restarts nothing.

With --plan FILE (saved by plan --out), install plans again with the options the plan was made with
(overrides, shims, artifacts: giving another is refused) and the environment as it is, and applies
only if everything is as it was: the facts, kata-install's data, the overrides file, the variables
read, every file the plan changes, and the plan itself. Otherwise it refuses (exit 1), naming each
thing that changed, and writes nothing.

kata-deploy's environment (SHIMS_<ARCH>, DEBUG, INSTALLATION_PREFIX, MULTI_INSTALL_SUFFIX, ...: see
plan --help) is read here too; uninstall needs the same INSTALLATION_PREFIX and MULTI_INSTALL_SUFFIX.

Examples:
  kata-install install --dry-run
  kata-install install --artifacts registry:quay.io/kata-containers --artifacts-tag 3.9.0
  kata-install install --artifacts oci-layout:/srv/kata-oci
  kata-install install --artifacts dir:/srv/kata-artifacts
  kata-install plan --artifacts oci-layout:/srv/kata-oci --out node-1.plan.json   (review it, then)
  kata-install install --plan node-1.plan.json`,
    )
    .action(async (options) => {
      const { runInstall } = await import("./commands/node-side.js");
      process.exitCode = await runInstall(options, out);
    });

  program
    .command("uninstall")
    .description(
      "undo the install: every file back as it was (byte for byte), the artifacts removed, the runtime restarted if needed",
    )
    .addOption(hostRootOption())
    .addOption(hostExecOption())
    .option("--dry-run", "show what would be restored, as diffs, and change nothing")
    .option(
      "--runtime-timeout <seconds>",
      "how long to wait for the runtime to answer after its restart",
      "30",
    )
    .option("--json", "print one JSON document and nothing else on stdout")
    .addHelpText(
      "after",
      `
A file someone edited after the install is not clobbered: from the admin's own configuration only
kata-install's marked block is taken out; a file of kata-install's that was edited is left in
place; both are listed. With nothing installed, it says so and exits 0.

After a takeover of kata-deploy's install, uninstall removes Kata entirely: kata-deploy's files
became kata-install's and go too, and the runtime's configuration is given back as the admin had it
without kata-deploy's handlers, drop-ins or imports (none is brought back to dangle). kata-deploy's
own install is not restored: run kata-deploy again for that.

INSTALLATION_PREFIX and MULTI_INSTALL_SUFFIX say where Kata is (<prefix>/opt/kata[-<suffix>]): an
install made with them is found, and uninstalled, with the same values.`,
    )
    .action(async (options) => {
      const { runUninstall } = await import("./commands/node-side.js");
      process.exitCode = await runUninstall(options, out);
    });

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
Exit status 1 when no node could be read.

Examples:
  kata-install report --facts-dir ./facts                     (facts/<node>.json from each node)
  kata-install report --facts-dir ./facts --emit-overrides uniform.toml
  kata-install report --facts-dir ./facts --overrides uniform.toml    (every node now alike?)
  kata-install report --kubeconfig ~/.kube/config --json
  kata-install report --kubeconfig ~/.kube/config --install-suffix ci   (the install kata-deploy-ci)`,
    )
    .action(async (options) => {
      const { runReport } = await import("./commands/node-side.js");
      process.exitCode = await runReport(options, out);
    });

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
Prints: the ServiceAccount and RBAC (nodes get/list/patch, daemonsets get), the DaemonSet running
\`kata-install entrypoint install\` on every node with the host at /host, and one RuntimeClass per
shim the nodes install, handler kata-<shim>, whose nodeSelector is katacontainers.io/shim.<shim>=true:
pods of a shim are scheduled only on nodes where kata-install installed that shim.

A kata-deploy values file (-f values.yaml, the 4.1 chart's keys) is read key by key: each is carried
over to the same effect, or said on stderr not to be, with its line and why.

Examples:
  kata-install manifests | kubectl apply -f -
  kata-install manifests -f kata-deploy-values.yaml --explain-values
  kata-install manifests --set image=registry.example/kata-install:0.1.0 --set 'shims=["qemu"]'
  kata-install manifests -f cluster-values.toml > kata-install.yaml`,
    )
    .action(async (options) => {
      const { runManifests } = await import("./commands/manifests.js");
      process.exitCode = await runManifests(options, out);
    });

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
  SHIMS[_<ARCH>], DEFAULT_SHIM[_<ARCH>], DEBUG, ALLOWED_HYPERVISOR_ANNOTATIONS, AGENT_HTTPS_PROXY,
  AGENT_NO_PROXY, SNAPSHOTTER_HANDLER_MAPPING, PULL_TYPE_MAPPING, EXPERIMENTAL_FORCE_GUEST_PULL,
  INSTALLATION_PREFIX, MULTI_INSTALL_SUFFIX  as for install (see kata-install explain)
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
  HEALTH_ADDRESS, HEALTH_PORT    where /healthz and /readyz listen (0.0.0.0:8090)`,
    )
    .action(async (action: string, options) => {
      const { runEntrypoint } = await import("./commands/node-side.js");
      process.exitCode = await runEntrypoint(action, options, out);
    });

  const artifacts = program
    .command("artifacts")
    .description("work with the artifact sub-containers: split Kata's release into them");
  artifacts
    .command("split")
    .argument(
      "<tarballs...>",
      "all the tarballs of one Kata release (kata-static-, kata-go-static-, kata-tools-static-<version>-<arch>.tar.zst, .tar.xz or .tar.gz)",
    )
    .description(
      "write one OCI image per artifact of artifacts/catalogue.toml (and of the release's files it does not know); the release's own configurations decide what each shim pulls",
    )
    .requiredOption(
      "--out <target>",
      "oci-layout:DIR, the OCI image layout to write (images are tagged by artifact name)",
    )
    .option(
      "--arch <arch>",
      "the release's architecture, when its file name does not say (x86_64, aarch64, s390x, ppc64le)",
    )
    .option(
      "--layers <format>",
      "gzip (the default: what registries serve) or tar (uncompressed: a layout kept on the node's disk installs faster, with no gunzip)",
    )
    .option("--json", "print one JSON document and nothing else on stdout")
    .addHelpText(
      "after",
      `
Give every tarball of the release at once: since Kata 4.1.0 the Rust runtime (kata-static), the Go
runtime (kata-go-static) and the tools (kata-tools-static) ship apart, and one path in two of them
must be the same file. Each file and link the catalogue knows goes to its one artifact, or to an
[[ignore]] entry that says why a node does not need it (developer tools, bash completion, build
leftovers); the shims' configurations and VERSION go into "meta". A file the catalogue does not
know never stops the split: one a shim's configuration needs goes with the file or link it is
reached through, else into an image "extra-<its name>" of its own; one nothing needs goes into
"unclaimed", which no shim pulls; both are listed. What stops it (exit 1, each named, nothing
written): an entry two catalogue entries claim, a link a configuration needs that dangles, a link
into an artifact its own does not depend on, a path two tarballs hold differently, an entry that
escapes opt/kata. A dangling link no shim needs is listed and left out.

Layers: gzip by default (what registries serve); --layers tar for a layout kept on the nodes' own
disks, which installs faster (no gunzip: bench/artifacts.bench.ts).

The layout gets kata-release.json beside it with each image's digest, file count and bytes; each
image's manifest carries its file list, so a plan checks every path before pulling. An install from
that layout refuses an image that does not match. Push the images anywhere with skopeo
(skopeo copy oci:DIR:qemu docker://REGISTRY/REPO/qemu:VERSION).

Example:
  kata-install artifacts split kata-static-4.1.0-amd64.tar.zst kata-go-static-4.1.0-amd64.tar.zst \\
      kata-tools-static-4.1.0-amd64.tar.zst --out oci-layout:/srv/kata-oci`,
    )
    .action(async (tarballs: string[], options) => {
      const { runSplit } = await import("./commands/artifacts.js");
      process.exitCode = await runSplit(tarballs, options, out);
    });

  return program;
}

/**
 * `kata-install --dry-run [install's options]` is `kata-install install --dry-run …`: the review
 * users are told to run. Only options come before a command here, so arguments that start with an
 * option and hold --dry-run can only mean that; anything else (bare `kata-install`, a mistyped
 * command) goes to commander unchanged, which prints help or an error, and never installs.
 */
export function impliedCommand(args: string[]): string[] {
  const first = args[0];
  if (first === undefined || !first.startsWith("-") || !args.includes("--dry-run")) return args;
  return ["install", ...args];
}

/** Run the command `argv` names (process.argv's layout: node, the script, then the arguments). */
export async function main(argv: string[] = process.argv): Promise<void> {
  const [node = "node", script = "kata-install", ...given] = argv;
  // --debug, anywhere: stack traces too. Without it every error is one line.
  const debug = given.includes("--debug");
  const args = given.filter((a) => a !== "--debug");
  try {
    await buildProgram().parseAsync([node, script, ...impliedCommand(args)]);
  } catch (error) {
    const { message, name, stack } = error as Error;
    // Input and host errors are said as they are; anything else is unexpected: its first line,
    // and the stack with --debug.
    // A system error (a disk full, a file gone) is said as one line naming the file, not as Node's.
    const known = name === "UserError";
    const { systemErrorLine } = await import("./errors.js");
    const text = debug
      ? (stack ?? message)
      : known
        ? message
        : (systemErrorLine(error) ?? `${message.split("\n")[0]} (run with --debug for more)`);
    process.stderr.write(`kata-install: ${text}\n`);
    process.exitCode = 1;
  }
}
