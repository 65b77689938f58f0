#!/usr/bin/env node
// Command-line wiring only. Each command's module is imported when that command runs, so `--help`
// and a mistyped flag cost nothing but commander.
import { Command, InvalidArgumentError, Option } from "commander";

const STRATEGIES = ["direct", "root-exec", "chroot", "nsenter"] as const;

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

Examples:
  kata-install facts                       a readable summary of this node
  kata-install facts --json > node.json    the same as one JSON document, to save or replay
  kata-install facts --host-root /host     a node mounted elsewhere (the kata-deploy container)`,
    );

  program
    .command("facts")
    .description("detect the node's facts: what Kata depends on, and what could not be read")
    .addOption(hostRootOption())
    .addOption(hostExecOption())
    .option("--json", "print one JSON document (the Facts contract) and nothing else on stdout")
    .option("--facts <file>", "validate and show a saved facts document instead of reading a node")
    .addHelpText(
      "after",
      `
Nothing on the host is changed. Files or commands that could not be read are listed as problems
(in --json, under "problems") rather than guessed at.

Examples:
  kata-install facts --json --host-root / > $(hostname).json
  kata-install facts --facts node.json`,
    )
    .action(async (options) => {
      const { runFacts } = await import("./commands/facts.js");
      process.exitCode = await runFacts(options, out);
    });

  return program;
}

export function parseTimeout(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError("must be a positive number of seconds");
  return n;
}

async function main(): Promise<void> {
  try {
    await buildProgram().parseAsync(process.argv);
  } catch (error) {
    const { message, name } = error as Error;
    // Errors about the user's input are printed as they are; anything else is a bug: show its stack.
    const known = name === "UserError";
    process.stderr.write(`kata-install: ${known ? message : ((error as Error).stack ?? message)}\n`);
    process.exitCode = 1;
  }
}

await main();
