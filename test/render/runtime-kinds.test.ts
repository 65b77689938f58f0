// Each kind of container runtime, planned on a node of that kind: which file takes the Kata
// handlers and what is restarted or reloaded after. The table is keyed by RuntimeKind, so a kind
// added to the enum does not compile until it says, with a node of its kind, what a plan on it
// writes — a layout record copied from another kind, with that one's placement or restart, fails.
import { describe, expect, it } from "vitest";
import type { RuntimeKind } from "../../src/detect/runtime/schema.js";
import {
  amdSnpCrio,
  arm64Containerd20,
  intelContainerd16,
  k0sNode,
  k3sImportingDropIns,
  rke2Node,
} from "../helpers/nodes.js";
import { planOn } from "../helpers/plan.js";
import { buildHost, type NodeSpec } from "../helpers/test-host.js";

function microk8s(): NodeSpec {
  const spec = intelContainerd16();
  spec.commands = {};
  spec.files = {
    "/var/snap/microk8s/current/args/containerd-template.toml":
      'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd]\n  snapshotter = "overlayfs"\n',
    "/var/snap/microk8s/current/args/containerd.toml": "version = 2\n",
  };
  return spec;
}

const KINDS: Record<RuntimeKind, { node: () => NodeSpec; handlersIn: string; after: string | null }> = {
  containerd: {
    node: arm64Containerd20,
    handlersIn: "/etc/containerd/conf.d/50-kata-install.toml",
    after: "restart-runtime containerd",
  },
  crio: {
    node: amdSnpCrio,
    handlersIn: "/etc/crio/crio.conf.d/50-kata-install.conf",
    after: "reload-runtime crio",
  },
  k3s: {
    node: k3sImportingDropIns,
    handlersIn: "/var/lib/rancher/k3s/agent/etc/containerd/config.toml.d/50-kata-install.toml",
    after: "restart-runtime k3s",
  },
  rke2: {
    node: rke2Node,
    handlersIn: "/var/lib/rancher/rke2/agent/etc/containerd/config.toml.d/50-kata-install.toml",
    after: "restart-runtime rke2",
  },
  k0s: {
    node: k0sNode,
    handlersIn: "/etc/k0s/containerd.d/50-kata-install.toml",
    after: "restart-runtime k0s",
  },
  microk8s: {
    node: microk8s,
    handlersIn: "/var/snap/microk8s/current/args/containerd-template.toml",
    after: "restart-runtime snap.microk8s.daemon-containerd",
  },
};

describe.each(Object.entries(KINDS))("%s", (kind, expected) => {
  it("detected as itself; its handlers where it reads them, then restarted or reloaded as it needs", async () => {
    const { decision, changeset } = await planOn(buildHost(expected.node()).host);
    expect(decision.runtime.value).toBe(kind);
    const withHandlers = changeset.changes
      .filter((c) => c.role === "runtime" && c.after?.includes("kata-qemu"))
      .map((c) => c.path);
    expect(withHandlers).toEqual([expected.handlersIn]);
    const actions = changeset.actions
      .filter((a) => a.kind === "restart-runtime" || a.kind === "reload-runtime")
      .map((a) => `${a.kind} ${"target" in a ? a.target : ""}`);
    expect(actions).toEqual(expected.after === null ? [] : [expected.after]);
  });
});
