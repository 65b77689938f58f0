// A real OCI registry for the tests: Debian's docker-registry on a free loopback port, with images
// pushed by the real skopeo. Stopped by the test that started it.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";

export interface Registry {
  host: string;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function startRegistry(): Promise<Registry> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-registry-"));
  const port = await freePort();
  const config = path.join(dir, "config.yml");
  fs.writeFileSync(
    config,
    `version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: ${dir}/data\nhttp:\n  addr: 127.0.0.1:${port}\n`,
  );
  const child: ChildProcess = spawn("docker-registry", ["serve", config], { stdio: "ignore" });
  const host = `127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    const up = await fetch(`http://${host}/v2/`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    host,
    async stop() {
      child.kill("SIGTERM");
      await new Promise((resolve) => child.once("exit", resolve));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Push every image of an OCI layout to host/repo/<tag-name>:<tag>, with skopeo. */
export function pushLayout(layout: string, host: string, repo: string, tag: string): void {
  const index = JSON.parse(fs.readFileSync(path.join(layout, "index.json"), "utf8"));
  for (const m of index.manifests) {
    const name = m.annotations["org.opencontainers.image.ref.name"];
    // --all: an image index goes whole (every platform's image), not only this machine's.
    execFileSync("skopeo", [
      "copy",
      "--all",
      "--quiet",
      "--dest-tls-verify=false",
      `oci:${layout}:${name}`,
      `docker://${host}/${repo}/${name}:${tag}`,
    ]);
  }
}

/**
 * A front for a registry that demands an anonymous bearer token, as public registries do, and can
 * corrupt blobs on the way: proves the token flow and the digest checks against real responses.
 */
export async function tokenFront(
  upstream: string,
  options: { corruptBlobs?: boolean } = {},
): Promise<{ host: string; tokensIssued: () => number; stop: () => Promise<void> }> {
  let issued = 0;
  const port = await freePort();
  const server = http.createServer(async (req, res) => {
    const url = req.url ?? "/";
    if (url.startsWith("/token")) {
      issued++;
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ token: "anonymous-pull" }));
      return;
    }
    if (url.startsWith("/v2/") && req.headers.authorization !== "Bearer anonymous-pull") {
      res.writeHead(401, {
        "www-authenticate": `Bearer realm="http://127.0.0.1:${port}/token",service="test",scope="repository:kata:pull"`,
      });
      res.end();
      return;
    }
    const response = await fetch(`http://${upstream}${url}`, {
      headers: { accept: String(req.headers.accept ?? "*/*") },
    });
    let body = Buffer.from(await response.arrayBuffer());
    if (options.corruptBlobs && url.includes("/blobs/") && body.length > 20) {
      body = Buffer.from(body);
      body[body.length - 10] = (body[body.length - 10] as number) ^ 0xff;
    }
    const headers: Record<string, string> = {};
    for (const key of ["content-type", "docker-content-digest"]) {
      const value = response.headers.get(key);
      if (value) headers[key] = value;
    }
    res.writeHead(response.status, headers);
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    host: `127.0.0.1:${port}`,
    tokensIssued: () => issued,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
