// templates/kata/variants.toml: what differs between the shims that share a hypervisor section,
// and between architectures. Read through its schema: a key no template knows, a value of the
// wrong type or a shim the catalogue does not have is an error naming the file, line and key —
// never a setting silently ignored.
import fs from "node:fs";
import * as z from "zod/mini";
import "../schema.js";
import type { Catalog } from "../decide/catalog.js";
import { InputError, type InputIssue } from "../decide/input-error.js";
import { TomlLines } from "../toml-lines.js";
import type { Templates } from "./templates.js";

const FILE = "kata/variants.toml";

const Variant = z.strictObject({
  kernel: z.string(),
  image: z.string(),
  initrd: z.string(),
  firmware: z.string(),
  firmware_volume: z.string(),
  /** Appended to the architecture's qemu binary: the TEE builds ahead of upstream are their own. */
  qemu_suffix: z.string(),
  kernel_params: z.string(),
  shared_fs: z.string(),
  block_device_driver: z.string(),
  enable_virtio_mem: z.boolean(),
  disable_image_nvdimm: z.boolean(),
  cold_plug_vfio: z.string(),
  pcie_root_port: z.int(),
  static_sandbox_resource_mgmt: z.boolean(),
  confidential_guest: z.boolean(),
  sev_snp_guest: z.boolean(),
  agent_dial_timeout: z.int(),
  hypervisor_name: z.string(),
});
export type Variant = z.infer<typeof Variant>;

const ArchVariant = z.strictObject({
  qemu_binary: z.string(),
  machine_type: z.string(),
  cpu_features: z.string(),
  qemu_firmware: z.string(),
  qemu_firmware_volume: z.string(),
});
export type ArchVariant = z.infer<typeof ArchVariant>;

const VariantsFile = z.strictObject({
  default: Variant,
  shim: z.record(z.string(), z.partial(Variant)),
  arch: z.record(z.string(), ArchVariant),
});

export interface Variants {
  /** A shim's values: the defaults, with its own over them. */
  forShim(shim: string): Variant;
  /** An architecture's values (x86_64's for one the file does not name). */
  forArch(arch: string | null): ArchVariant;
}

const loaded = new WeakMap<Templates, Variants>();

export function loadVariants(templates: Templates, catalog: Catalog): Variants {
  const known = loaded.get(templates);
  if (known) return known;
  const path = `${templates.dir}/${FILE}`;
  const table = templates.data(FILE);
  const issues: InputIssue[] = [];
  // Lines only for an error: the file is read again then, not on every run.
  const lines = () => new TomlLines(fs.readFileSync(path, "utf8"));
  const result = VariantsFile.safeParse(table);
  if (!result.success) {
    const at = lines();
    for (const issue of result.error.issues)
      issues.push({
        file: path,
        line: at.lineOf(issue.path as Array<string | number>),
        key: issue.path.join("."),
        message: issue.message,
      });
    throw new InputError("the templates' variants are invalid", issues);
  }
  const data = result.data;
  for (const shim of Object.keys(data.shim))
    if (!catalog.shims.has(shim))
      issues.push({
        file: path,
        line: lines().lineOf(["shim", shim]),
        key: `shim.${shim}`,
        message: `no shim "${shim}" in the catalogue`,
      });
  if (data.arch.x86_64 === undefined)
    issues.push({
      file: path,
      key: "arch.x86_64",
      message: "the architecture others fall back to is missing",
    });
  if (issues.length > 0) throw new InputError("the templates' variants are invalid", issues);
  const variants: Variants = {
    forShim: (shim) => ({ ...data.default, ...data.shim[shim] }),
    forArch: (arch) => data.arch[arch ?? ""] ?? (data.arch.x86_64 as ArchVariant),
  };
  loaded.set(templates, variants);
  return variants;
}
