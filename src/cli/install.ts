// The commands that plan, make or undo the node's changes.
import type { Command } from "commander";
import { decideOptions, hostExecOption, hostRootOption, type Out } from "./options.js";

/** plan: the exact changes an install would make. */
export function planCommand(program: Command, out: Out): void {
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
EXPERIMENTAL_SETUP_SNAPSHOTTER (nydus, erofs) with EROFS_SNAPSHOTTER_MODE, EROFS_MERGE_MODE and
EROFS_DMVERITY, CONTAINERD_USER_DROP_IN_SOURCE_FILE (the admin's containerd drop-in), and
INSTALLATION_PREFIX and MULTI_INSTALL_SUFFIX, which say where Kata is (<prefix>/opt/kata[-<suffix>]):
set them the same for install, plan and uninstall. KATA_INSTALL_NYDUS_SNAPSHOTTER_DIR: where the
nydus snapshotter's files are, for EXPERIMENTAL_SETUP_SNAPSHOTTER=nydus (the image's
/opt/kata-artifacts/nydus-snapshotter by default).

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
      const { runPlan } = await import("../commands/node-side.js");
      process.exitCode = await runPlan(options, out);
    });
}

/** install: the plan, applied transactionally. */
export function installCommand(program: Command, out: Out): void {
  decideOptions(
    program
      .command("install")
      .description(
        "install Kata on this node: exactly what `plan` shows, transactionally, with a journal that uninstall replays",
      ),
    "with --dry-run only: plan from a saved facts document (facts --json); an install reads the node itself",
  )
    .option(
      "--dry-run",
      "show the plan and stop: the same output as `plan`; with --plan, the saved plan checked as install would check it",
    )
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
thing that changed, and writes nothing. With --dry-run too, it checks the same and says whether the
plan would be applied, taking no lock and changing nothing.

kata-deploy's environment (SHIMS_<ARCH>, DEBUG, INSTALLATION_PREFIX, MULTI_INSTALL_SUFFIX, ...: see
plan --help) is read here too; uninstall needs the same INSTALLATION_PREFIX and MULTI_INSTALL_SUFFIX.

Examples:
  kata-install install --dry-run
  kata-install install --artifacts registry:ghcr.io/kata-containers/kata-install-artifacts --artifacts-tag 4.1.0
  kata-install install --artifacts oci-layout:/srv/kata-oci
  kata-install install --artifacts dir:/srv/kata-artifacts
  kata-install plan --artifacts oci-layout:/srv/kata-oci --out node-1.plan.json   (review it, then)
  kata-install install --plan node-1.plan.json --dry-run   (still the same plan?)
  kata-install install --plan node-1.plan.json`,
    )
    .action(async (options) => {
      const { runInstall } = await import("../commands/node-side.js");
      process.exitCode = await runInstall(options, out);
    });
}

/** uninstall: the install undone, byte for byte. */
export function uninstallCommand(program: Command, out: Out): void {
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
      const { runUninstall } = await import("../commands/node-side.js");
      process.exitCode = await runUninstall(options, out);
    });
}
