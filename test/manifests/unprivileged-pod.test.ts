// The DaemonSet's pod holds no more power than its job needs (kata-deploy 4.1's chart runs the same
// job unprivileged): not privileged, no host PID namespace, a read-only root file system, every
// capability dropped but four, and only the host paths kata-install reads (read-only) and writes.
// Held three ways: the manifest against that list; the entrypoint run in a pod made as a runtime
// makes it (pod.ts: the mounts, read-only root, the capabilities) installing a node for real; and
// detection on this machine with the pod's mounts and power, which says unknown where it cannot
// see and otherwise finds what it finds with the whole host.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Host } from "../../src/host/host.js";
import { hostMounts } from "../../src/manifests/host-mounts.js";
import { artifactDir } from "../helpers/artifacts.js";
import { CLI, runCli } from "../helpers/cli.js";
import { criStandIn } from "../helpers/cri-stand-in.js";
import { podEnv, type Running, startEntrypoint } from "../helpers/entrypoint.js";
import { daemonSet, node, startFakeKube } from "../helpers/kube-api.js";
import { daemonSetOf, objects, removeValuesFiles, valuesFile } from "../helpers/manifests.js";
import { intelContainerd16 } from "../helpers/nodes.js";
import { type PodSpecPart, podCommand } from "../helpers/pod.js";
import { buildHost, removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);
afterAll(removeValuesFiles);
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});
function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

/** The image's /host/lib64 link, read from the Dockerfile that makes it. */
function imageLib64(): string {
  const match = /ln -s (\S+) \/host\/lib64/.exec(fs.readFileSync("Dockerfile", "utf8"));
  expect(match, "the Dockerfile makes /host/lib64").not.toBeNull();
  return (match as RegExpExecArray)[1] as string;
}

type Pod = PodSpecPart & Record<string, unknown>;

function manifestsPod(values: string, ...set: string[]) {
  const out = runCli(["manifests", "-f", valuesFile(values), ...set.flatMap((s) => ["--set", s])]);
  expect(out.status, out.stderr).toBe(0);
  const { pod, env } = daemonSetOf(objects(out.stdout));
  return { pod: pod as unknown as Pod, env };
}

/** host path → "rw" or "ro", from the pod's volumes and mounts. */
function access(pod: Pod): Record<string, string> {
  const container = pod.containers[0] as PodSpecPart["containers"][number];
  const out: Record<string, string> = {};
  for (const m of container.volumeMounts) {
    const volume = pod.volumes.find((v) => v.name === m.name);
    if (volume?.hostPath) out[volume.hostPath.path] = m.readOnly ? "ro" : "rw";
  }
  return out;
}

