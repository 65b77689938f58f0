// The options commands share, each defined once: where the node is, how its commands run, and
// what every command that decides (preflight to install) takes.
import { type Command, Option } from "commander";
import { STRATEGY_NAMES as STRATEGIES } from "../host/strategy-names.js";

/** Where a command's output goes (stdout, or a test's buffer). */
export type Out = (text: string) => void;

export function hostRootOption(): Option {
  return new Option(
    "--host-root <dir>",
    "the node's root directory: / on the node, /host in the kata-deploy container",
  ).default("/");
}

export function hostExecOption(): Option {
  return new Option(
    "--host-exec <strategy>",
    "how host commands run: direct (root /), root-exec (run the file under the root: test hosts), chroot or nsenter (container)",
  ).choices(STRATEGIES);
}

/** The options of every command that decides: the node (or its saved facts) and the admin's inputs. */
export const decideOptions = (
  command: Command,
  factsHelp = "decide from a saved facts document (facts --json) instead of reading the node",
) =>
  command
    .addOption(hostRootOption())
    .addOption(hostExecOption())
    .option("--facts <file>", factsHelp)
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
