// The commands that stop after the decide stage: what a node can run, and why.
import type { Command } from "commander";
import { decideOptions, type Out } from "./options.js";

/** preflight: the checks an install must pass. */
export function preflightCommand(program: Command, out: Out): void {
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
      const { runPreflight } = await import("../commands/node-side.js");
      process.exitCode = await runPreflight(options, out);
    });
}

/** explain: each decided value and its source. */
export function explainCommand(program: Command, out: Out): void {
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
      const { runExplain } = await import("../commands/node-side.js");
      process.exitCode = await runExplain(keys, options, out);
    });
}

/** shims: what each shim can do, and whether it runs here. */
export function shimsCommand(program: Command, out: Out): void {
  decideOptions(
    program
      .command("shims")
      .description(
        "print what each shim can do and, for this node, which ones can run and why the others cannot",
      ),
  )
    .addHelpText(
      "after",
      `
The table is kata-install's record of each shim (hypervisor, runtime, shared filesystems, block
devices, VFIO, TEE); the last column is this node's verdict, from the same rules as preflight, and
a shim that would not be installed names the requirement it fails. With the release (--artifacts,
or the one installed on the node), its shims that no rule describes are listed too: opt-in, with
? where nothing here knows what they can do.

Examples:
  kata-install shims
  kata-install shims --facts node.json --json
  kata-install shims --artifacts oci-layout:/srv/kata-oci`,
    )
    .action(async (options) => {
      const { runShims } = await import("../commands/node-side.js");
      process.exitCode = await runShims(options, out);
    });
}