describe("the DaemonSet's pod", () => {
  it("is not privileged, has no host namespaces, a read-only root and four capabilities", () => {
    const { pod } = manifestsPod("");
    expect(pod.hostPID).toBeUndefined();
    expect(pod.hostNetwork).toBeUndefined();
    expect(pod.hostIPC).toBeUndefined();
    const container = pod.containers[0] as PodSpecPart["containers"][number] & { securityContext: unknown };
    expect(container.securityContext).toEqual({
      privileged: false,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ["ALL"], add: ["CHOWN", "DAC_OVERRIDE", "FOWNER", "SYS_CHROOT"] },
    });
    // Writes only where the install writes: the runtime's configuration, Kata's directory, the
    // systemd units, the lock. Everything else it mounts is read-only, and never the host's /.
    const paths = access(pod);
    expect(
      Object.entries(paths)
        .filter(([, a]) => a === "rw")
        .map(([p]) => p),
    ).toEqual(["/etc/containerd", "/etc/crio", "/etc/systemd/system", "/opt/kata", "/run/lock"]);
    expect(Object.keys(paths)).not.toContain("/");
    expect(Object.keys(paths).sort()).toEqual(
      ["/bin", "/boot", "/dev", "/etc/kata-containers", "/lib", "/proc", "/run/containerd", "/run/systemd"]
        .concat(["/sbin", "/sys", "/usr", "/var/run/crio"])
        .concat(["/etc/containerd", "/etc/crio", "/etc/systemd/system", "/opt/kata", "/run/lock"])
        .sort(),
    );
    for (const v of pod.volumes)
      if (v.hostPath) expect(["Directory", "DirectoryOrCreate"], v.name).toContain(v.hostPath.type);
  });

  it("mounts the distribution's runtime directories, the prefix it installs to and NFD's when asked", () => {
    const k3s = access(
      manifestsPod(
        "",
        "k8s_distribution=k3s",
        "installation_prefix=/usr/local",
        "multi_install_suffix=lts",
        "nfd.feature_file=true",
      ).pod,
    );
    expect(k3s["/var/lib/rancher/k3s/agent/etc/containerd"]).toBe("rw");
    expect(k3s["/run/k3s/containerd"]).toBe("ro");
    expect(k3s["/etc/containerd"]).toBeUndefined();
    expect(k3s["/etc/crio"]).toBeUndefined();
    // Inside /usr (read-only), its own writable mount.
    expect(k3s["/usr/local/opt/kata-lts"]).toBe("rw");
    expect(k3s["/etc/kubernetes/node-feature-discovery/features.d"]).toBe("rw");
    // A health port below 1024 needs the one capability more.
    const low = manifestsPod("health_port = 80").pod.containers[0] as unknown as {
      securityContext: { capabilities: { add: string[] } };
    };
    expect(low.securityContext.capabilities.add).toContain("NET_BIND_SERVICE");
  });

  it("names each host path and capability with its reason in the README", () => {
    const readme = fs.readFileSync("README.md", "utf8");
    const seen = new Set<string>();
    for (const distribution of ["", "k3s", "rke2", "k0s", "microk8s"])
      for (const m of hostMounts({ k8s_distribution: distribution, nfd: { feature_file: true } })) {
        if (seen.has(m.path)) continue;
        seen.add(m.path);
        expect(readme, m.path).toMatch(
          new RegExp(`\\| \`${m.path}\` +\\| ${m.readOnly ? "read" : "write"} +\\|`),
        );
      }
    for (const cap of ["CHOWN", "DAC_OVERRIDE", "FOWNER", "SYS_CHROOT", "NET_BIND_SERVICE"])
      expect(readme).toContain(`\`${cap}\``);
  });

  it("installs a node from inside such a pod: its mounts, a read-only root, its capabilities only", async () => {
    const { pod, env } = manifestsPod('shims = ["qemu"]\ndefault_shim = "qemu"\n');
    const spec = intelContainerd16();
    spec.commands = { ...spec.commands, "/usr/bin/systemctl": "exit 0" };
    // A node's os-release is /usr/lib's, /etc's a link to it (os-release(5)); /etc is not mounted.
    spec.files = {
      ...spec.files,
      "/run/lock/.keep": "",
      // What every node has, and the pod's "Directory" mounts require.
      "/bin/.keep": "",
      "/sbin/.keep": "",
      "/dev/.keep": "",
      "/run/systemd/system/.keep": "",
      "/usr/lib/os-release": spec.osRelease as string,
    };
    const host = buildHost(spec);
    const socket = path.join(host.root, "run/containerd/containerd.sock");
    fs.rmSync(socket);
    const server = await criStandIn(socket);
    const kube = await startFakeKube();
    kube.nodes.set("n1", node("n1", {}));
    kube.daemonsets.set("kube-system/kata-deploy", daemonSet("kube-system", "kata-deploy"));
    const artifacts = artifactDir();
    dirs.push(artifacts);
    const before = fs.readFileSync(path.join(host.root, "etc/containerd/config.toml"), "utf8");
    const command = podCommand(pod, host.root, tempDir("kata-install-pod-"), imageLib64());
    let run: Running | undefined;
    try {
      run = await startEntrypoint(
        podEnv(kube.kubeconfig, command.hostDir, {
          ...env,
          HOST_ROOT: command.hostDir,
          ARTIFACTS: `dir:${artifacts}`,
          DAEMONSET_NAME: "kata-deploy",
        }),
        command,
      );
      // Written through the pod's writable mounts, on the host.
      const after = fs.readFileSync(path.join(host.root, "etc/containerd/config.toml"), "utf8");
      expect(after).not.toBe(before);
      expect(after).toContain("kata-qemu");
      expect(fs.existsSync(path.join(host.root, "opt/kata/bin"))).toBe(true);
      const labels = (kube.nodes.get("n1") as { metadata: { labels: Record<string, string> } }).metadata
        .labels;
      expect(labels["katacontainers.io/shim.qemu"]).toBe("true");
      run.child.kill("SIGTERM");
      expect(await run.exited, run.stderr()).toBe(0);
    } finally {
      run?.child.kill("SIGKILL");
      server.close();
      await kube.close();
    }
  });
});

