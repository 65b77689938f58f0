// PCI devices from sysfs: what could be passed through to a Kata VM (GPUs, SR-IOV NICs), which
// driver holds each one, and its IOMMU group (VFIO passes whole groups).
import path from "node:path";
import * as z from "zod/mini";
import type { DetectContext } from "./context.js";
import { defineSource } from "./source.js";

export const PciDevice = z.object({
  address: z.string(),
  /** Hex without "0x", lower case, as lspci -n prints them: vendor "10de", class "030200". */
  vendor: z.nullable(z.string()),
  device: z.nullable(z.string()),
  class: z.nullable(z.string()),
  driver: z.nullable(z.string()),
  iommuGroup: z.nullable(z.string()),
  sriovTotalVfs: z.nullable(z.int()),
  sriovNumVfs: z.nullable(z.int()),
  /** For a virtual function: the address of its physical function. */
  physfn: z.nullable(z.string()),
});
export type PciDevice = z.infer<typeof PciDevice>;

export const PciFacts = z.object({ devices: z.array(PciDevice) });
export type PciFacts = z.infer<typeof PciFacts>;

const DEVICES = "/sys/bus/pci/devices";

export const pci = defineSource({
  key: "pci",
  schema: PciFacts,
  startsProcesses: false,
  unknown: { devices: [] },
  async detect(ctx: DetectContext): Promise<PciFacts> {
    const addresses = await ctx.list("pci", DEVICES);
    const devices = await Promise.all(addresses.map((address) => readDevice(ctx, address)));
    return { devices };
  },
});

async function readDevice(ctx: DetectContext, address: string): Promise<PciDevice> {
  const dir = `${DEVICES}/${address}`;
  const hex = async (file: string) => {
    const value = await ctx.readValue("pci", `${dir}/${file}`);
    return value === null ? null : value.replace(/^0x/i, "").toLowerCase();
  };
  const count = async (file: string) => {
    const value = await ctx.readValue("pci", `${dir}/${file}`);
    return value !== null && /^\d+$/.test(value) ? Number(value) : null;
  };
  const link = async (file: string) => {
    const target = await ctx.readlink("pci", `${dir}/${file}`);
    return target === null ? null : path.posix.basename(target);
  };
  return {
    address,
    vendor: await hex("vendor"),
    device: await hex("device"),
    class: await hex("class"),
    driver: await link("driver"),
    iommuGroup: await link("iommu_group"),
    sriovTotalVfs: await count("sriov_totalvfs"),
    sriovNumVfs: await count("sriov_numvfs"),
    physfn: await link("physfn"),
  };
}
