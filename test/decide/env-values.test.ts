// kata-deploy's per-shim variables checked as kata-deploy checks them (config.rs), and a little
// more: each malformed entry is named with its variable, nothing is installed, and no input can put
// a control character (a newline, a NUL) on a guest kernel's command line.
import fs from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { type EnvSettings, parseEnv } from "../../src/decide/env.js";
import {
  controlCharacter,
  kernelCmdlineProblem,
  kernelWordProblem,
} from "../../src/decide/kernel-cmdline.js";
import { parseOverrides } from "../../src/decide/overrides.js";
import { renderKataConfigs } from "../../src/render/kata-config.js";
import { answeringHost } from "../helpers/answering.js";
import { artifactDir } from "../helpers/artifacts.js";
import { runCli } from "../helpers/cli.js";
import { catalog, checkIds, decideOn, releaseFor } from "../helpers/decide.js";
import { inputErrorLines } from "../helpers/input-error.js";
import { intelContainerd16 } from "../helpers/nodes.js";
import { templates } from "../helpers/plan.js";
import { removeTestHosts } from "../helpers/test-host.js";
import { snapshot } from "../helpers/tree.js";

afterAll(removeTestHosts);
const artifacts = artifactDir();
afterAll(() => fs.rmSync(artifacts, { recursive: true, force: true }));

/** The lines of parseEnv's error for `env`, each "environment: VARIABLE: message". */
const envErrors = (env: Record<string, string>) => inputErrorLines(() => parseEnv(env, "x86_64"));
const parsed = (env: Record<string, string>): EnvSettings => parseEnv(env, "x86_64");

describe("ALLOWED_HYPERVISOR_ANNOTATIONS", () => {
  it("takes plain annotations for every shim and shim:list for one, as kata-deploy does", () => {
    const env = parsed({
      ALLOWED_HYPERVISOR_ANNOTATIONS_X86_64: "default_vcpus qemu:default_memory,kernel_.*",
    });
    expect(env.allowedAnnotations.all?.value).toEqual(["default_vcpus"]);
    expect(env.allowedAnnotations.qemu).toEqual({
      value: ["default_memory", "kernel_.*"],
      name: "ALLOWED_HYPERVISOR_ANNOTATIONS_X86_64",
    });
  });

  it("refuses a shim with no annotations, an annotation with no shim, a second colon, a control character", () => {
    expect(
      envErrors({ ALLOWED_HYPERVISOR_ANNOTATIONS: "qemu: :default_vcpus clh:a:b fc:ok,x\u0001y" }),
    ).toEqual([
      'environment: ALLOWED_HYPERVISOR_ANNOTATIONS: expected an annotation, or shim:annotation,annotation, got "qemu:"',
      'environment: ALLOWED_HYPERVISOR_ANNOTATIONS: expected an annotation, or shim:annotation,annotation, got ":default_vcpus"',
      'environment: ALLOWED_HYPERVISOR_ANNOTATIONS: "a:b" in "clh:a:b" is no annotation name (it has a ":")',
      'environment: ALLOWED_HYPERVISOR_ANNOTATIONS: "x\\u0001y" in "fc:ok,x\\u0001y" is no annotation name (it has the control character U+0001)',
    ]);
  });
});

