// The erofs snapshotter's settings in kata-install's containerd drop-in: what kata-deploy's
// configure_erofs_snapshotter writes, in the plugin tables of the drop-in's config version. One
// list feeds both the template and the parse-back check, so what is written is what is checked.
import type { ErofsSetup } from "../decide/decision.js";
import { dig } from "../detect/toml.js";
import { TemplateBug } from "./templates.js";

export interface ErofsTable {
  /** The table's key path ("plugins", "io.containerd.snapshotter.v1.erofs"). */
  table: string[];
  settings: Array<{ key: string; value: unknown; why: string }>;
}

/** The options kata-deploy gives mkfs.erofs (--mkfs-time and --sort: erofs-utils 1.8.2 or later). */
export const MKFS_OPTIONS = ["-T0", "--mkfs-time", "--sort=none"];

/** Image pulls are the images plugin's from config version 3 on; before, the CRI plugin's containerd table's. */
export function imagesTable(version: number): string[] {
  return version >= 3
    ? ["plugins", "io.containerd.cri.v1.images"]
    : ["plugins", "io.containerd.grpc.v1.cri", "containerd"];
}

export function erofsTables(setup: ErofsSetup, version: number): ErofsTable[] {
  const dmverity = setup.dmverity.value;
  const memory = setup.snapshotterMode.value === "memory";
  const images = imagesTable(version);
  return [
    {
      table: images,
      settings: [
        {
          key: "discard_unpacked_layers",
          value: false,
          why: "layers' blobs stay in the content store once unpacked, as kata-deploy sets it for erofs",
        },
      ],
    },
    {
      table: ["plugins", "io.containerd.service.v1.diff-service"],
      settings: [
        {
          key: "default",
          value: ["erofs", "walking"],
          why: "layers are applied by the erofs differ, the walking one for the other snapshotters",
        },
      ],
    },
    {
      table: ["plugins", "io.containerd.snapshotter.v1.erofs"],
      settings: [
        {
          key: "enable_fsverity",
          value: setup.fsverity.value,
          why: setup.fsverity.value
            ? "fs-verity on each layer's erofs image"
            : "no fs-verity: not known to work under containerd's root (the snapshotter would fail to start)",
        },
        { key: "set_immutable", value: true, why: "each layer's erofs image made immutable" },
        {
          key: "dmverity_mode",
          value: dmverity ? "on" : "off",
          why: dmverity
            ? "EROFS_DMVERITY: layers verified by dm-verity"
            : "no dm-verity (EROFS_DMVERITY unset)",
        },
        {
          key: "default_size",
          value: memory ? "0" : "10G",
          why: memory
            ? "EROFS_SNAPSHOTTER_MODE=memory: the writable layer in memory"
            : "the writable layer on disk, 10G (EROFS_SNAPSHOTTER_MODE disk, the default)",
        },
        ...(setup.mergeMode.value === "merged"
          ? [
              {
                key: "max_unmerged_layers",
                value: 0,
                why: "merged (EROFS_MERGE_MODE's default): an image's layers in one fsmeta.erofs, which runtime-rs reads",
              },
            ]
          : []),
      ],
    },
    {
      table: ["plugins", "io.containerd.differ.v1.erofs"],
      settings: [
        {
          key: "enable_dmverity",
          value: dmverity,
          why: dmverity ? "EROFS_DMVERITY: dm-verity data built with each layer" : "no dm-verity",
        },
        {
          key: "mkfs_options",
          value: MKFS_OPTIONS,
          why: "fixed timestamps, entries in the tar's own order: needs erofs-utils 1.8.2 or later on the node",
        },
        { key: "enable_tar_index", value: false, why: "layers converted whole, not indexed" },
      ],
    },
  ];
}

/** Parse back: every erofs setting reads as rendered (and max_unmerged_layers is absent when unmerged). */
export function checkErofs(
  parsed: Record<string, unknown>,
  setup: ErofsSetup | null,
  version: number,
  template: string,
): void {
  if (setup === null) return;
  const tables = erofsTables(setup, version);
  for (const { table, settings } of tables)
    for (const { key, value } of settings)
      if (JSON.stringify(dig(parsed, [...table, key])) !== JSON.stringify(value))
        throw new TemplateBug(
          template,
          `erofs setting ${[...table, key].join(".")} does not read back as rendered`,
        );
  if (
    setup.mergeMode.value === "unmerged" &&
    dig(parsed, ["plugins", "io.containerd.snapshotter.v1.erofs", "max_unmerged_layers"]) !== undefined
  )
    throw new TemplateBug(template, "max_unmerged_layers is set, and the erofs merge mode is unmerged");
}
