// An API server that accepts and never answers: every call kata-install makes has a deadline
// (KATA_INSTALL_KUBE_TIMEOUT), said in the error; neither report nor the entrypoint hangs.
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { requestTimeoutMs } from "../../src/kube/api.js";
import { CLI, runCliAsync } from "../helpers/cli.js";
import { podEnv } from "../helpers/entrypoint.js";
import { intelContainerd16 } from "../helpers/nodes.js";
import { buildHost } from "../helpers/test-host.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-silent-kube-"));
const sockets: net.Socket[] = [];
const silent = net.createServer((socket) => {
  // Accepted, read, never answered.
  sockets.push(socket);
  socket.on("data", () => {});
});
await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
const port = (silent.address() as net.AddressInfo).port;
const kubeconfig = path.join(dir, "kubeconfig");
fs.writeFileSync(
  kubeconfig,
  `apiVersion: v1
kind: Config
clusters:
- name: silent
  cluster: {server: "http://127.0.0.1:${port}", insecure-skip-tls-verify: true}
users:
- name: u
  user: {}
contexts:
- name: c
  context: {cluster: silent, user: u}
current-context: c
`,
);
afterAll(() => {
  for (const s of sockets) s.destroy();
  silent.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("a deadline on every Kubernetes API call", () => {
  it("report --kubeconfig: fails, saying which call had no answer within how long", async () => {
    const started = Date.now();
    const run = await runCliAsync(["report", "--kubeconfig", kubeconfig], {
      env: { KATA_INSTALL_KUBE_TIMEOUT: "1" },
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`http://127.0.0.1:${port}: list nodes: no answer within 1 s`);
    // Bounded by the deadline, not by the silent server: generous for a busy machine.
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it("KATA_INSTALL_KUBE_TIMEOUT: seconds, 30 by default; anything else refused by name", () => {
    expect(requestTimeoutMs({})).toBe(30_000);
    expect(requestTimeoutMs({ KATA_INSTALL_KUBE_TIMEOUT: "2.5" })).toBe(2_500);
    expect(() => requestTimeoutMs({ KATA_INSTALL_KUBE_TIMEOUT: "soon" })).toThrow(
      'environment: KATA_INSTALL_KUBE_TIMEOUT: expected seconds (more than 0, at most 3600), got "soon"',
    );
  });
});

describe("the entrypoint against an API server that never answers", () => {
  it("is not ready meanwhile, and stops at the deadline saying so, rather than hang", async () => {
    const host = buildHost(intelContainerd16());
    const child = spawn(process.execPath, [CLI, "entrypoint", "install"], {
      env: {
        ...process.env,
        ...podEnv(kubeconfig, host.root),
        HEALTH_ADDRESS: "127.0.0.1",
        HEALTH_PORT: "0",
        KATA_INSTALL_KUBE_TIMEOUT: "2",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    // While it waits on the API: /readyz says not ready.
    for (let i = 0; i < 100 && !/Health: .* on (\S+)/.test(stderr); i++)
      await new Promise((r) => setTimeout(r, 50));
    const address = /Health: \/healthz and \/readyz on (\S+)/.exec(stderr)?.[1];
    expect(address, stderr).toBeDefined();
    const ready = await fetch(`http://${address}/readyz`).catch(() => null);
    if (ready !== null) expect(ready.status).toBe(503);
    const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r("hung"), 25_000))]);
    if (code === "hung") child.kill("SIGKILL");
    expect(code).not.toBe("hung");
    expect(code).not.toBe(0);
    expect(stderr).toContain("no answer within 2 s");
  });
});