describe("AGENT_HTTPS_PROXY and AGENT_NO_PROXY: each value one parameter of the guest's command line", () => {
  it("one value for every shim, or shim=value;shim=value", () => {
    const env = parsed({
      AGENT_HTTPS_PROXY: "http://proxy.example.com:3128",
      AGENT_NO_PROXY: "qemu-tdx=10.0.0.0/8,.svc;qemu-snp=localhost",
    });
    expect(env.agentHttpsProxy.all?.value).toBe("http://proxy.example.com:3128");
    expect(env.agentNoProxy["qemu-tdx"]?.value).toBe("10.0.0.0/8,.svc");
    expect(env.agentNoProxy["qemu-snp"]?.value).toBe("localhost");
  });

  it("refuses what would add a parameter nobody wrote, or cut the line: a space, a newline, a NUL, a quote", () => {
    expect(envErrors({ AGENT_HTTPS_PROXY: "http://proxy:3128 quiet" })).toEqual([
      `environment: AGENT_HTTPS_PROXY: the value "http://proxy:3128 quiet" has a space: it goes on the guest kernel's command line as one parameter`,
    ]);
    // A "=" makes it the per-shim form, as kata-deploy reads it: what comes before is no shim.
    expect(envErrors({ AGENT_HTTPS_PROXY: "http://proxy:3128 init=/bin/sh" })).toEqual([
      'environment: AGENT_HTTPS_PROXY: expected shim=value pairs separated by ";" (a value with "=" is read so, as kata-deploy reads it), got "http://proxy:3128 init=/bin/sh"',
    ]);
    expect(
      envErrors({
        AGENT_HTTPS_PROXY: "qemu=http://proxy:3128\ninit=/bin/sh;clh=http://a\u0000b",
        AGENT_NO_PROXY: 'qemu="localhost";clh=',
      }),
    ).toEqual([
      'environment: AGENT_HTTPS_PROXY: the value for qemu "http://proxy:3128\\ninit=/bin/sh" has a newline (U+000A), which would split the guest kernel\'s command line',
      'environment: AGENT_HTTPS_PROXY: the value for clh "http://a\\u0000b" has a NUL (U+0000), which would split the guest kernel\'s command line',
      'environment: AGENT_NO_PROXY: the value for qemu "\\"localhost\\"" has a double quote, which the guest kernel\'s command line takes as quoting',
      'environment: AGENT_NO_PROXY: the value for clh "" is empty',
    ]);
  });

  it("refuses an entry without a shim, and a shim given twice (kata-deploy would take the first silently)", () => {
    expect(envErrors({ AGENT_NO_PROXY: "=localhost;qemu=a;qemu=b" })).toEqual([
      'environment: AGENT_NO_PROXY: expected shim=value pairs separated by ";" (a value with "=" is read so, as kata-deploy reads it), got "=localhost"',
      "environment: AGENT_NO_PROXY: qemu is given twice",
    ]);
  });
});

describe("SNAPSHOTTER_HANDLER_MAPPING, PULL_TYPE_MAPPING, EXPERIMENTAL_FORCE_GUEST_PULL", () => {
  it("refuses an empty snapshotter or shim (as kata-deploy), a snapshotter that is no plugin name, an unknown pull type", () => {
    expect(
      envErrors({
        SNAPSHOTTER_HANDLER_MAPPING_X86_64: "qemu:,:nydus,clh:ny dus,fc:nydus\u0000",
        PULL_TYPE_MAPPING: "qemu-tdx:guest_pull",
        EXPERIMENTAL_FORCE_GUEST_PULL: "qemu-tdx,Qemu",
      }),
    ).toEqual([
      'environment: SNAPSHOTTER_HANDLER_MAPPING_X86_64: expected shim:value pairs separated by commas, got "qemu:"',
      'environment: SNAPSHOTTER_HANDLER_MAPPING_X86_64: expected shim:value pairs separated by commas, got ":nydus"',
      'environment: SNAPSHOTTER_HANDLER_MAPPING_X86_64: "ny dus" for clh: is no snapshotter name (letters, digits, "_", "." and "-", as containerd names its plugins)',
      'environment: SNAPSHOTTER_HANDLER_MAPPING_X86_64: "nydus\\u0000" for fc: is no snapshotter name (letters, digits, "_", "." and "-", as containerd names its plugins)',
      'environment: PULL_TYPE_MAPPING: "guest_pull" for qemu-tdx: expected one of guest-pull, default',
      'environment: EXPERIMENTAL_FORCE_GUEST_PULL: "Qemu" is no shim name (lower-case letters, digits and "-", as in configuration-<shim>.toml)',
    ]);
  });

  it("a shim they name must be among the shims asked for (kata-deploy: among SHIMS)", async () => {
    const decision = await decideOn(intelContainerd16(), {
      env: {
        SHIMS: "qemu clh",
        PULL_TYPE_MAPPING: "qemu:guest-pull,fc:guest-pull",
        EXPERIMENTAL_FORCE_GUEST_PULL: "dragonball",
        AGENT_HTTPS_PROXY: "clh=http://p:3128;qemu-tdx=http://p:3128",
      },
    });
    expect(decision.checks.find((c) => c.id === "env-mapping")).toMatchObject({
      severity: "error",
      status: "fail",
      message:
        "PULL_TYPE_MAPPING names fc, which is not among the shims to install; EXPERIMENTAL_FORCE_GUEST_PULL names dragonball, which is not among the shims to install; AGENT_HTTPS_PROXY names qemu-tdx, which is not among the shims to install",
    });
  });
});

