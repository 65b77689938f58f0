// Which container runtime runs the node's pods, and what its configuration already holds. The
// kubelet's own --container-runtime-endpoint is the best evidence; after it, a live socket; after
// that the distribution-specific layouts, since k3s, rke2, k0s and microk8s embed containerd.

import { itemAt } from "../../at.js";
import { versionIn } from "../../version.js";
import type { DetectContext } from "../context.js";
import { defineSource } from "../source.js";
import { readContainerdConfig } from "./containerd-config.js";
import { readCrioConfig } from "./crio-config.js";
import { detectFsVerity } from "./fs-verity.js";
import {
  CRIO_CONFIG,
  CRIO_DROP_IN_DIR,
  DETECTION_ORDER,
  RUNTIME_LAYOUTS,
  type RuntimeLayout,
  SYSTEMD_UNIT_DIRS,
} from "./layouts.js";
import { detectMkfsErofs } from "./mkfs-erofs.js";
import { RuntimeFacts } from "./schema.js";

export { RuntimeFacts, RuntimeKind } from "./schema.js";

const KUBELET_FILES = [
  "/var/lib/kubelet/kubeadm-flags.env",
  "/etc/default/kubelet",
  "/var/lib/kubelet/config.yaml",
];

export const runtime = defineSource({
  key: "runtime",
  schema: RuntimeFacts,
  startsProcesses: true,
  unknown: { ...empty(), candidates: [] },
  async detect(ctx: DetectContext): Promise<RuntimeFacts> {
    // kata-deploy's CONTAINERD_CONFIG_FILE_NAME: plain containerd started on another file of /etc/containerd.
    const name = ctx.containerdConfigName;
    const layouts = DETECTION_ORDER.map((kind) => RUNTIME_LAYOUTS[kind]).map((layout) =>
      layout.kind === "containerd" && name !== null
        ? { ...layout, config: `/etc/containerd/${name}` }
        : layout,
    );
    const candidates = (await Promise.all(layouts.map((layout) => evidenceFor(ctx, layout)))).filter(
      (c): c is Candidate => c !== null,
    );
    const endpoint = await kubeletEndpoint(ctx);
    const chosen =
      (endpoint === null
        ? undefined
        : candidates.find((c) => c.layout.socket === endpoint || samePath(c.layout.socket, endpoint))) ??
      candidates.find((c) => c.socketLive) ??
      candidates[0];
    const summary = candidates.map((c) => ({ kind: c.layout.kind, evidence: c.evidence }));
    if (chosen === undefined) return { ...empty(), candidates: summary };
    if (candidates.length > 1 && endpoint === null && candidates.filter((c) => c.socketLive).length !== 1) {
      ctx.problem(
        "runtime",
        `several runtimes are installed (${summary.map((c) => c.kind).join(", ")}) and neither the kubelet's endpoint nor a single live socket tells which one runs pods; chose ${chosen.layout.kind}`,
      );
    }
    const { layout } = chosen;
    const versionRun =
      chosen.binary === null ? null : await ctx.run("runtime", chosen.binary, layout.versionArgs);
    const version = versionRun?.ok ? versionIn(versionRun.stdout) : null;
    const templatePath = await firstExisting(ctx, layout.templates);
    const base = {
      kind: layout.kind,
      family: layout.family,
      placement: layout.handlers.kind,
      version,
      socket: { path: layout.socket, present: chosen.socketLive },
      configPath: layout.config,
      templatePath,
      candidates: summary,
    };
    if (layout.family === "crio") {
      const crio = await readCrioConfig(ctx);
      return {
        ...base,
        configExists: crio.exists,
        configVersion: null,
        imports: crio.files.filter((f) => f !== CRIO_CONFIG),
        dropInDir: CRIO_DROP_IN_DIR,
        handlers: crio.handlers,
        snapshotters: [],
        defaultSnapshotter: null,
      };
    }
    const config = await readContainerdConfig(ctx, layout.config);
    const usual = layout.handlers.kind === "containerd" ? layout.handlers.dir : null;
    const unimported =
      usual === null || config.dropInDir !== null
        ? []
        : (await ctx.list("runtime", usual))
            .filter((name) => name.endsWith(".toml"))
            .map((name) => `${usual}/${name}`)
            .filter((file) => !config.imported.includes(file));
    return {
      ...base,
      configExists: config.exists,
      configProblem: config.problem,
      configVersion: config.version,
      imports: config.imports,
      // k0s always reads containerd.d/ through the imports line it writes itself.
      dropInDir: config.dropInDir,
      ...(unimported.length > 0 ? { unimported } : {}),
      handlers: config.handlers,
      snapshotters: config.snapshotters,
      defaultSnapshotter: config.defaultSnapshotter,
      ...(config.criDisabled.length > 0 ? { criDisabled: config.criDisabled } : {}),
      ...(ctx.erofsUtils
        ? { mkfsErofs: await detectMkfsErofs(ctx), fsVerity: await detectFsVerity(ctx, config.root) }
        : {}),
      ...(ctx.runtimeUnits ? { units: await unitFiles(ctx, layout) } : {}),
    };
  },
});

