// A test host as install tests need one: its container runtime's socket answers, as a running
// containerd's or CRI-O's would (its systemctl, buildHost's, succeeds: a restart is a no-op).
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterAll } from "vitest";
import { intelContainerd16 } from "./nodes.js";
import { buildHost, type NodeSpec, type TestHost } from "./test-host.js";

export interface AnsweringHost extends TestHost {
  /** Stop answering (the test file's afterAll does it too). */
  close(): void;
}

export async function answeringHost(
  spec: NodeSpec = intelContainerd16(),
  edit?: (root: string) => void,
): Promise<AnsweringHost> {
  const host = buildHost(spec);
  edit?.(host.root);
  const socket = path.join(host.root, (spec.sockets ?? ["/run/containerd/containerd.sock"])[0] as string);
  fs.rmSync(socket, { force: true });
  const server = net.createServer((c) => c.end());
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  afterAll(() => server.close());
  return { ...host, close: () => server.close() };
}
