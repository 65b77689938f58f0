// A test host as install tests need one: its container runtime's socket answers and serves CRI, as
// a running containerd's or CRI-O's would (cri-stand-in.ts: for containerd, what the real binary of
// the node's minor loads from the host's configuration); its systemctl, buildHost's, succeeds: a
// restart is a no-op.
import path from "node:path";
import { afterAll } from "vitest";
import { criStandIn } from "./cri-stand-in.js";
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
  const server = await criStandIn(socket, { root: host.root });
  afterAll(() => server.close());
  return { ...host, close: () => server.close() };
}
