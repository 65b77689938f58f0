// `kata-install artifacts`: the release's artifact images.
import type { Command } from "commander";
import type { Out } from "./options.js";

/** artifacts split: Kata's release into its artifact images. */
export function artifactsCommand(program: Command, out: Out): void {
  const artifacts = program
    .command("artifacts")
    .description("work with the artifact sub-containers: split Kata's release into them");
  artifacts
    .command("split")
    .argument(
      "<tarballs...>",
      "all the tarballs of one Kata release (kata-static-, kata-go-static-, kata-tools-static-<version>-<arch>.tar.zst, .tar.xz or .tar.gz), of one architecture or several",
    )
    .description(
      "write one OCI image per artifact of artifacts/catalogue.toml (and of the release's files it does not know); the release's own configurations decide what each shim pulls",
    )
    .requiredOption(
      "--out <target>",
      "oci-layout:DIR, the OCI image layout to write (images are tagged by artifact name; with several architectures, an image index each)",
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
(skopeo copy --all oci:DIR:qemu docker://REGISTRY/REPO/qemu:VERSION).

A mixed fleet: give the tarballs of several architectures at once (their names say which); each
artifact becomes an image index under its name, one manifest per architecture, and each node
pulls its own platform's (skopeo copy --all pushes the index whole).

Example:
  kata-install artifacts split kata-static-4.1.0-amd64.tar.zst kata-go-static-4.1.0-amd64.tar.zst \\
      kata-tools-static-4.1.0-amd64.tar.zst --out oci-layout:/srv/kata-oci`,
    )
    .action(async (tarballs: string[], options) => {
      const { runSplit } = await import("../commands/artifacts.js");
      process.exitCode = await runSplit(tarballs, options, out);
    });
}
