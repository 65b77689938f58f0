// kata-deploy's chart pulls its confidential shims' images inside the guest by default (nydus on
// containerd, runtime_pull_image on CRI-O): kata-install does the same where nothing says otherwise,
// explain names the default, and a node without nydus keeps its handlers working as they are, with
// a warning, rather than losing the install.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse, stringify } from "smol-toml";
import { afterAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { parseOverrides } from "../../src/decide/overrides.js";
import { dig } from "../../src/detect/toml.js";
import { runCli } from "../helpers/cli.js";
import { catalog, checkIds } from "../helpers/decide.js";
import { inputErrorLines } from "../helpers/input-error.js";
import { daemonSetOf, objects, removeValuesFiles, valuesFile } from "../helpers/manifests.js";
import { amdSnpCrio, intelContainerd16 } from "../helpers/nodes.js";
import { changeAt, planOn } from "../helpers/plan.js";
import { containerdOf } from "../helpers/real-tools.js";
import { buildHost, type NodeSpec, removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);
afterAll(removeValuesFiles);

const CHART_VALUES = path.resolve("test/fixtures/kata-deploy/values.yaml");
const NYDUS =
  'version = 2\n[proxy_plugins.nydus]\n  type = "snapshot"\n  address = "/run/containerd-nydus/containerd-nydus-grpc.sock"\n';

/** containerd 2.x with a version 2 main file importing conf.d/, and these drop-ins there. */
function containerd2(dropIns: Record<string, string> = {}, version = "2.0.4"): NodeSpec {
  const spec = intelContainerd16();
  spec.commands = {
    ...spec.commands,
    "/usr/bin/containerd": `echo "containerd containerd.io ${version} 1a43cb6a"`,
  };
  spec.files = {
    ...spec.files,
    "/etc/containerd/config.toml": 'version = 2\nimports = ["/etc/containerd/conf.d/*.toml"]\n',
    ...Object.fromEntries(
      Object.entries(dropIns).map(([name, text]) => [`/etc/containerd/conf.d/${name}`, text]),
    ),
  };
  return spec;
}
/** qemu-tdx pinned beside qemu (this Intel test host has no TDX: pinned all the same, said). */
const pinned = { shims: ["qemu", "qemu-tdx"] };
const runtimes = (text: string) =>
  dig(parse(text), ["plugins", "io.containerd.grpc.v1.cri", "containerd", "runtimes"]) as Record<
    string,
    Record<string, unknown>
  >;

describe("the shims kata-install gives guest pull by default are the chart's", () => {
  it("every shim whose values.yaml entry has crio.guestPull (and containerd nydus), and no other", () => {
    const values = parseYaml(fs.readFileSync(CHART_VALUES, "utf8")) as {
      shims: Record<string, { crio?: { guestPull?: boolean }; containerd?: { snapshotter?: string } }>;
    };
    const chart = Object.entries(values.shims)
      .filter(([, s]) => typeof s === "object" && s?.crio?.guestPull === true)
      .map(([name, s]) => {
        expect(s.containerd?.snapshotter, name).toBe("nydus");
        return name;
      });
    expect([...catalog.guestPull].sort()).toEqual(chart.sort());
  });
});

describe("containerd: the nydus snapshotter", () => {
  it("where the node has one: the TEE shim's handler gets it, explained as the chart's default", async () => {
    const { decision, changeset } = await planOn(buildHost(containerd2({ "10-nydus.toml": NYDUS })).host, {
      flags: pinned,
    });
    expect(decision.handlers["qemu-tdx"]?.snapshotter).toEqual({
      value: "nydus",
      source: {
        kind: "default",
        name: `kata-deploy's chart default for qemu-tdx (containerd.snapshotter = "nydus")`,
      },
      beaten: [],
    });
    expect(decision.handlers.qemu?.snapshotter).toBeUndefined();
    expect(decision.checks.find((c) => c.id === "guest-pull-default")).toBeUndefined();
    expect(decision.checks.find((c) => c.id === "handler-snapshotter")).toBeUndefined();
    const dropIn = changeAt(changeset, "/etc/containerd/conf.d/50-kata-install.toml")?.after as string;
    expect(runtimes(dropIn)["kata-qemu-tdx"]?.snapshotter).toBe("nydus");
    expect(runtimes(dropIn)["kata-qemu"]?.snapshotter).toBeUndefined();
    // The real containerd loads it, with the node's nydus beside it.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-nydus-"));
    try {
      fs.writeFileSync(path.join(dir, "kata.toml"), dropIn);
      fs.writeFileSync(path.join(dir, "nydus.toml"), NYDUS);
      fs.writeFileSync(
        path.join(dir, "config.toml"),
        `version = 2\nimports = ["${dir}/kata.toml", "${dir}/nydus.toml"]\n`,
      );
      const dumped = parse(
        execFileSync(
          containerdOf("1.6").containerd,
          ["--config", path.join(dir, "config.toml"), "config", "dump"],
          {
            encoding: "utf8",
          },
        ),
      );
      expect(Object.keys(runtimes(stringify(dumped)))).toContain("kata-qemu-tdx");
      expect(dig(dumped, ["proxy_plugins", "nydus", "type"])).toBe("snapshot");
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("kata-deploy's own nydus instance, where that is the one the node has (a node it set up)", async () => {
    const own = NYDUS.replace("proxy_plugins.nydus", "proxy_plugins.nydus-for-kata-tee");
    const { decision } = await planOn(buildHost(containerd2({ "10-nydus.toml": own })).host, {
      flags: pinned,
    });
    expect(decision.handlers["qemu-tdx"]?.snapshotter?.value).toBe("nydus-for-kata-tee");
  });

  it("where it has none: the handler is written as it works today, with a warning naming the shim; nothing refused", async () => {
    const { decision, changeset } = await planOn(buildHost(containerd2()).host, { flags: pinned });
    expect(decision.handlers["qemu-tdx"]?.snapshotter).toBeUndefined();
    expect(decision.checks.find((c) => c.id === "guest-pull-default")).toMatchObject({
      severity: "warning",
      status: "fail",
      message: expect.stringMatching(
        /^kata-deploy's chart pulls the images of qemu-tdx inside the guest through the nydus snapshotter, and this node's containerd has no nydus snapshotter configured: its handler is written without one/,
      ),
    });
    expect(
      decision.checks.filter((c) => c.status === "fail" && c.severity === "error").map((c) => c.id),
    ).not.toContain("handler-snapshotter");
    const dropIn = changeAt(changeset, "/etc/containerd/conf.d/50-kata-install.toml")?.after as string;
    expect(runtimes(dropIn)["kata-qemu-tdx"]).toBeDefined();
    expect(runtimes(dropIn)["kata-qemu-tdx"]?.snapshotter).toBeUndefined();
  });

  it("containerd 1.6 (no snapshotter per handler): the same warning, saying why", async () => {
    const spec = intelContainerd16();
    spec.files = { ...spec.files, "/etc/containerd/conf.d/10-nydus.toml": NYDUS };
    const { decision } = await planOn(buildHost(spec).host, { flags: pinned });
    expect(decision.handlers["qemu-tdx"]?.snapshotter).toBeUndefined();
    expect(decision.checks.find((c) => c.id === "guest-pull-default")?.message).toMatch(
      /and containerd 1\.6\.\S+ has no snapshotter per runtime handler/,
    );
  });

  it("a SNAPSHOTTER_HANDLER_MAPPING given is the whole mapping, as kata-deploy's chart renders it: a shim it leaves out gets none", async () => {
    const host = buildHost(containerd2({ "10-nydus.toml": NYDUS })).host;
    const env = { SNAPSHOTTER_HANDLER_MAPPING: "qemu:overlayfs" };
    const { decision } = await planOn(host, { flags: pinned, env });
    expect(decision.handlers.qemu?.snapshotter?.value).toBe("overlayfs");
    expect(decision.handlers["qemu-tdx"]?.snapshotter).toBeUndefined();
    expect(decision.checks.find((c) => c.id === "guest-pull-default")).toBeUndefined();
  });

  it('the overrides file\'s [handlers.<shim>] beats the mapping and the default: "" for none of its own', async () => {
    const host = buildHost(containerd2({ "10-nydus.toml": NYDUS })).host;
    const none = await planOn(host, { flags: pinned, overrides: '[handlers.qemu-tdx]\nsnapshotter = ""\n' });
    expect(none.decision.handlers["qemu-tdx"]?.snapshotter).toMatchObject({
      value: "",
      source: { kind: "overrides", name: "handlers.qemu-tdx.snapshotter", line: 2 },
    });
    const dropIn = changeAt(none.changeset, "/etc/containerd/conf.d/50-kata-install.toml")?.after as string;
    expect(runtimes(dropIn)["kata-qemu-tdx"]?.snapshotter).toBeUndefined();
    // One the node lacks fails preflight, named by its key, as a mapping's does.
    const missing = await planOn(host, {
      flags: pinned,
      env: { SNAPSHOTTER_HANDLER_MAPPING: "qemu-tdx:nydus" },
      overrides: '[handlers.qemu-tdx]\nsnapshotter = "stargz"\n',
    });
    expect(missing.decision.handlers["qemu-tdx"]?.snapshotter?.value).toBe("stargz");
    expect(missing.decision.checks.find((c) => c.id === "handler-snapshotter")?.message).toBe(
      'handlers.qemu-tdx.snapshotter maps qemu-tdx to the snapshotter "stargz", which is not configured on this node',
    );
  });
});

describe("CRI-O: runtime_pull_image", () => {
  const crio = () => buildHost(amdSnpCrio()).host;
  const conf = (changeset: Awaited<ReturnType<typeof planOn>>["changeset"]) =>
    dig(parse(changeAt(changeset, "/etc/crio/crio.conf.d/50-kata-install.conf")?.after as string), [
      "crio",
      "runtime",
      "runtimes",
    ]) as Record<string, Record<string, unknown>>;

  it("the TEE shim pulls in the guest, the others on the node; explain says whose default it is", async () => {
    const { decision, changeset } = await planOn(crio());
    expect(decision.shims.map((s) => s.name)).toContain("qemu-snp");
    expect(conf(changeset)["kata-qemu-snp"]?.runtime_pull_image).toBe(true);
    expect(conf(changeset)["kata-qemu"]?.runtime_pull_image).toBeUndefined();
    expect(decision.handlers["qemu-snp"]?.pullType?.source).toEqual({
      kind: "default",
      name: "kata-deploy's chart default for qemu-snp (crio.guestPull = true)",
    });
    // No snapshotter is decided on CRI-O, nor any warning about nydus.
    expect(decision.handlers["qemu-snp"]?.snapshotter).toBeUndefined();
    expect(decision.checks.find((c) => c.id === "guest-pull-default")).toBeUndefined();
    const host = buildHost(amdSnpCrio());
    const explain = runCli(["explain", "--host-root", host.root, "--json", "qemu-snp"]);
    expect(JSON.parse(explain.stdout).values).toContainEqual(
      expect.objectContaining({ key: "handler.pullType", shim: "qemu-snp", value: "guest-pull" }),
    );
  });

  it("PULL_TYPE_MAPPING, when given, is the whole mapping; qemu-snp:default and the overrides file turn it off", async () => {
    const other = await planOn(crio(), { env: { PULL_TYPE_MAPPING: "qemu:guest-pull" } });
    expect(conf(other.changeset)["kata-qemu"]?.runtime_pull_image).toBe(true);
    expect(conf(other.changeset)["kata-qemu-snp"]?.runtime_pull_image).toBeUndefined();
    const off = await planOn(crio(), { env: { PULL_TYPE_MAPPING: "qemu-snp:default" } });
    expect(conf(off.changeset)["kata-qemu-snp"]?.runtime_pull_image).toBeUndefined();
    const overridden = await planOn(crio(), { overrides: '[handlers.qemu-snp]\npull_type = "default"\n' });
    expect(conf(overridden.changeset)["kata-qemu-snp"]?.runtime_pull_image).toBeUndefined();
    expect(overridden.decision.handlers["qemu-snp"]?.pullType).toMatchObject({
      value: "default",
      beaten: [{ value: "guest-pull", source: { kind: "default" } }],
    });
  });
});

describe("the overrides file's [handlers.<shim>]", () => {
  it('is checked: a shim name, a snapshotter name or "", a pull type', () => {
    expect(
      inputErrorLines(() =>
        parseOverrides(
          "/etc/kata-containers/kata-install.toml",
          '[handlers.Qemu]\nsnapshotter = "nydus"\n\n[handlers.qemu-tdx]\nsnapshotter = "ny dus"\npull_type = "guest_pull"\n',
          catalog,
          checkIds,
        ),
      ),
    ).toEqual([
      expect.stringMatching(
        /^\/etc\/kata-containers\/kata-install\.toml:1: handlers\.Qemu: "Qemu" is no shim name/,
      ),
      expect.stringMatching(
        /^\/etc\/kata-containers\/kata-install\.toml:5: handlers\.qemu-tdx\.snapshotter: "ny dus" is no snapshotter name .*, or "" for none of its own$/,
      ),
      expect.stringMatching(/^\/etc\/kata-containers\/kata-install\.toml:6: handlers\.qemu-tdx\.pull_type: /),
    ]);
  });
});

describe("manifests -f: a values file that turns a TEE shim's default off says so to the nodes", () => {
  it("the other shims' defaults stay in a mapping written for one shim; the one turned off goes to [handlers.<shim>]", () => {
    const file = valuesFile(
      'shims:\n  qemu:\n    containerd:\n      snapshotter: overlayfs\n  qemu-tdx:\n    containerd:\n      snapshotter: ""\n    crio:\n      guestPull: false\n',
      "values.yaml",
    );
    // The chart's nydus kept (as the values have it), for an image said to carry its binaries.
    const run = runCli(["manifests", "-f", file, "--set", "nydus_in_image=true"]);
    expect(run.status, run.stderr).toBe(0);
    const docs = objects(run.stdout);
    const { env } = daemonSetOf(docs);
    const mapping = env.SNAPSHOTTER_HANDLER_MAPPING_X86_64?.split(",") ?? [];
    expect(mapping).toContain("qemu:overlayfs");
    expect(mapping).toContain("qemu-snp:nydus");
    expect(mapping.some((m) => m.startsWith("qemu-tdx:"))).toBe(false);
    const maps = docs.filter((d) => d.kind === "ConfigMap") as unknown as Array<{
      data?: Record<string, string>;
    }>;
    const overrides = maps.map((m) => m.data?.["kata-install.toml"]).find((t) => t !== undefined) as string;
    expect(parse(overrides).handlers).toEqual({ "qemu-tdx": { snapshotter: "", pull_type: "default" } });
  });
});
