// kata-deploy's nydus-for-kata-tee as kata-install writes it (EXPERIMENTAL_SETUP_SNAPSHOTTER=nydus):
// what kata-deploy's install_nydus_snapshotter puts on the node — the two binaries of its image and
// nydus's configuration under <install dir>/nydus-for-kata-tee/, a systemd unit in
// /etc/systemd/system wanted by containerd's — and what its configure_nydus_snapshotter puts in
// containerd's configuration: the proxy plugin, and snapshot annotations on. The configuration and
// unit are kata-deploy's own, from its image (nydus-source.ts), their placeholders filled in as
// kata-deploy fills them; the unit is enabled as `systemctl enable` would enable it (its WantedBy=
// links), so that the journal records them like any other file and uninstall takes them back.
import type { Decision, NydusSetup } from "../decide/decision.js";
import { installDir } from "../decide/layout.js";
import { NYDUS_FOR_KATA_TEE } from "../decide/nydus-setup.js";
import { fillNydusText, type NydusValues } from "../decide/nydus-source.js";
import { dig } from "../detect/toml.js";
import { type ErofsTable, imagesTable } from "./erofs-config.js";
import type { RenderedFile } from "./kata-config.js";
import { TemplateBug } from "./templates.js";

/** Where systemd reads units the admin (or an installer) adds. */
export const UNIT_DIR = "/etc/systemd/system";

/** The instance's places: kata-deploy's, with its name (the suffix) and the install directory. */
export function nydusPaths(decision: Decision, setup: NydusSetup) {
  const dir = `${installDir(decision)}/${NYDUS_FOR_KATA_TEE}`;
  return {
    dir,
    grpc: `${dir}/containerd-nydus-grpc`,
    overlayfs: `${dir}/nydus-overlayfs`,
    config: `${dir}/config-guest-pulling.toml`,
    unit: `${setup.name}.service`,
    unitFile: `${UNIT_DIR}/${setup.name}.service`,
    /** What `systemctl enable` makes of WantedBy=<containerd's units>. */
    wantsLinks: setup.criUnits.map((unit) => `${UNIT_DIR}/${unit}.wants/${setup.name}.service`),
    socket: `/run/${setup.name}/containerd-nydus-grpc.sock`,
    root: `/var/lib/${setup.name}`,
  };
}

/** A binary copied byte for byte from kata-install's own file system. */
export interface RenderedBlob {
  path: string;
  from: string;
  sha256: string;
  size: number;
  mode: number;
  reason: string;
}

export interface NydusRender {
  files: RenderedFile[];
  blobs: RenderedBlob[];
  links: Array<{ path: string; target: string; reason: string }>;
  /** The unit kata-install runs. */
  unit: string;
}

export function renderNydus(decision: Decision, setup: NydusSetup): NydusRender {
  const p = nydusPaths(decision, setup);
  const units = setup.criUnits.join(" ");
  // What kata-deploy's install_nydus_snapshotter fills in, the same names for the same places.
  const config = fillNydusText(setup.texts.config.text, {
    SNAPSHOTTER_ROOT_DIR: p.root,
    SNAPSHOTTER_GRPC_SOCKET_ADDRESS: p.socket,
    NYDUS_OVERLAYFS_PATH: p.overlayfs,
  } satisfies NydusValues<"config">);
  const unit = fillNydusText(setup.texts.unit.text, {
    CONTAINERD_NYDUS_GRPC_BINARY: p.grpc,
    CONFIG_GUEST_PULLING: p.config,
    // Before= and WantedBy= take a list: every unit containerd may run as here.
    CRI_SERVICE: units,
  } satisfies NydusValues<"unit">);
  const from = `${setup.from.dir}/`;
  const why = (what: string) =>
    `${what} (${setup.source.kind === "env" ? setup.source.name : "EXPERIMENTAL_SETUP_SNAPSHOTTER"}=nydus)`;
  return {
    files: [
      {
        path: p.config,
        content: config,
        mode: 0o644,
        template: setup.texts.config.from,
        reason: why(
          `${setup.name}'s configuration, kata-deploy's from ${from}: guest pull, its socket ${p.socket}`,
        ),
      },
      {
        path: p.unitFile,
        content: unit,
        mode: 0o644,
        template: setup.texts.unit.from,
        reason: why(`${setup.name}'s systemd unit, kata-deploy's from ${from}: started before ${units}`),
      },
    ],
    blobs: (["containerd-nydus-grpc", "nydus-overlayfs"] as const).map((name) => ({
      path: name === "containerd-nydus-grpc" ? p.grpc : p.overlayfs,
      from: setup.binaries[name].from,
      sha256: setup.binaries[name].sha256,
      size: setup.binaries[name].size,
      mode: 0o755,
      reason: why(
        `${name === "containerd-nydus-grpc" ? "the nydus snapshotter" : "its mount helper"}, copied from ${from}`,
      ),
    })),
    links: p.wantsLinks.map((path, i) => ({
      path,
      target: p.unitFile,
      reason: why(
        `${p.unit} enabled: ${setup.criUnits[i]} wants it (what systemctl enable makes of its WantedBy=)`,
      ),
    })),
    unit: p.unit,
  };
}

/** The containerd side: the proxy plugin, and the annotations nydus reads an image's reference from. */
export function nydusTables(decision: Decision, setup: NydusSetup, version: number): ErofsTable[] {
  const p = nydusPaths(decision, setup);
  return [
    {
      table: imagesTable(version),
      settings: [
        {
          key: "disable_snapshot_annotations",
          value: false,
          why: "images' references passed to snapshotters as annotations: nydus tells the guest what to pull from them",
        },
      ],
    },
    {
      table: ["proxy_plugins", setup.name],
      settings: [
        { key: "type", value: "snapshot", why: `kata-deploy's ${setup.name}, run by ${p.unit}` },
        { key: "address", value: p.socket, why: "the snapshotter's socket (its configuration's address)" },
      ],
    },
    {
      table: ["proxy_plugins", setup.name, "exports"],
      settings: [
        { key: "root", value: p.root, why: "where it keeps its snapshots (its configuration's root)" },
      ],
    },
  ];
}

/** Tables of one path merged, in first-seen order: a TOML file may name a table once. */
export function mergeTables(tables: ErofsTable[]): ErofsTable[] {
  const out: ErofsTable[] = [];
  for (const t of tables) {
    const same = out.find((o) => JSON.stringify(o.table) === JSON.stringify(t.table));
    if (same) same.settings.push(...t.settings);
    else out.push({ table: t.table, settings: [...t.settings] });
  }
  return out;
}

/** Parse back: the proxy plugin and the annotations setting read as rendered. */
export function checkNydus(
  parsed: Record<string, unknown>,
  decision: Decision,
  version: number,
  template: string,
): void {
  const setup = decision.nydus;
  if (setup === null) return;
  for (const { table, settings } of nydusTables(decision, setup, version))
    for (const { key, value } of settings)
      if (JSON.stringify(dig(parsed, [...table, key])) !== JSON.stringify(value))
        throw new TemplateBug(
          template,
          `nydus setting ${[...table, key].join(".")} does not read back as rendered`,
        );
}
