// Whether fs-verity can work under containerd's root, where the erofs snapshotter keeps its layers:
// with enable_fsverity = true, containerd's erofs snapshotter enables fs-verity on a file there at
// start, and where it cannot (a kernel without CONFIG_FS_VERITY, an ext4 without its `verity`
// feature) the snapshotter fails and takes the CRI plugin with it: no pod of the node runs (seen
// with containerd 2.1.9: "failed to check fsverity support … operation not supported"). Looked at
// only when EXPERIMENTAL_SETUP_SNAPSHOTTER asks for erofs; read-only: the kernel's configuration,
// the host's mount table, and the file system's own features (tune2fs -l, for ext4).
import * as z from "zod/mini";
import type { DetectContext } from "../context.js";
import { readKernelConfig } from "../kernel-config.js";

export const FsVerity = z.object({
  /** The directory the erofs snapshotter works in. */
  path: z.string(),
  /** The file system holding it, from the host's mount table; null when not found. */
  fsType: z.nullable(z.string()),
  /** true: fs-verity works there; false: it cannot; null: not known (not confirmed either way). */
  supported: z.nullable(z.boolean()),
  /** What says so, to be quoted to the admin. */
  evidence: z.string(),
});
export type FsVerity = z.infer<typeof FsVerity>;

interface Mount {
  point: string;
  fsType: string;
  device: string;
}

/** The mount holding `path`: the longest mount point above it in the host's (PID 1's) mount table. */
export function mountOf(mountinfo: string, path: string): Mount | null {
  let best: Mount | null = null;
  for (const line of mountinfo.split("\n")) {
    // id parent major:minor root mount-point options [optional…] - fstype source super-options
    const [left, right] = line.split(" - ");
    if (left === undefined || right === undefined) continue;
    const point = (left.split(" ")[4] ?? "").replace(/\\(\d{3})/g, (_, o: string) =>
      String.fromCharCode(Number.parseInt(o, 8)),
    );
    const [fsType = "", device = ""] = right.split(" ");
    const under = point === "/" || path === point || path.startsWith(`${point}/`);
    if (under && (best === null || point.length >= best.point.length)) best = { point, fsType, device };
  }
  return best;
}

export async function detectFsVerity(ctx: DetectContext, root: string): Promise<FsVerity> {
  const path = `${root}/io.containerd.snapshotter.v1.erofs`;
  const release = await ctx.readValue("runtime", "/proc/sys/kernel/osrelease");
  const config = await readKernelConfig(ctx, release);
  const symbol = config?.values.get("CONFIG_FS_VERITY");
  if (config !== null && symbol !== "y")
    return {
      path,
      fsType: null,
      supported: false,
      evidence: `the kernel has no fs-verity (CONFIG_FS_VERITY ${symbol === undefined ? "absent from" : `=${symbol} in`} ${config.source})`,
    };
  const table = await ctx.read("runtime", "/proc/1/mountinfo");
  const mount = table === null ? null : mountOf(table, root);
  if (mount === null)
    return {
      path,
      fsType: null,
      supported: null,
      evidence: `the file system of ${root} is not known (/proc/1/mountinfo)`,
    };
  const kernel = config === null ? "; the kernel's configuration was not found" : "";
  if (mount.fsType === "btrfs")
    return {
      path,
      fsType: mount.fsType,
      supported: config === null ? null : true,
      evidence: `${root} is on btrfs (${mount.point}), which has fs-verity with CONFIG_FS_VERITY${kernel}`,
    };
  if (mount.fsType === "ext4") {
    const run = await ctx.run("runtime", "tune2fs", ["-l", mount.device]);
    const features = /^Filesystem features:\s*(.*)$/m.exec(run.stdout)?.[1]?.split(/\s+/) ?? null;
    if (features === null)
      return {
        path,
        fsType: mount.fsType,
        supported: null,
        evidence: `${root} is on ext4 (${mount.device}), whose features tune2fs -l did not say${run.ok ? "" : ` (${run.reason})`}`,
      };
    const has = features.includes("verity");
    return {
      path,
      fsType: mount.fsType,
      supported: has ? (config === null ? null : true) : false,
      evidence: `${root} is on ext4 (${mount.device}) ${has ? "with" : "without"} the verity feature (tune2fs -l)${has ? kernel : ""}`,
    };
  }
  return {
    path,
    fsType: mount.fsType,
    supported: mount.fsType === "f2fs" ? null : false,
    evidence:
      mount.fsType === "f2fs"
        ? `${root} is on f2fs (${mount.device}), whose verity feature is not read here`
        : `${root} is on ${mount.fsType} (${mount.point}), which has no fs-verity`,
  };
}
