// Asking the node's container runtime what it serves, through its own socket: the CRI API that the
// kubelet itself uses (RuntimeService Version and Status, as `crictl info` asks), and for containerd
// its introspection API, whose plugin list carries the error a plugin failed to start with. A
// runtime whose socket accepts a connection may still serve no pod at all (containerd with its CRI
// plugin failed on a configuration): this is how install tells the two apart.
import protobuf from "protobufjs";

/**
 * The few messages asked and read, by their field numbers: CRI's from k8s.io/cri-api
 * `pkg/apis/runtime/v1/api.proto` (test/host/cri.test.ts holds them to Debian's copy of that file);
 * containerd's from `api/services/introspection/v1/introspection.proto` (init_err = 7 @ v1.6.20, v1.7.24, v2.1.9) and google.rpc.Status
 * (held to the real containerd's answers by the same test).
 */
const root = protobuf.Root.fromJSON({
  nested: {
    runtime: {
      nested: {
        v1: {
          nested: {
            VersionRequest: { fields: { version: { type: "string", id: 1 } } },
            VersionResponse: {
              fields: {
                version: { type: "string", id: 1 },
                runtime_name: { type: "string", id: 2 },
                runtime_version: { type: "string", id: 3 },
                runtime_api_version: { type: "string", id: 4 },
              },
            },
            StatusRequest: { fields: { verbose: { type: "bool", id: 1 } } },
            RuntimeCondition: {
              fields: {
                type: { type: "string", id: 1 },
                status: { type: "bool", id: 2 },
                reason: { type: "string", id: 3 },
                message: { type: "string", id: 4 },
              },
            },
            RuntimeStatus: { fields: { conditions: { rule: "repeated", type: "RuntimeCondition", id: 1 } } },
            RuntimeHandler: { fields: { name: { type: "string", id: 1 } } },
            StatusResponse: {
              fields: {
                status: { type: "RuntimeStatus", id: 1 },
                // A map<string, string>: protobufjs reads keyType from the JSON form.
                info: { keyType: "string", type: "string", id: 2 } as protobuf.IField,
                runtime_handlers: { rule: "repeated", type: "RuntimeHandler", id: 3 },
              },
            },
          },
        },
      },
    },
    containerd: {
      nested: {
        services: {
          nested: {
            introspection: {
              nested: {
                v1: {
                  nested: {
                    PluginsRequest: { fields: { filters: { rule: "repeated", type: "string", id: 1 } } },
                    Plugin: {
                      fields: {
                        type: { type: "string", id: 1 },
                        id: { type: "string", id: 2 },
                        init_err: { type: "google.rpc.Status", id: 7 },
                      },
                    },
                    PluginsResponse: { fields: { plugins: { rule: "repeated", type: "Plugin", id: 1 } } },
                  },
                },
              },
            },
          },
        },
      },
    },
    google: {
      nested: {
        rpc: {
          nested: {
            Status: { fields: { code: { type: "int32", id: 1 }, message: { type: "string", id: 2 } } },
          },
        },
      },
    },
  },
});

const CRI = "runtime.v1";
const INTROSPECTION = "containerd.services.introspection.v1";

export interface CriVersion {
  runtimeName: string;
  runtimeVersion: string;
  runtimeApiVersion: string;
}

export interface CriStatus {
  /** The RuntimeReady condition: the runtime can run pods. */
  runtimeReady: boolean;
  /** Why not, as the runtime says it (empty when ready). */
  notReadyReason: string;
  /**
   * The handlers it serves: the Status answer's runtime_handlers (CRI 1.30 on), else its verbose
   * configuration's runtime map (containerd 1.x). Null: the answer names none either way.
   */
  handlers: string[] | null;
  /** The default runtime its verbose configuration names, when it names one. */
  defaultRuntime: string | null;
}

export interface PluginFailure {
  /** `type.id`, as `ctr plugins ls` shows it: io.containerd.grpc.v1.cri */
  plugin: string;
  error: string;
}

/** An answer that did not come: the reason as gRPC gives it (UNAVAILABLE, UNIMPLEMENTED, a deadline). */
export class CriError extends Error {
  constructor(
    message: string,
    readonly code: number | null,
  ) {
    super(message);
  }
  /** The service is not there (gRPC's UNIMPLEMENTED): containerd answers, but its CRI plugin did not start. */
  get unimplemented(): boolean {
    return this.code === 12;
  }
}

