// The probes' endpoints: /healthz answers as soon as the process runs (liveness); /readyz only once
// the node is installed and labelled (readiness and startup), so a rolling update moves to the next
// node only when this one is done.
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface HealthServer {
  /** host:port actually bound (port 0 picks one). */
  readonly address: string;
  setReady(ready: boolean, state: string): void;
  close(): Promise<void>;
}

export async function startHealth(host: string, port: number): Promise<HealthServer> {
  let ready = false;
  let state = "starting";
  const server = http.createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    const answer = (code: number, text: string) => {
      res.writeHead(code, { "Content-Type": "text/plain; charset=utf-8" });
      res.end(`${text}\n`);
    };
    if (path === "/healthz") return answer(200, "ok");
    if (path === "/readyz") return ready ? answer(200, state) : answer(503, state);
    answer(404, "not found: /healthz and /readyz are served here");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, resolve);
  });
  const bound = server.address() as AddressInfo;
  return {
    address: `${bound.address}:${bound.port}`,
    setReady(next, text) {
      ready = next;
      state = text;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
