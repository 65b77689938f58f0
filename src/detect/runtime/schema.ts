import * as z from "zod";

export const RuntimeKind = z.enum(["containerd", "crio", "k3s", "rke2", "k0s", "microk8s"]);
export type RuntimeKind = z.infer<typeof RuntimeKind>;

export const RuntimeHandler = z.object({
  name: z.string(),
  runtimeType: z.string().nullable(),
  runtimePath: z.string().nullable(),
  /** The Kata (or other) configuration file the handler points at. */
  configPath: z.string().nullable(),
  /** The file that declares it. */
  file: z.string(),
});
export type RuntimeHandler = z.infer<typeof RuntimeHandler>;

export const Snapshotter = z.object({
  name: z.string(),
  kind: z.enum(["builtin", "proxy"]),
  /** devmapper: its pool; proxy plugins: their socket. */
  detail: z.string().nullable(),
});
export type Snapshotter = z.infer<typeof Snapshotter>;

export const RuntimeFacts = z.object({
  kind: RuntimeKind.nullable(),
  version: z.string().nullable(),
  socket: z.object({ path: z.string(), present: z.boolean() }).nullable(),
  configPath: z.string().nullable(),
  configExists: z.boolean(),
  /** containerd's root `version` key (1, 2, 3 or 4); null when absent or not containerd. */
  configVersion: z.number().int().nullable(),
  imports: z.array(z.string()),
  /** A directory of drop-ins that the runtime already reads (containerd `imports` glob, CRI-O's crio.conf.d). */
  dropInDir: z.string().nullable(),
  /** k3s/rke2/microk8s generate their containerd config from this template. */
  templatePath: z.string().nullable(),
  handlers: z.array(RuntimeHandler),
  snapshotters: z.array(Snapshotter),
  defaultSnapshotter: z.string().nullable(),
  /** Every runtime that left evidence on the node, and the evidence: why `kind` is what it is. */
  candidates: z.array(z.object({ kind: RuntimeKind, evidence: z.array(z.string()) })),
});
export type RuntimeFacts = z.infer<typeof RuntimeFacts>;