/** One unary call on a Unix socket, with a deadline; closed after the answer. */
async function call(
  socket: string,
  service: string,
  method: string,
  request: Record<string, unknown>,
  requestType: string,
  responseType: string,
  timeoutMs: number,
): Promise<Record<string, unknown>> {
  // gRPC's client is loaded by the runs that ask a runtime (install, uninstall), not by every start.
  // A CommonJS library: its exports are the module's default (bundled, nothing else is).
  const { default: grpc } = await import("@grpc/grpc-js");
  const reqType = root.lookupType(requestType);
  const resType = root.lookupType(responseType);
  const client = new grpc.Client(`unix:${socket}`, grpc.credentials.createInsecure(), {
    // One call and done: no reconnect backoff that would outlive the deadline.
    "grpc.enable_retries": 0,
  });
  try {
    return await new Promise((resolve, reject) => {
      client.makeUnaryRequest(
        `/${service}/${method}`,
        (value: Record<string, unknown>) => Buffer.from(reqType.encode(reqType.fromObject(value)).finish()),
        (bytes: Buffer) =>
          resType.toObject(resType.decode(bytes), { defaults: true }) as Record<string, unknown>,
        request,
        new grpc.Metadata(),
        { deadline: Date.now() + timeoutMs },
        (error, value) => {
          if (error) reject(new CriError(`${method}: ${error.details || error.message}`, error.code ?? null));
          else resolve(value ?? {});
        },
      );
    });
  } finally {
    client.close();
  }
}

export async function criVersion(socket: string, timeoutMs: number): Promise<CriVersion> {
  const answer = await call(
    socket,
    `${CRI}.RuntimeService`,
    "Version",
    { version: "v1" },
    `${CRI}.VersionRequest`,
    `${CRI}.VersionResponse`,
    timeoutMs,
  );
  return {
    runtimeName: String(answer.runtime_name ?? ""),
    runtimeVersion: String(answer.runtime_version ?? ""),
    runtimeApiVersion: String(answer.runtime_api_version ?? ""),
  };
}

export async function criStatus(socket: string, timeoutMs: number): Promise<CriStatus> {
  const answer = await call(
    socket,
    `${CRI}.RuntimeService`,
    "Status",
    { verbose: true },
    `${CRI}.StatusRequest`,
    `${CRI}.StatusResponse`,
    timeoutMs,
  );
  const conditions = ((answer.status as { conditions?: unknown[] } | undefined)?.conditions ?? []) as {
    type: string;
    status: boolean;
    reason: string;
    message: string;
  }[];
  const ready = conditions.find((c) => c.type === "RuntimeReady");
  const listed = ((answer.runtime_handlers ?? []) as { name: string }[]).map((h) => h.name);
  const config = configOf((answer.info ?? {}) as Record<string, string>);
  return {
    runtimeReady: ready?.status === true,
    notReadyReason:
      ready === undefined
        ? "the runtime reports no RuntimeReady condition"
        : ready.status
          ? ""
          : [ready.reason, ready.message].filter(Boolean).join(": "),
    // The default handler is listed by an empty name: the named one is in the configuration.
    handlers: listed.length > 0 ? listed.filter((n) => n !== "") : config.handlers,
    defaultRuntime: config.defaultRuntime,
  };
}

/**
 * What a verbose Status's `config` says: containerd's CRI configuration as JSON, its runtime map
 * under containerd.runtimes (1.x and 2.x alike) and the default's name beside it.
 */
function configOf(info: Record<string, string>): {
  handlers: string[] | null;
  defaultRuntime: string | null;
} {
  try {
    const config = JSON.parse(info.config ?? "null") as {
      containerd?: { runtimes?: Record<string, unknown>; defaultRuntimeName?: string };
    } | null;
    const runtimes = config?.containerd?.runtimes;
    return {
      handlers: runtimes && typeof runtimes === "object" ? Object.keys(runtimes) : null,
      defaultRuntime:
        typeof config?.containerd?.defaultRuntimeName === "string"
          ? config.containerd.defaultRuntimeName
          : null,
    };
  } catch {
    return { handlers: null, defaultRuntime: null };
  }
}

/** containerd's plugins that failed to start, with the error each started with. */
export async function containerdPluginFailures(socket: string, timeoutMs: number): Promise<PluginFailure[]> {
  return (await containerdPlugins(socket, timeoutMs)).filter((p): p is PluginFailure => p.error !== null);
}

/** containerd's plugins (`type.id`, as `ctr plugins ls` shows them), each with its start error or null. */
export async function containerdPlugins(
  socket: string,
  timeoutMs: number,
): Promise<Array<{ plugin: string; error: string | null }>> {
  const answer = await call(
    socket,
    `${INTROSPECTION}.Introspection`,
    "Plugins",
    { filters: [] },
    `${INTROSPECTION}.PluginsRequest`,
    `${INTROSPECTION}.PluginsResponse`,
    timeoutMs,
  );
  const plugins = (answer.plugins ?? []) as {
    type: string;
    id: string;
    init_err?: { message?: string } | null;
  }[];
  return plugins.map((p) => ({ plugin: `${p.type}.${p.id}`, error: p.init_err?.message || null }));
}
