import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DetectContext } from "../../src/detect/context.js";
import { LOCAL_DIR, local } from "../../src/detect/local.js";
import { nestedVmWithoutVmx } from "../helpers/nodes.js";
import { buildHost, removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);

const hook = (body: string, mode = 0o755, uid?: number) => ({ content: `#!/bin/sh\n${body}\n`, mode, uid });

describe("local facts from /etc/kata-containers/preflight.d", async () => {
  const built = buildHost({
    ...nestedVmWithoutVmx(),
    files: {
      [`${LOCAL_DIR}/storage.json`]: '{"raid": true, "disks": 4}',
      [`${LOCAL_DIR}/site.toml`]: 'zone = "eu-1"\n[limits]\nvms = 20\n',
      [`${LOCAL_DIR}/gpu-probe`]: hook('echo \'{"vendor": "nvidia", "count": 2}\''),
      [`${LOCAL_DIR}/writable-hook`]: hook("echo '{}'", 0o757),
      [`${LOCAL_DIR}/foreign-hook`]: hook("echo '{}'", 0o755, 1000),
      [`${LOCAL_DIR}/slow-hook`]: hook("sleep 10; echo '{}'"),
      // A hook that leaves a child holding its output pipe, outside its process group.
      [`${LOCAL_DIR}/detaching-hook`]: hook("setsid sleep 60 & echo '{\"left\": true}'"),
      "/opt/site/evil": hook("echo '{\"ran\": true}'"),
      [`${LOCAL_DIR}/bad.json`]: '{"raid": tru',
      [`${LOCAL_DIR}/bad-toml.toml`]: "zone = \n",
      [`${LOCAL_DIR}/list.json`]: "[1, 2]",
      [`${LOCAL_DIR}/README.md`]: "notes",
      [`${LOCAL_DIR}/.storage.json.swp`]: "x",
    },
  });
  fs.chmodSync(path.join(built.root, LOCAL_DIR), 0o755);
  // Links in preflight.d: a hook that is a link (to a root-owned file, even) is not run; data
  // read through a link is the host's file, the link followed inside the host root.
  fs.symlinkSync("/opt/site/evil", path.join(built.root, LOCAL_DIR, "linked-hook"));
  fs.mkdirSync(path.join(built.root, "etc/site"), { recursive: true });
  fs.writeFileSync(path.join(built.root, "etc/site/zone.json"), '{"zone": "host"}');
  fs.symlinkSync("/etc/site/zone.json", path.join(built.root, LOCAL_DIR, "linked.json"));
  const ctx = new DetectContext(built.host, { commandTimeoutMs: 500 });
  const started = Date.now();
  const facts = await local.detect(ctx);
  const took = Date.now() - started;
  const reasonFor = (file: string) => ctx.problems.find((p) => p.path === `${LOCAL_DIR}/${file}`)?.reason;

  it("reads JSON and TOML files as namespaces", () => {
    expect(facts.storage).toEqual({ raid: true, disks: 4 });
    expect(facts.site).toEqual({ zone: "eu-1", limits: { vms: 20 } });
  });

  it("runs a root-owned executable that nobody else can write, and takes its JSON", () => {
    expect(facts["gpu-probe"]).toEqual({ vendor: "nvidia", count: 2 });
  });

  it("refuses executables that others could have written, naming why", () => {
    expect(facts["writable-hook"]).toBeUndefined();
    expect(reasonFor("writable-hook")).toBe("refused: executable is group- or world-writable (mode 0757)");
    expect(facts["foreign-hook"]).toBeUndefined();
    expect(reasonFor("foreign-hook")).toBe("refused: executable not owned by root (uid 1000)");
  });

  it("never runs a hook that is a link; reads data through a link inside the host", () => {
    expect(facts["linked-hook"]).toBeUndefined();
    expect(reasonFor("linked-hook")).toBe(
      "refused: executable is a symbolic link (to /opt/site/evil): a hook must be a regular file",
    );
    expect(facts.linked).toEqual({ zone: "host" });
  });

  it("does not wait for a child a hook left behind holding its output", () => {
    expect(facts["detaching-hook"]).toEqual({ left: true });
    // The slow hook's 500 ms timeout, plus moments: not the 60 s its child sleeps.
    expect(took).toBeLessThan(10_000);
  });

  it("stops a hook at the timeout", () => {
    expect(facts["slow-hook"]).toBeUndefined();
    expect(ctx.problems).toContainEqual({
      source: "local",
      command: `${LOCAL_DIR}/slow-hook`,
      reason: "timed out after 500 ms",
    });
  });

  it("records malformed files and ignores nothing silently", () => {
    expect(reasonFor("bad.json")).toMatch(/^invalid JSON/);
    expect(reasonFor("bad-toml.toml")).toMatch(/^invalid TOML at line 1/);
    expect(reasonFor("list.json")).toBe("refused: its content is not one object of JSON values");
    expect(reasonFor("README.md")).toBe(
      "refused: only .json and .toml files, or root-owned executables, are read",
    );
    expect(reasonFor(".storage.json.swp")).toBeUndefined();
    expect(Object.keys(facts).sort()).toEqual(["detaching-hook", "gpu-probe", "linked", "site", "storage"]);
  });
});

describe("a world-writable preflight.d", async () => {
  const built = buildHost({
    ...nestedVmWithoutVmx(),
    files: { [`${LOCAL_DIR}/probe`]: hook("echo '{\"a\": 1}'"), [`${LOCAL_DIR}/static.json`]: '{"b": 2}' },
  });
  fs.chmodSync(path.join(built.root, LOCAL_DIR), 0o777);
  const ctx = new DetectContext(built.host);
  const facts = await local.detect(ctx);

  it("runs no executable from it, but still reads static files", () => {
    expect(facts).toEqual({ static: { b: 2 } });
    expect(ctx.problems[0]?.reason).toBe(
      `refused: ${LOCAL_DIR} is not root-owned or is writable by others (mode 0777)`,
    );
  });
});
