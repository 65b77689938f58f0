// `kata-install facts`: the detect stage alone.
import type { Command } from "commander";
import { hostExecOption, hostRootOption, type Out } from "./options.js";

/** facts: what the node is. */
export function factsCommand(program: Command, out: Out): void {
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
      const { runFacts } = await import("../commands/facts.js");
      process.exitCode = await runFacts(options, out);
    });
}
