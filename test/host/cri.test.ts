// The CRI client against the real containerd of each minor (Debian's, scripts/test-tools.sh), and
// its message definitions against CRI's own api.proto: a field number typed wrong here would read
// nothing from a real runtime.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import protobuf from "protobufjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { containerdPluginFailures, criStatus, criVersion } from "../../src/host/cri.js";
import { type RealContainerd, servingOf, startContainerd } from "../helpers/real-containerd.js";
import { CONTAINERD_MINORS, realTool } from "../helpers/real-tools.js";

const DEBIAN_PACKAGE_CONFIG = fs.readFileSync(
  path.join(import.meta.dirname, "../fixtures/runtimes/containerd/debian-package-config.toml"),
  "utf8",
);

describe("CRI's messages, as its api.proto defines them", () => {
  it("each field the client reads has the number and type of k8s.io/cri-api's", () => {
    const proto = realTool("cri-api", "v1");
    const real = new protobuf.Root().loadSync(proto.path, { keepCase: true });
    const fields: [string, string, number, string][] = [
      ["VersionResponse", "runtime_name", 2, "string"],
      ["VersionResponse", "runtime_version", 3, "string"],
      ["VersionResponse", "runtime_api_version", 4, "string"],
      ["StatusRequest", "verbose", 1, "bool"],
      ["StatusResponse", "status", 1, "RuntimeStatus"],
      ["StatusResponse", "info", 2, "string"],
      ["StatusResponse", "runtime_handlers", 3, "RuntimeHandler"],
      ["RuntimeStatus", "conditions", 1, "RuntimeCondition"],
      ["RuntimeCondition", "type", 1, "string"],
      ["RuntimeCondition", "status", 2, "bool"],
      ["RuntimeCondition", "reason", 3, "string"],
      ["RuntimeCondition", "message", 4, "string"],
      ["RuntimeHandler", "name", 1, "string"],
    ];
    for (const [message, field, id, type] of fields) {
      const f = real.lookupType(`runtime.v1.${message}`).fields[field];
      expect({ message, field, id: f?.id, type: f?.type }).toEqual({ message, field, id, type });
    }
    expect(real.lookupService("runtime.v1.RuntimeService").methods.Status?.requestType).toBe("StatusRequest");
  });
});

describe.each(CONTAINERD_MINORS)("the real containerd %s", (minor) => {
  let root: string;
  let daemon: RealContainerd;
  beforeAll(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-cri-"));
    fs.mkdirSync(path.join(root, "etc/containerd"), { recursive: true });
    fs.writeFileSync(path.join(root, "etc/containerd/config.toml"), DEBIAN_PACKAGE_CONFIG);
    daemon = await startContainerd({ minor, root });
  }, 60_000);
  afterAll(async () => {
    await daemon?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  }, 60_000);

  it("answers Version and Status: ready, serving runc, its default", async () => {
    const serving = await servingOf(daemon);
    expect(serving.status, serving.log).not.toBeNull();
    const version = await criVersion(daemon.socket, 5_000);
    console.log(
      `containerd ${minor}: CRI says ${version.runtimeName} ${version.runtimeVersion} (${realTool("containerd", minor).versionLine})`,
    );
    expect(version.runtimeName).toBe("containerd");
    expect(realTool("containerd", minor).versionLine).toContain(version.runtimeVersion.replace(/^v/, ""));
    const status = await criStatus(daemon.socket, 5_000);
    expect(status.runtimeReady).toBe(true);
    expect(status.handlers).toContain("runc");
    expect(status.defaultRuntime).toBe("runc");
    expect(await containerdPluginFailures(daemon.socket, 5_000)).not.toContainEqual(
      expect.objectContaining({ plugin: "io.containerd.grpc.v1.cri" }),
    );
  });
});