describe("a host seen through a pod's mounts", () => {
  it("reads a path outside them, or a link out of them, as unknown, not as absent", async () => {
    const root = tempDir("kata-install-mounts-");
    fs.mkdirSync(path.join(root, "etc/containerd"), { recursive: true });
    fs.mkdirSync(path.join(root, "mnt"), { recursive: true });
    fs.writeFileSync(path.join(root, "mnt/real.toml"), "version = 2\n");
    fs.symlinkSync("/mnt/real.toml", path.join(root, "etc/containerd/config.toml"));
    const host = new Host({ root, mounts: ["/etc/containerd/"] });
    const outside = await host.readText("/etc/passwd");
    expect(outside).toEqual({
      ok: false,
      missing: false,
      reason: "is not mounted in this pod (HOST_MOUNTS): unknown",
    });
    const through = await host.readText("/etc/containerd/config.toml");
    expect(through.ok).toBe(false);
    expect(through.ok === false && through.missing).toBe(false);
    expect((await host.lookStat("/etc/containerd")).ok).toBe(true);
    // Nothing is written where the pod cannot see: the path, and what to do.
    await expect(host.resolve("/etc/kubernetes/new.conf")).rejects.toThrow(
      "/etc/kubernetes/new.conf is not mounted in this pod (HOST_MOUNTS): mount it in the DaemonSet",
    );
  });

  it("finds on this machine, with the pod's mounts and capabilities, what it finds with the whole host, or says unknown", () => {
    const { pod, env } = manifestsPod("");
    const podDir = tempDir("kata-install-pod-");
    const command = podCommand(pod, "/", podDir, imageLib64());
    // The pod's command, with `facts` in place of the entrypoint's install.
    const script = (command.args[5] as string).replace(
      / entrypoint install$/,
      ` facts --json --host-root ${command.hostDir} --host-exec chroot`,
    );
    const inPod = spawnSync(command.file, [...command.args.slice(0, 5), script], {
      encoding: "utf8",
      env: { ...process.env, HOST_MOUNTS: env.HOST_MOUNTS as string },
    });
    expect(inPod.status, inPod.stderr).toBe(0);
    const whole = spawnSync(process.execPath, [CLI, "facts", "--json", "--host-root", "/"], {
      encoding: "utf8",
    });
    expect(whole.status, whole.stderr).toBe(0);
    const a = JSON.parse(inPod.stdout);
    const b = JSON.parse(whole.stdout);
    // What it could not see is a problem of its own ("not mounted"), never a permission failure.
    const problems = a.problems as Array<{ reason: string; path?: string }>;
    expect(problems.filter((p) => !p.reason.includes("not mounted"))).toEqual(b.problems);
    for (const key of ["cpu", "kernel", "kvm", "security", "iommu", "os"])
      expect(a[key], key).toEqual(b[key]);
    // Host commands run in the host's root with the pod's capabilities: chroot, the host's loader
    // through the image's lib64 link, the host's libraries.
    const second = podCommand(pod, "/", tempDir("kata-install-pod-"), imageLib64());
    const chroot = (second.args[5] as string).replace(
      /env TMPDIR=.*$/,
      `chroot ${second.hostDir} /usr/bin/systemctl --version`,
    );
    const systemctl = spawnSync(second.file, [...second.args.slice(0, 5), chroot], { encoding: "utf8" });
    expect(systemctl.status, systemctl.stderr).toBe(0);
    expect(systemctl.stdout).toMatch(/^systemd \d+/);
  });
});
