// A node as kata-deploy 4.1 leaves it: its /opt/kata (the release's files, each shim's configuration
// copied under runtimes/<shim>/ and linked from where the release had it) and its handler tables.
import fs from "node:fs";
import path from "node:path";
import { deployFile } from "./kata-deploy-nodes.js";

/**
 * The block kata-deploy 4.1.0 puts before each shim's configuration it copies (install.rs
 * KATA_DEPLOY_CONFIG_WARNING @ 4.1.0), as its own binary wrote it: the first 13 lines of every
 * runtimes/<shim>/configuration-<shim>.toml of test/fixtures/kata-deploy/nodes-4.1.0, a blank line after.
 */
export const KATA_DEPLOY_HEADER = `${deployFile(
  "containerd-1.7",
  "opt/kata/share/defaults/kata-containers/runtimes/qemu/configuration-qemu.toml",
)
  .split("\n")
  .slice(0, 13)
  .join("\n")}\n\n`;

/** /opt/kata from the artifacts' files (artifactDir), with kata-deploy's copy of each shim's configuration. */
export function kataDeployTree(artifacts: string, root: string, shims: string[], prefix = "/opt/kata"): void {
  const dest = path.join(root, prefix);
  for (const artifact of fs.readdirSync(artifacts))
    fs.cpSync(path.join(artifacts, artifact, "opt/kata"), dest, { recursive: true, verbatimSymlinks: true });
  const defaults = path.join(dest, "share/defaults/kata-containers");
  for (const shim of shims) {
    const dir = path.join(defaults, "runtimes", shim);
    fs.mkdirSync(path.join(dir, "config.d"), { recursive: true });
    fs.writeFileSync(
      path.join(dir, `configuration-${shim}.toml`),
      `${KATA_DEPLOY_HEADER}[hypervisor.qemu]\npath = "/opt/kata/bin/qemu-system-x86_64"\n`,
    );
    // kata-deploy moves the release's file aside and leaves a link in its place.
    fs.rmSync(path.join(defaults, `configuration-${shim}.toml`), { force: true });
    fs.symlinkSync(
      `runtimes/${shim}/configuration-${shim}.toml`,
      path.join(defaults, `configuration-${shim}.toml`),
    );
  }
}

/** kata-deploy's handler table, as its containerd code writes one. */
export function deployHandler(
  plugin: string,
  shim: string,
  configPath = `/opt/kata/share/defaults/kata-containers/runtimes/${shim}/configuration-${shim}.toml`,
): string {
  const table = `plugins."${plugin}".containerd.runtimes.kata-${shim}`;
  return [
    `[${table}]`,
    `runtime_type = "io.containerd.kata-${shim}.v2"`,
    `runtime_path = "/opt/kata/bin/containerd-shim-kata-v2"`,
    "privileged_without_host_devices = true",
    `pod_annotations = ["io.katacontainers.*"]`,
    `container_annotations = ["io.kubernetes.container.terminationMessage*"]`,
    "",
    `[${table}.options]`,
    `ConfigPath = "${configPath}"`,
    "",
  ].join("\n");
}
