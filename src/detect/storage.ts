// Block devices and how they are attached. A rule may care whether a node's disks are remote
// (iSCSI, NBD, Ceph RBD, NVMe over fabrics): block-device snapshotters and volume passthrough behave
// differently there.
import * as z from "zod/mini";
import type { DetectContext } from "./context.js";
import { defineSource } from "./source.js";

export const Transport = z.enum([
  "local",
  "virtio",
  "nvme",
  "iscsi",
  "nbd",
  "rbd",
  "nvme-fabrics",
  "virtual",
]);
export type Transport = z.infer<typeof Transport>;

const REMOTE: ReadonlySet<Transport> = new Set(["iscsi", "nbd", "rbd", "nvme-fabrics"]);

export const BlockDevice = z.object({
  name: z.string(),
  sizeBytes: z.nullable(z.number()),
  transport: Transport,
  remote: z.boolean(),
});

export const StorageFacts = z.object({ blockDevices: z.array(BlockDevice) });
export type StorageFacts = z.infer<typeof StorageFacts>;

export const storage = defineSource({
  key: "storage",
  schema: StorageFacts,
  startsProcesses: false,
  unknown: { blockDevices: [] },
  async detect(ctx: DetectContext): Promise<StorageFacts> {
    const names = await ctx.list("storage", "/sys/block");
    const blockDevices = await Promise.all(
      names.map(async (name) => {
        const sectors = await ctx.readValue("storage", `/sys/block/${name}/size`);
        const transport = await transportOf(ctx, name);
        return {
          name,
          // sysfs counts 512-byte sectors whatever the device's own sector size.
          sizeBytes: sectors !== null && /^\d+$/.test(sectors) ? Number(sectors) * 512 : null,
          transport,
          remote: REMOTE.has(transport),
        };
      }),
    );
    return { blockDevices };
  },
});

async function transportOf(ctx: DetectContext, name: string): Promise<Transport> {
  if (/^nbd\d/.test(name)) return "nbd";
  if (/^rbd\d/.test(name)) return "rbd";
  if (/^(loop|ram|zram|dm-|md)\d*/.test(name)) return "virtual";
  if (/^nvme/.test(name)) {
    // The controller's transport: "pcie" locally; "tcp", "rdma" or "fc" over fabrics.
    const transport =
      (await ctx.readValue("storage", `/sys/block/${name}/device/transport`)) ??
      (await ctx.readValue("storage", `/sys/block/${name}/device/device/transport`));
    return transport !== null && transport !== "pcie" ? "nvme-fabrics" : "nvme";
  }
  const target = (await ctx.readlink("storage", `/sys/block/${name}`)) ?? "";
  if (/\/session\d+\//.test(target)) return "iscsi";
  if (/\/virtio\d+\//.test(target) || /^vd[a-z]+$/.test(name)) return "virtio";
  return "local";
}
