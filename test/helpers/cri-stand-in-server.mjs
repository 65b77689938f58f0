// The stand-in runtimes' server process (cri-stand-in.ts starts one per test process): a process of
// its own, so that a test blocked in spawnSync on the CLI, which asks these servers, does not block
// them too. One process serves every test host's socket, told on stdin, a JSON line each:
//   {"id": N, "serve": SOCKET, "containerd"?: BINARY, "root"?: ROOT, "config"?: CONFIG}  → "N served"
//   {"id": N, "stop": SOCKET}                                                             → "N stopped"
//   node cri-stand-in-server.mjs CRI-API-PROTO
// With a containerd: each Status answers what that real binary loads from ROOT's CONFIG (imports
// resolved inside ROOT, in a private mount namespace); a CONFIG it cannot load answers no Status.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import protobuf from "protobufjs";
import { parse } from "smol-toml";

const [protoPath] = process.argv.slice(2);
const CONFIG_DIRS = ["/etc/containerd", "/var/lib/rancher/k3s/agent/etc/containerd", "/etc/k0s", "/opt"];
const q = (s) => `'${s.replaceAll("'", "'\\''")}'`;

function loaded({ containerd, root, config }) {
  if (!containerd || !fs.existsSync(path.join(root, config))) return null;
  const binds = CONFIG_DIRS.filter((dir) => fs.existsSync(path.join(root, dir))).map(
    (dir) => `mkdir -p ${q(dir)} && mount --bind ${q(path.join(root, dir))} ${q(dir)}`,
  );
  const script = [
    "set -e",
    "mount --make-rprivate /",
    ...binds,
    `exec ${q(containerd)} --config ${q(config)} config dump`,
  ];
  let dump;
  try {
    dump = parse(
      execFileSync("unshare", ["-m", "sh", "-c", script.join("\n")], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
      }),
    );
  } catch (error) {
    const said = String(error.stderr || error.message)
      .split("\n")
      .filter(Boolean)
      .slice(-2)
      .join(" ");
    return { error: `containerd did not start on ${config}: ${said}` };
  }
  // What `config dump` passes over and the daemon does not start on (containerd 2.1.9, seen):
  // an import, named by its path, of a file that is not there.
  try {
    const main = parse(fs.readFileSync(path.join(root, config), "utf8"));
    for (const entry of main.imports ?? [])
      if (!entry.includes("*") && !fs.existsSync(path.join(root, entry)))
        return { error: `containerd did not start on ${config}: open ${entry}: no such file or directory` };
  } catch {
    // read by config dump above already
  }
  const plugins = dump.plugins ?? {};
  const cri =
    plugins["io.containerd.cri.v1.runtime"]?.containerd ??
    plugins["io.containerd.grpc.v1.cri"]?.containerd ??
    {};
  return {
    handlers: Object.keys(cri.runtimes ?? {}),
    defaultRuntime: String(cri.default_runtime_name ?? "runc"),
  };
}

const api = new protobuf.Root().loadSync(protoPath, { keepCase: true });
const coder = (name) => {
  const type = api.lookupType(`runtime.v1.${name}`);
  return {
    serialize: (value) => Buffer.from(type.encode(type.fromObject(value)).finish()),
    deserialize: (bytes) => type.toObject(type.decode(bytes)),
  };
};
const method = (name, request, response) => ({
  path: `/runtime.v1.RuntimeService/${name}`,
  requestStream: false,
  responseStream: false,
  requestSerialize: coder(request).serialize,
  requestDeserialize: coder(request).deserialize,
  responseSerialize: coder(response).serialize,
  responseDeserialize: coder(response).deserialize,
});
/** One server per socket: its Status answers for its own host. */
async function serve(spec) {
  const server = new grpc.Server();
  server.addService(
    {
      Version: method("Version", "VersionRequest", "VersionResponse"),
      Status: method("Status", "StatusRequest", "StatusResponse"),
    },
    {
      Version: (_call, done) =>
        done(null, {
          version: "0.1.0",
          runtime_name: "containerd",
          runtime_version: "stand-in",
          runtime_api_version: "v1",
        }),
      Status: (_call, done) => {
        const now = loaded(spec);
        if (now?.error) return done({ code: grpc.status.UNAVAILABLE, details: now.error }, null);
        const info =
          now === null
            ? {}
            : {
                config: JSON.stringify({
                  containerd: {
                    defaultRuntimeName: now.defaultRuntime,
                    runtimes: Object.fromEntries(now.handlers.map((h) => [h, {}])),
                  },
                }),
              };
        done(null, {
          status: {
            conditions: [
              { type: "RuntimeReady", status: true },
              { type: "NetworkReady", status: true },
            ],
          },
          info,
        });
      },
    },
  );
  fs.rmSync(spec.serve, { force: true });
  fs.mkdirSync(path.dirname(spec.serve), { recursive: true });
  await new Promise((resolve, reject) =>
    server.bindAsync(`unix:${spec.serve}`, grpc.ServerCredentials.createInsecure(), (error) =>
      error ? reject(error) : resolve(),
    ),
  );
  return server;
}

const servers = new Map();
let buffered = "";
process.stdin.on("data", async (chunk) => {
  buffered += chunk;
  const lines = buffered.split("\n");
  buffered = lines.pop() ?? "";
  for (const line of lines.filter(Boolean)) {
    const message = JSON.parse(line);
    if (message.serve) {
      try {
        servers.set(message.serve, await serve(message));
        process.stdout.write(`${message.id} served\n`);
      } catch (error) {
        process.stdout.write(`${message.id} failed ${error.message}\n`);
      }
    } else if (message.stop) {
      servers.get(message.stop)?.forceShutdown();
      servers.delete(message.stop);
      process.stdout.write(`${message.id} stopped\n`);
    }
  }
});
// Gone with the test process that started it (its stdin closes).
process.stdin.on("end", () => process.exit(0));
