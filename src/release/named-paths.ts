// The paths a shim's configuration names: its hypervisor, guest kernel, image or initrd, firmware,
// virtiofsd (when it shares files with it), jailer, guest extension images. The one reading of a
// configuration's paths: what the plan checks on the node, and what a release's shim needs pulled.
// (valid_*_paths are not read: they are the globs annotations may choose from, not files in use.)
import { isTable } from "../detect/toml.js";

/** A path a shim's configuration (or its handler) names. */
export interface NamedPath {
  shim: string;
  /** The key that names it ("hypervisor.qemu.kernel"), or "handler shim binary" / "handler ConfigPath". */
  key: string;
  path: string;
  program: boolean;
}

/** Keys of a [hypervisor.*] table that name a file, and whether it is run. */
const PATH_KEYS: Record<string, boolean> = {
  path: true,
  ctlpath: true,
  jailer_path: true,
  virtio_fs_daemon: true,
  kernel: false,
  image: false,
  initrd: false,
  firmware: false,
  firmware_volume: false,
};
/** shared_fs values that start virtiofsd: otherwise virtio_fs_daemon names a file never used. */
const VIRTIOFS = new Set(["virtio-fs", "virtio-fs-nydus"]);

/** The paths one effective configuration names. */
export function pathsIn(shim: string, config: Record<string, unknown>): NamedPath[] {
  const out: NamedPath[] = [];
  const hypervisors = isTable(config.hypervisor) ? config.hypervisor : {};
  for (const [section, table] of Object.entries(hypervisors)) {
    if (!isTable(table)) continue;
    const sharedFs = typeof table.shared_fs === "string" ? table.shared_fs : "";
    for (const [key, program] of Object.entries(PATH_KEYS)) {
      const value = table[key];
      if (typeof value !== "string" || value === "") continue;
      if (key === "virtio_fs_daemon" && !VIRTIOFS.has(sharedFs)) continue;
      out.push({ shim, key: `hypervisor.${section}.${key}`, path: value, program });
    }
    const extensions = table.guest_extension_images;
    if (Array.isArray(extensions))
      for (const [i, ext] of extensions.entries())
        if (isTable(ext) && typeof ext.path === "string" && ext.path !== "")
          out.push({
            shim,
            key: `hypervisor.${section}.guest_extension_images[${i}].path`,
            path: ext.path,
            program: false,
          });
  }
  return out;
}
