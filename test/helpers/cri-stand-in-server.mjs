// The stand-in runtime's server process (cri-stand-in.ts starts it): a process of its own, so that a
// test blocked in spawnSync on the CLI, which asks this server, does not block the server too.
//   node cri-stand-in-server.mjs SOCKET CRI-API-PROTO [CONTAINERD ROOT CONFIG]
// With CONTAINERD: each Status answers what that real binary loads from ROOT's CONFIG (imports
// resolved inside ROOT, in a private mount namespace); a CONFIG it cannot load answers no Status.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import protobuf from "protobufjs";
import { parse } from "smol-toml";

const [socket, protoPath, containerd, root, config] = process.argv.slice(2);
const CONFIG_DIRS = ["/etc/containerd", "/var/lib/rancher/k3s/agent/etc/containerd", "/etc/k0s"];
const q = (s) => `'${s.replaceAll("'", "'\\''")}'`;

function loaded() {
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
      const now = loaded();
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
fs.rmSync(socket, { force: true });
fs.mkdirSync(path.dirname(socket), { recursive: true });
server.bindAsync(`unix:${socket}`, grpc.ServerCredentials.createInsecure(), (error) => {
  if (error) {
    console.error(error.message);
    process.exit(1);
  }
  console.log("ready");
});
// Gone with the test process that started it.
const parent = process.ppid;
setInterval(() => {
  try {
    process.kill(parent, 0);
  } catch {
    process.exit(0);
  }
}, 1000).unref();
process.on("SIGTERM", () => {
  server.forceShutdown();
  process.exit(0);
});
