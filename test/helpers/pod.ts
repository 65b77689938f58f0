// The DaemonSet's pod as a container runtime would make it, on a test host: a mount namespace
// (unshare -m) where /host holds only the pod's hostPath volumes (bind mounts of the test host's
// paths, read-only where the pod says), its /tmp an emptyDir (tmpfs), the rest of the file system
// read-only (readOnlyRootFilesystem), and the entrypoint run with the pod's capabilities only
// (setpriv: bounding set, no new privileges). What the pod cannot reach fails here as on a node.
import fs from "node:fs";
import path from "node:path";
import { CLI } from "./cli.js";

interface Volume {
  name: string;
  hostPath?: { path: string; type?: string };
  emptyDir?: object;
}
interface Mount {
  name: string;
  mountPath: string;
  readOnly?: boolean;
}
export interface PodSpecPart {
  containers: Array<{
    volumeMounts: Mount[];
    securityContext: { capabilities: { add: string[] } };
    env: Array<{ name: string; value?: string }>;
  }>;
  volumes: Volume[];
}

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

/**
 * The command that starts `entrypoint install` inside the pod made from `spec` on `hostRoot`,
 * with `podDir` for the pod's own directories; `lib64`: the image's /host/lib64 link (Dockerfile).
 */
export function podCommand(
  spec: PodSpecPart,
  hostRoot: string,
  podDir: string,
  lib64: string,
): { file: string; args: string[]; hostDir: string } {
  const container = spec.containers[0] as PodSpecPart["containers"][number];
  const hostDir = path.join(podDir, "host");
  const tmp = path.join(podDir, "tmp");
  fs.mkdirSync(hostDir, { recursive: true });
  fs.mkdirSync(tmp, { recursive: true });
  const lines = ["set -eu"];
  for (const m of [...container.volumeMounts].sort((a, b) => a.mountPath.localeCompare(b.mountPath))) {
    const volume = spec.volumes.find((v) => v.name === m.name) as Volume;
    const target = m.mountPath.startsWith("/host/") ? path.join(hostDir, m.mountPath.slice(5)) : null;
    if (volume.emptyDir !== undefined) {
      if (m.mountPath !== "/tmp")
        throw new Error(`an emptyDir at ${m.mountPath}: the pod helper knows /tmp only`);
      lines.push(`mount -t tmpfs pod-tmp ${quote(tmp)}`);
      continue;
    }
    if (volume.hostPath === undefined || target === null)
      throw new Error(`volume ${m.name}: not a host path under /host`);
    const source = path.join(hostRoot, volume.hostPath.path);
    // The kubelet's hostPath type check: made when it may be, else the pod does not start.
    if (volume.hostPath.type === "DirectoryOrCreate") lines.push(`mkdir -p ${quote(source)}`);
    lines.push(
      `[ -d ${quote(source)} ] || { echo "hostPath type check failed: ${volume.hostPath.path} is not a directory" >&2; exit 1; }`,
      `mkdir -p ${quote(target)}`,
      `mount --bind ${quote(source)} ${quote(target)}`,
    );
    if (m.readOnly) lines.push(`mount -o remount,bind,ro ${quote(target)}`);
  }
  lines.push(`ln -s ${quote(lib64)} ${quote(path.join(hostDir, "lib64"))}`);
  // readOnlyRootFilesystem: everything else this process could reach is read-only now.
  lines.push("mount -o remount,bind,ro /");
  const caps = container.securityContext.capabilities.add.map((c) => `+${c.toLowerCase()}`).join(",");
  lines.push(
    `exec setpriv --no-new-privs --inh-caps=-all --bounding-set=-all,${caps} env TMPDIR=${quote(tmp)} ${quote(process.execPath)} ${quote(CLI)} entrypoint install`,
  );
  return {
    file: "unshare",
    args: ["--mount", "--propagation", "private", "sh", "-c", lines.join("\n")],
    hostDir,
  };
}
