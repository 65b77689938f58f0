// The node's Kata facts as an NFD feature file: NFD's own format (read as NFD documents it), with
// the labels it would put on the node; from `kata-install facts --nfd` on a test host.
import { afterAll, describe, expect, it } from "vitest";
import { labelValue, nfdFeatureFile } from "../../src/kube/nfd-features.js";
import { runCli } from "../helpers/cli.js";
import { parseFeatureFile } from "../helpers/nfd.js";
import { intelContainerd16 } from "../helpers/nodes.js";
import { SUMMARY } from "../helpers/summary.js";
import { buildHost, removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);
const P = "kata.feature.node.kubernetes.io/";

describe("NFD feature file", () => {
  it("every line is a label Kubernetes takes, in a namespace nfd-master always allows", () => {
    const labels = parseFeatureFile(
      nfdFeatureFile(
        { ...SUMMARY, confidential: ["sevSnp"], runtime: { kind: "containerd", version: "1.7.20~ds1" } },
        "test",
      ),
    );
    expect(labels).toEqual({
      [`${P}kvm`]: "true",
      [`${P}cpu.virtualization`]: "vmx",
      [`${P}module.virtiofs`]: "true",
      [`${P}module.9p`]: "true",
      [`${P}module.vhost_vsock`]: "true",
      [`${P}confidential.sev-snp`]: "true",
      [`${P}runtime`]: "containerd",
      [`${P}runtime.version`]: "1.7.20_ds1",
      [`${P}kata.version`]: "3.9.0",
      [`${P}shim.clh`]: "true",
      [`${P}shim.qemu`]: "true",
      [`${P}default-shim`]: "qemu",
    });
  });

  it("label values: invalid characters replaced, ends trimmed, at most 63; nothing left, no label", () => {
    expect(labelValue("8.2.2 (Debian 1:8.2.2+ds-0ubuntu1)")).toBe("8.2.2__Debian_1_8.2.2_ds-0ubuntu1");
    expect(labelValue("x".repeat(80))).toHaveLength(63);
    expect(labelValue("~~")).toBeNull();
  });

  it("facts --nfd on a node: what it is and the shims the rules let it run, nothing pinned", () => {
    const host = buildHost(intelContainerd16());
    // A SHIMS in the environment pins the install, not what the node can do.
    const run = runCli(["facts", "--nfd", "--host-root", host.root], { env: { SHIMS: "qemu" } });
    expect(run.status, run.stderr).toBe(0);
    const labels = parseFeatureFile(run.stdout);
    expect(labels).toMatchObject({
      [`${P}kvm`]: "true",
      [`${P}cpu.virtualization`]: "vmx",
      [`${P}runtime`]: "containerd",
      [`${P}runtime.version`]: "1.6.12",
      [`${P}shim.qemu`]: "true",
      [`${P}shim.clh`]: "true",
    });
    expect(Object.keys(labels).filter((k) => k.startsWith(`${P}shim.`)).length).toBeGreaterThan(2);
    expect(runCli(["facts", "--nfd", "--json", "--host-root", host.root]).stderr).toContain(
      "--json and --nfd: choose one",
    );
  });
});
