// Whether fs-verity works under containerd's root: the kernel's configuration, the mount holding
// the root (the host's mount table), and for ext4 its own features as tune2fs -l prints them.
import { describe, expect, it } from "vitest";
import { DetectContext } from "../../../src/detect/context.js";
import { detectFsVerity, mountOf } from "../../../src/detect/runtime/fs-verity.js";
import { intelContainerd16 } from "../../helpers/nodes.js";
import { buildHost, type NodeSpec } from "../../helpers/test-host.js";

// The shape of /proc/<pid>/mountinfo (proc(5)): id, parent, major:minor, root, mount point,
// options, optional fields, "-", file system type, source, super options.
const MOUNTINFO = [
  "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro",
  "23 22 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw",
  "40 22 8:17 / /var/lib rw,relatime shared:20 - xfs /dev/sdb1 rw,attr2,inode64",
  "41 40 8:33 / /var/lib/contain\\040erd rw,relatime shared:21 - btrfs /dev/sdc1 rw,space_cache=v2",
  "",
].join("\n");

/** tune2fs -l's header, as e2fsprogs prints it, with `features`. */
const tune2fs = (features: string) =>
  `case "$2" in
  /dev/sda1) cat <<'OUT'
tune2fs 1.47.0 (5-Feb-2023)
Filesystem volume name:   <none>
Filesystem UUID:          4f1a6a7e-0e1c-4c54-9a3e-6c2b0f0d7a11
Filesystem magic number:  0xEF53
Filesystem revision #:    1 (dynamic)
Filesystem features:      ${features}
Filesystem flags:         signed_directory_hash
OUT
  ;;
  *) echo "tune2fs: Bad magic number in super-block while trying to open $2" >&2; exit 1 ;;
esac`;

function node(options: { config?: Record<string, string>; mountinfo?: string; tune2fs?: string }): NodeSpec {
  const spec = intelContainerd16();
  spec.kernel = { ...spec.kernel, config: { ...spec.kernel.config, ...options.config } };
  spec.files = { ...spec.files, ...(options.mountinfo ? { "/proc/1/mountinfo": options.mountinfo } : {}) };
  spec.commands = { ...spec.commands, ...(options.tune2fs ? { "/usr/sbin/tune2fs": options.tune2fs } : {}) };
  return spec;
}

const look = (spec: NodeSpec, root = "/var/lib/containerd") =>
  detectFsVerity(new DetectContext(buildHost(spec).host), root);

describe("the mount holding a path", () => {
  it("is the longest mount point above it, with escaped spaces read back", () => {
    expect(mountOf(MOUNTINFO, "/var/lib/containerd")).toEqual({
      point: "/var/lib",
      fsType: "xfs",
      device: "/dev/sdb1",
    });
    expect(mountOf(MOUNTINFO, "/var/lib/contain erd/x")).toMatchObject({ fsType: "btrfs" });
    expect(mountOf(MOUNTINFO, "/etc")).toMatchObject({ point: "/", fsType: "ext4" });
    expect(mountOf("", "/var")).toBeNull();
  });
});

describe("fs-verity under containerd's root", () => {
  it("a kernel without CONFIG_FS_VERITY: not supported, whatever the file system", async () => {
    const seen = await look(node({ config: { CONFIG_FS_VERITY: "n" }, mountinfo: MOUNTINFO }));
    expect(seen).toMatchObject({
      supported: false,
      path: "/var/lib/containerd/io.containerd.snapshotter.v1.erofs",
    });
    expect(seen.evidence).toMatch(/^the kernel has no fs-verity \(CONFIG_FS_VERITY =n in \/boot\/config-/);
  });

  it("btrfs with the kernel's fs-verity: supported", async () => {
    const seen = await look(
      node({ config: { CONFIG_FS_VERITY: "y" }, mountinfo: MOUNTINFO }),
      "/var/lib/contain erd",
    );
    expect(seen).toMatchObject({ supported: true, fsType: "btrfs" });
  });

  it("ext4: as its features say (tune2fs -l), unknown when it does not answer", async () => {
    const root = "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n";
    const config = { CONFIG_FS_VERITY: "y" };
    const without = await look(
      node({ config, mountinfo: root, tune2fs: tune2fs("has_journal extent 64bit") }),
    );
    expect(without).toMatchObject({ supported: false, fsType: "ext4" });
    expect(without.evidence).toBe(
      "/var/lib/containerd is on ext4 (/dev/sda1) without the verity feature (tune2fs -l)",
    );
    const withIt = await look(
      node({ config, mountinfo: root, tune2fs: tune2fs("has_journal extent verity") }),
    );
    expect(withIt).toMatchObject({ supported: true });
    expect((await look(node({ config, mountinfo: root }))).supported).toBeNull();
  });

  it("xfs and overlay have none; a root not in the mount table is not known", async () => {
    const config = { CONFIG_FS_VERITY: "y" };
    expect(await look(node({ config, mountinfo: MOUNTINFO }))).toMatchObject({
      supported: false,
      evidence: "/var/lib/containerd is on xfs (/var/lib), which has no fs-verity",
    });
    expect((await look(node({ config }))).supported).toBeNull();
  });
});