/** The layout's systemd units with a unit file on the node ("k3s.service"), in the layout's order. */
async function unitFiles(ctx: DetectContext, layout: RuntimeLayout): Promise<string[]> {
  const { restart } = layout;
  if (restart.kind !== "systemd") return [];
  const names = restart.units.map((unit) => (unit.endsWith(".service") ? unit : `${unit}.service`));
  const found = await Promise.all(
    names.map(async (name) => {
      for (const dir of SYSTEMD_UNIT_DIRS) if (await ctx.exists("runtime", `${dir}/${name}`)) return true;
      return false;
    }),
  );
  return names.filter((_, i) => found[i]);
}

interface Candidate {
  layout: RuntimeLayout;
  evidence: string[];
  binary: string | null;
  socketLive: boolean;
}

/** What on the host shows that a runtime is installed; null when nothing does. */
async function evidenceFor(ctx: DetectContext, layout: RuntimeLayout): Promise<Candidate | null> {
  const files = [...layout.binaries, layout.config, ...layout.marks, ...layout.templates];
  const present = await Promise.all(files.map((file) => ctx.exists("runtime", file)));
  const evidence = files.filter((_, i) => present[i]);
  const binary = layout.binaries.find((_, i) => present[i]) ?? null;
  // A socket alone proves nothing: k3s and rke2 share one path. It only ranks installed runtimes.
  if (evidence.length === 0) return null;
  const socketLive = (await ctx.stat("runtime", layout.socket))?.isSocket() ?? false;
  if (socketLive) evidence.push(`${layout.socket} (socket)`);
  return { layout, evidence, binary, socketLive };
}

function empty(): Omit<RuntimeFacts, "candidates"> {
  return {
    kind: null,
    family: null,
    placement: null,
    version: null,
    socket: null,
    configPath: null,
    configExists: false,
    configVersion: null,
    imports: [],
    dropInDir: null,
    templatePath: null,
    handlers: [],
    snapshotters: [],
    defaultSnapshotter: null,
  };
}

/** The kubelet's --container-runtime-endpoint (or containerRuntimeEndpoint), as a socket path. */
async function kubeletEndpoint(ctx: DetectContext): Promise<string | null> {
  for (const file of KUBELET_FILES) {
    const text = await ctx.read("runtime", file);
    if (text === null) continue;
    const match =
      /(?:--container-runtime-endpoint[= ]|containerRuntimeEndpoint:\s*)["']?(?:unix:\/\/)?([^\s"']+)/.exec(
        text,
      );
    if (match) return itemAt(match, 1, "the version group");
  }
  return null;
}

/** /var/run is /run on every current distribution. */
function samePath(a: string, b: string): boolean {
  const norm = (p: string) => p.replace(/^\/var\/run\//, "/run/");
  return norm(a) === norm(b);
}

async function firstExisting(ctx: DetectContext, files: string[]): Promise<string | null> {
  for (const file of files) if (await ctx.exists("runtime", file)) return file;
  return null;
}
