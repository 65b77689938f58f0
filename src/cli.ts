// Command-line wiring only. Each command's module is imported when that command runs, so `--help`
// and a mistyped flag cost nothing but commander. The commands are defined in src/cli/, each
// beside the others of its stage; this file holds the program, their order and the entry point.
import { Command } from "commander";
import { artifactsCommand } from "./cli/artifacts.js";
import { entrypointCommand, manifestsCommand, reportCommand } from "./cli/cluster.js";
import { explainCommand, preflightCommand, shimsCommand } from "./cli/decide.js";
import { factsCommand } from "./cli/facts.js";
import { installCommand, planCommand, uninstallCommand } from "./cli/install.js";
import type { Out } from "./cli/options.js";

/**
 * The commands, in the order --help lists them, each under the name it registers (a test holds the
 * two together): a run that names its command builds that one alone. Building all eleven, with
 * every option and help text, is most of what commander costs a start.
 */
export const COMMANDS: ReadonlyArray<readonly [string, (program: Command, out: Out) => void]> = [
  ["facts", factsCommand],
  ["preflight", preflightCommand],
  ["explain", explainCommand],
  ["shims", shimsCommand],
  ["plan", planCommand],
  ["install", installCommand],
  ["uninstall", uninstallCommand],
  ["report", reportCommand],
  ["manifests", manifestsCommand],
  ["entrypoint", entrypointCommand],
  ["artifacts", artifactsCommand],
];

/**
 * The program; with `only`, the name of one of COMMANDS, that command alone (anything else, or
 * none, builds them all: help, `help <command>` and commander's "did you mean" need every name).
 */
export function buildProgram(out: Out = (t) => process.stdout.write(t), only?: string): Command {
  const program = new Command("kata-install")
    .description(
      "Install Kata Containers on a node the careful way: detect what the node is, decide from rules what it can run, render the configuration, show the exact diff, and only then install, reversibly.",
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
  kata-install explain shared_fs --artifacts oci-layout:/srv/kata-oci
                                           why each shim shares files the way it does
  kata-install plan                        what an install would change, as a diff (nothing is written)`,
    );
  const one = COMMANDS.find(([name]) => name === only);
  for (const [, define] of one === undefined ? COMMANDS : [one]) define(program, out);
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
    const command = impliedCommand(args);
    await buildProgram(undefined, command[0]).parseAsync([node, script, ...command]);
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
