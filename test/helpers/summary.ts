// A node summary as an Intel node with containerd 1.7 would publish it.
import type { NodeSummary } from "../../src/kube/summary.js";

export const SUMMARY: NodeSummary = {
  v: 1,
  arch: "x86_64",
  kernel: "6.8.0",
  modules: { virtiofs: true, "9p": true, vhost_vsock: true },
  cpu: "vmx",
  kvm: true,
  confidential: [],
  qemu: null,
  hypervisors: [],
  runtime: { kind: "containerd", version: "1.7.20" },
  kata: "3.9.0",
  shims: ["clh", "qemu"],
  defaultShim: "qemu",
  sharedFs: { clh: "virtio-fs", qemu: "virtio-fs" },
  failed: [],
  ruled: {},
};