describe("the overrides file's kernel_params", () => {
  const overrides = (text: string) =>
    inputErrorLines(() => parseOverrides("/etc/kata-containers/kata-install.toml", text, catalog, checkIds));

  it("a control character in kernel_params or kernel_verity_params is refused with file, line and key", () => {
    expect(
      overrides(
        '[config.qemu]\n"hypervisor.qemu.kernel_params" = "console=hvc0\\ninit=/bin/sh"\n\n[custom_runtimes.kata-mine]\nbase = "clh"\n[custom_runtimes.kata-mine.config]\n"hypervisor.clh.kernel_verity_params" = "root_hash=ab\\u0000"\n',
      ),
    ).toEqual([
      `/etc/kata-containers/kata-install.toml:2: config.qemu."hypervisor.qemu.kernel_params": has a newline (U+000A): it would split or cut the guest kernel's command line (separate parameters with spaces)`,
      `/etc/kata-containers/kata-install.toml:7: custom_runtimes.kata-mine.config."hypervisor.clh.kernel_verity_params": has a NUL (U+0000): it would split or cut the guest kernel's command line (separate parameters with spaces)`,
    ]);
  });

  it("spaces between parameters are the admin's to write", () => {
    expect(() =>
      parseOverrides(
        "/etc/kata-containers/kata-install.toml",
        '[config.qemu]\n"hypervisor.qemu.kernel_params" = "console=hvc0 agent.log=debug"\n',
        catalog,
        checkIds,
      ),
    ).not.toThrow();
  });
});

describe("render writes no kernel command line with a control character, whatever decided it", () => {
  it("a carried value (a takeover's) with a NUL stops the plan, naming its source", async () => {
    const decision = await decideOn(intelContainerd16());
    const qemu = decision.config.qemu as NonNullable<(typeof decision.config)["qemu"]>;
    qemu["hypervisor.qemu.kernel_params"] = {
      value: "agent.https_proxy=http://p\u0000 quiet",
      source: {
        kind: "carried",
        name: "kata-deploy's 30-kernel-params.toml, carried over by the takeover",
        file: "/opt/kata/share/defaults/kata-containers/runtimes/qemu/config.d/30-kernel-params.toml",
        over: "environment",
      },
      beaten: [],
    };
    expect(() => renderKataConfigs(decision, catalog.withRelease(releaseFor("x86_64")), templates)).toThrow(
      /sets hypervisor\.qemu\.kernel_params for qemu: the value has a NUL \(U\+0000\): it would split or cut the guest kernel's command line .*; nothing was written$/,
    );
  });

  it("the helpers name what they found", () => {
    expect(controlCharacter("a\u2028b")).toBe("the control character U+2028");
    expect(controlCharacter("plain text")).toBeNull();
    expect(kernelCmdlineProblem("console=hvc0 quiet")).toBeNull();
    expect(kernelWordProblem("http://p:3128")).toBeNull();
    expect(kernelWordProblem("a\tb")).toMatch(/^has a tab \(U\+0009\)/);
  });
});

describe("a malformed variable, end to end", () => {
  it("install names it and the entry, and changes nothing on the host", async () => {
    const host = await answeringHost(intelContainerd16());
    const before = snapshot(host.root);
    const run = runCli(["install", "--host-root", host.root, "--artifacts", `dir:${artifacts}`], {
      env: { AGENT_HTTPS_PROXY: "http://proxy:3128\nquiet" },
    });
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain(
      'environment: AGENT_HTTPS_PROXY: the value "http://proxy:3128\\nquiet" has a newline (U+000A)',
    );
    expect(snapshot(host.root)).toEqual(before);
  });
});
