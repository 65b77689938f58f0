// What the start-up snapshot's build plans once (src/snapshot.ts), so that the functions a plan
// calls are compiled then and their code kept in the blob: a small node of its own and a release of
// its own, made in a scratch directory and removed after. Made up, and named so: nothing of it is
// kept for a real run but the compiled code (every cache that outlives a run is keyed by content).
// A node with nothing on it stops the plan at the facts; this one goes through every stage, which
// compiles about half a plan's code more (plan and install ~10 ms sooner, bench/startup-snapshot.ts).
// No process is started (the build of a snapshot must not): the one answer detection asks of a
// binary comes from a probe cache given to the plan.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadArtifactCatalogue } from "./artifacts/catalogue.js";
import { runPlan } from "./commands/plan.js";
import { DEFAULT_PREFIX, probeKey } from "./detect/context.js";
import { detectFacts } from "./detect/facts.js";
import { ProbeCache } from "./detect/probe-cache.js";
import { openHost } from "./host/open.js";
import { renderFactsSummary } from "./output/facts-summary.js";
import { GO_CONFIG_DIR } from "./release/release.js";

/** The node: an x86_64 machine with KVM's modules loaded and containerd 2's configuration. */
const NODE: Record<string, string> = {
  "etc/os-release": 'ID=debian\nVERSION_ID="12"\nPRETTY_NAME="a made-up node of the snapshot build"\n',
  "proc/sys/kernel/arch": "x86_64\n",
  "proc/sys/kernel/osrelease": "6.1.0-0-amd64\n",
  "proc/cpuinfo":
    "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: made up\nflags\t\t: fpu lm sse4_1 vmx ept vpid\n\n",
  "proc/modules": ["kvm", "kvm_intel", "vhost", "vhost_net", "vhost_vsock"]
    .map((m) => `${m} 16384 0 - Live 0x0000000000000000\n`)
    .join(""),
  "proc/filesystems": "nodev\tproc\nnodev\toverlay\n\text4\n",
  "proc/cmdline": "root=/dev/sda1 ro\n",
  "etc/containerd/config.toml":
    'version = 2\n\n[plugins."io.containerd.grpc.v1.cri".containerd]\n  default_runtime_name = "runc"\n',
  "usr/bin/containerd": "#!/bin/sh\n",
  "usr/bin/systemctl": "#!/bin/sh\n",
};

/** The one shim of the release: its configuration names a file of each kind a shim pulls. */
const SHIM_CONFIG = `[hypervisor.qemu]
path = "/opt/kata/bin/qemu-system-x86_64"
kernel = "/opt/kata/share/kata-containers/vmlinux.container"
image = "/opt/kata/share/kata-containers/kata-containers.img"
shared_fs = "virtio-fs"
virtio_fs_daemon = "/opt/kata/libexec/virtiofsd"

[agent.kata]

[runtime]
`;

const write = (file: string, text: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text, { mode: text.startsWith("#!") ? 0o755 : 0o644 });
};

/** The made-up node and release in `scratch`: the node's root, and the release as a dir: source. */
export async function makeWarmUpNode(scratch: string): Promise<{ root: string; artifacts: string }> {
  const root = path.join(scratch, "node");
  for (const [file, text] of Object.entries(NODE)) write(path.join(root, file), text);
  fs.mkdirSync(path.join(root, "sys/module/kvm_intel"), { recursive: true });
  // The release: every artifact of the catalogue with each file it names outright.
  const artifacts = path.join(scratch, "artifacts");
  for (const [name, spec] of loadArtifactCatalogue())
    for (const file of spec.paths)
      if (!/[*?[{]/.test(file) && !file.startsWith("share/defaults/") && file !== "versions.yaml")
        write(
          path.join(artifacts, name, "opt/kata", file),
          /^(bin|libexec)\/|\/bin\//.test(file) ? "#!/bin/sh\n" : "0.0.0\n",
        );
  write(path.join(artifacts, "meta/opt/kata", GO_CONFIG_DIR, "configuration-qemu.toml"), SHIM_CONFIG);
  // containerd's answer to --version, as the probe cache of an earlier install keeps it.
  const host = await openHost(root);
  const probes = new ProbeCache(host, DEFAULT_PREFIX);
  const containerd = "/usr/bin/containerd";
  const identity = await probes.identity(containerd);
  if (identity === null) throw new Error(`the warm-up node has no ${containerd}`);
  probes.set(probeKey(containerd, ["--version"]), identity, {
    ok: true,
    exitCode: 0,
    stdout: "containerd github.com/containerd/containerd/v2 v2.0.4 0000000\n",
    stderr: "",
    timedOut: false,
    reason: "",
  });
  write(path.join(root, probes.file), probes.serialize());
  return { root, artifacts };
}

/** Plan the made-up node once; what it printed is returned (for tests: the build drops it). */
export async function warmUpPlan(): Promise<{ json: string; text: string; facts: string }> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-snapshot-"));
  try {
    const { root, artifacts } = await makeWarmUpNode(scratch);
    const host = await openHost(root);
    // The plan command itself, as JSON and as text; the facts as the facts command shows them.
    const options = {
      hostRoot: root,
      artifacts: `dir:${artifacts}`,
      // The made-up node has no /dev/kvm (a device only mknod(2) makes): the shim is asked for.
      shims: "qemu",
      ignorePreflightErrors: "all",
    };
    let json = "";
    let text = "";
    await runPlan({ ...options, json: true }, (t) => {
      json += t;
    });
    await runPlan(options, (t) => {
      text += t;
    });
    const facts = await detectFacts(host, { probes: await ProbeCache.load(host, DEFAULT_PREFIX) });
    return { json, text, facts: renderFactsSummary(facts, { hostRoot: root }) };
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}
