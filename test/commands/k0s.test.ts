// k0s, end to end: every shim's kubelet_root_dir is k0s's, decided by a rule that explain names,
// and once the runtime drop-in is written the worker's unit is restarted (k0s merges CRI drop-ins
// of containerd.d into containerd's configuration only when its worker starts).
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { answeringHost } from "../helpers/answering.js";
import { artifactDir } from "../helpers/artifacts.js";
import { runCli } from "../helpers/cli.js";
import { k0sNode } from "../helpers/nodes.js";
import { removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);
const artifacts = artifactDir("4.1.0");
afterAll(() => fs.rmSync(artifacts, { recursive: true, force: true }));

/** systemctl that records its calls and says `active` is the active one of k0s's units. */
const systemctl = (active: string) =>
  `echo "$@" >> "$(dirname "$0")/../../var/log/systemctl.calls"\ncase "$1 $2" in "is-active --quiet") [ "$3" = "${active}" ] ;; *) exit 0 ;; esac`;

async function k0sHost(active: string) {
  const host = await answeringHost(k0sNode());
  fs.mkdirSync(path.join(host.root, "var/log"), { recursive: true });
  fs.writeFileSync(path.join(host.root, "usr/bin/systemctl"), systemctl(active), { mode: 0o755 });
  return host;
}
const calls = (root: string) => fs.readFileSync(path.join(root, "var/log/systemctl.calls"), "utf8");

describe("k0s", () => {
  it("explain: kubelet_root_dir is k0s's, set by rule k0s-kubelet-root over the release's", async () => {
    const host = await k0sHost("k0sworker");
    const run = runCli([
      "explain",
      "--host-root",
      host.root,
      "--artifacts",
      `dir:${artifacts}`,
      "qemu:runtime.kubelet_root_dir",
    ]);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      /^\[qemu\] runtime\.kubelet_root_dir = "\/var\/lib\/k0s\/kubelet"\n {4}set by rule k0s-kubelet-root \(rules\/runtime\.toml\)\n {6}why: .*\n {4}beat {3}"\/var\/lib\/kubelet" from Kata 4\.1\.0's configuration-qemu\.toml\n$/,
    );
  });

  it("install restarts the worker's unit after writing containerd.d/, k0scontroller where that is the active one", async () => {
    for (const active of ["k0sworker", "k0scontroller"]) {
      const host = await k0sHost(active);
      const run = runCli(["install", "--host-root", host.root, "--artifacts", `dir:${artifacts}`]);
      expect(run.status, run.stderr).toBe(0);
      expect(fs.existsSync(path.join(host.root, "etc/k0s/containerd.d/50-kata-install.toml"))).toBe(true);
      expect(run.stdout).toContain(
        "Runtime: restarted k0s, and it is ready (it does not say which handlers it serves).",
      ); // the unit: below
      expect(calls(host.root)).toBe(
        active === "k0sworker"
          ? "is-active --quiet k0sworker\nrestart k0sworker\n"
          : "is-active --quiet k0sworker\nis-active --quiet k0scontroller\nrestart k0scontroller\n",
      );
      const dropIn = fs.readFileSync(
        path.join(
          host.root,
          "opt/kata/share/defaults/kata-containers/runtimes/qemu/config.d/50-kata-install.toml",
        ),
        "utf8",
      );
      expect(dropIn).toMatch(/kubelet_root_dir = "\/var\/lib\/k0s\/kubelet"/);
    }
  });
});
