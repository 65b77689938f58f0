// The runtime side of a plan, for every runtime kind and containerd config version, checked by the
// real containerd binary where it can load the result (Debian 12's containerd 1.6 reads the
// version 2 schema; version 3 files are checked by parsing them back).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse } from "smol-toml";
import { afterAll, describe, expect, it } from "vitest";
import { dig } from "../../src/detect/toml.js";
import { BLOCK_BEGIN } from "../../src/render/toml-edit.js";
import { catalog, releaseFor } from "../helpers/decide.js";
import { intelContainerd16, k3sImportingDropIns } from "../helpers/nodes.js";
import { changeAt, planOn } from "../helpers/plan.js";
import { containerdOf } from "../helpers/real-tools.js";
import { buildHost, type NodeSpec, removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-ctd-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** `containerd config dump` of a file, by the real containerd: it must load. */
function dump(file: string): Record<string, unknown> {
  const out = execFileSync(containerdOf("1.6").containerd, ["--config", file, "config", "dump"], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  return parse(out) as Record<string, unknown>;
}
const CRI = "io.containerd.grpc.v1.cri";
const runtimesOf = (config: Record<string, unknown>) =>
  ((config.plugins as Record<string, Record<string, Record<string, Record<string, unknown>>>>)[CRI]
    ?.containerd?.runtimes ?? {}) as Record<string, Record<string, unknown>>;

/** Debian's own default, with settings an admin would have made: systemd cgroups, a mirror, a pause image. */
function adminConfig(): string {
  let text = execFileSync(containerdOf("1.6").containerd, ["config", "default"], { encoding: "utf8" });
  text = text.replace("SystemdCgroup = false", "SystemdCgroup = true");
  text = text.replace(/sandbox_image = ".*"/, 'sandbox_image = "registry.example.com/pause:3.9"');
  text = text.replace(
    /\[plugins\."io\.containerd\.grpc\.v1\.cri"\.registry\.mirrors\]\n/,
    '[plugins."io.containerd.grpc.v1.cri".registry.mirrors]\n\n        [plugins."io.containerd.grpc.v1.cri".registry.mirrors."docker.io"]\n          endpoint = ["https://mirror.example.com"]\n',
  );
  return `# Managed by the site's config management: do not lose this comment.\n${text}`;
}

function writeOut(name: string, content: string): string {
  const file = path.join(tmp, name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
  return file;
}

describe("containerd 1.6 from Debian: config.toml edited in place", async () => {
  const spec = intelContainerd16();
  const original = adminConfig();
  spec.commands = {
    ...spec.commands,
    "/usr/bin/containerd":
      'echo "containerd github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1+deb12u3"',
  };
  spec.files = { ...spec.files, "/etc/containerd/config.toml": original };
  const { decision, changeset } = await planOn(buildHost(spec).host);
  const edited = changeAt(changeset, "/etc/containerd/config.toml");

  it("adds the handlers after the admin's bytes, which stay as they were", () => {
    expect(edited?.action).toBe("modify");
    expect(edited?.after?.startsWith(original)).toBe(true);
    expect(edited?.after?.slice(original.length)).toMatch(
      new RegExp(`^\\n${BLOCK_BEGIN.replace(/[()]/g, "\\$&")}\\n`),
    );
    expect(changeset.changes.some((c) => c.path.startsWith("/etc/containerd/conf.d"))).toBe(false);
  });

  it("loads in the real containerd, with every handler and every setting the admin had", () => {
    const config = dump(writeOut("in-place/config.toml", edited?.after as string));
    const runtimes = runtimesOf(config);
    for (const shim of decision.shims.map((s) => s.name)) {
      expect(runtimes[`kata-${shim}`]).toMatchObject({
        runtime_type: `io.containerd.kata-${shim}.v2`,
        privileged_without_host_devices: true,
        pod_annotations: ["io.katacontainers.*"],
        options: {
          // kata-deploy's places: the Rust shims' configurations under runtime-rs/.
          ConfigPath: `/opt/kata/share/defaults/kata-containers/${catalog.shims.get(shim)?.runtime === "rust" ? "runtime-rs/" : ""}runtimes/${shim}/configuration-${shim}.toml`,
        },
      });
    }
    expect(runtimes.runc).toMatchObject({
      runtime_type: "io.containerd.runc.v2",
      options: { SystemdCgroup: true },
    });
    const cri = (config.plugins as Record<string, Record<string, unknown>>)[CRI] as Record<string, unknown>;
    expect(cri.sandbox_image).toBe("registry.example.com/pause:3.9");
    expect((cri.registry as { mirrors: Record<string, unknown> }).mirrors["docker.io"]).toEqual({
      endpoint: ["https://mirror.example.com"],
    });
  });

  it("asks for a containerd restart", () => {
    expect(changeset.actions).toContainEqual({
      kind: "restart-runtime",
      target: "containerd",
      reason: "containerd reads its runtime handlers only at start",
    });
  });
});

describe("containerd 1.x without a config file", async () => {
  const spec = intelContainerd16();
  delete spec.files?.["/etc/containerd/config.toml"];
  const { changeset } = await planOn(buildHost(spec).host);

  it("creates one that keeps runc beside the Kata handlers (a runtimes table replaces containerd's default map)", () => {
    const created = changeAt(changeset, "/etc/containerd/config.toml");
    expect(created?.action).toBe("create");
    const runtimes = runtimesOf(dump(writeOut("created/config.toml", created?.after as string)));
    expect(runtimes.runc).toMatchObject({ runtime_type: "io.containerd.runc.v2" });
    expect(runtimes["kata-qemu"]).toBeDefined();
  });
});

describe("kata-deploy's old handlers in config.toml", async () => {
  const spec = intelContainerd16();
  const before = `${spec.files?.["/etc/containerd/config.toml"]}
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.kata-qemu]
  runtime_type = "io.containerd.kata-qemu.v2"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.kata-qemu.options]
    ConfigPath = "/opt/kata/share/defaults/kata-containers/configuration-qemu.toml"

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.kata-fc]
  runtime_type = "io.containerd.kata-fc.v2"

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.gvisor]
  runtime_type = "io.containerd.runsc.v1"
`;
  spec.files = { ...spec.files, "/etc/containerd/config.toml": before };
  const { changeset } = await planOn(buildHost(spec).host);
  const after = changeAt(changeset, "/etc/containerd/config.toml")?.after as string;

  it("are replaced, not duplicated; the dropped shim's handler goes; others stay", () => {
    const runtimes = runtimesOf(dump(writeOut("replace/config.toml", after)));
    expect(runtimes["kata-fc"]).toBeUndefined(); // fc has no devmapper here
    expect((runtimes["kata-qemu"]?.options as Record<string, unknown> | undefined)?.ConfigPath).toBe(
      "/opt/kata/share/defaults/kata-containers/runtimes/qemu/configuration-qemu.toml",
    );
    expect(runtimes.gvisor).toMatchObject({ runtime_type: "io.containerd.runsc.v1" });
    expect(after.match(/runtimes\.kata-qemu\]/g)).toHaveLength(1);
    // Outside the removed tables and the block, the file is the admin's, byte for byte.
    const kept = before.replace(
      /\[plugins\."io\.containerd\.grpc\.v1\.cri"\.containerd\.runtimes\.kata-qemu\][\s\S]*?(?=\[plugins\."io\.containerd\.grpc\.v1\.cri"\.containerd\.runtimes\.gvisor\])/,
      "",
    );
    expect(after.startsWith(kept)).toBe(true);
  });
});

function containerd2(main: string | null, extra: Partial<NodeSpec> = {}): NodeSpec {
  const spec = intelContainerd16();
  spec.commands = {
    ...spec.commands,
    "/usr/bin/containerd": 'echo "containerd containerd.io 2.0.4 1a43cb6a"',
  };
  const files = { ...spec.files, ...extra.files };
  if (main === null) delete files["/etc/containerd/config.toml"];
  else files["/etc/containerd/config.toml"] = main;
  return { ...spec, ...extra, files };
}

describe("containerd 2.x: a drop-in of the main file's version, and the import", () => {
  it("version 3: cri.v1.runtime handlers in conf.d, imports added to the main file, nothing else touched", async () => {
    const main =
      '# admin comment\nversion = 3\n\n[plugins."io.containerd.cri.v1.images"]\n  snapshotter = "overlayfs"\n';
    const { decision, changeset } = await planOn(buildHost(containerd2(main)).host);
    const dropIn = changeAt(changeset, "/etc/containerd/conf.d/50-kata-install.toml");
    expect(dropIn?.action).toBe("create");
    const parsed = parse(dropIn?.after as string) as Record<string, unknown>;
    expect(parsed.version).toBe(3);
    const runtimes = (
      parsed.plugins as Record<string, { containerd: { runtimes: Record<string, unknown> } }>
    )["io.containerd.cri.v1.runtime"]?.containerd.runtimes;
    expect(Object.keys(runtimes ?? {}).sort()).toEqual(decision.shims.map((s) => `kata-${s.name}`).sort());
    expect(changeAt(changeset, "/etc/containerd/config.toml")?.after).toBe(
      '# admin comment\nversion = 3\nimports = ["/etc/containerd/conf.d/*.toml"]\n\n[plugins."io.containerd.cri.v1.images"]\n  snapshotter = "overlayfs"\n',
    );
  });

  it("version 2 main: a version 2 drop-in, which the real containerd loads", async () => {
    const main = 'version = 2\nimports = ["/etc/containerd/conf.d/*.toml"]\n';
    const { changeset } = await planOn(buildHost(containerd2(main)).host);
    expect(changeAt(changeset, "/etc/containerd/config.toml")).toBeUndefined(); // already imports it
    const dropIn = changeAt(changeset, "/etc/containerd/conf.d/50-kata-install.toml")?.after as string;
    expect(parse(dropIn).version).toBe(2);
    expect(Object.keys(runtimesOf(dump(writeOut("v2-dropin/kata.toml", dropIn))))).toEqual(
      expect.arrayContaining(["kata-qemu", "kata-clh"]),
    );
  });

  it("a file in conf.d that containerd does not read today stays unread: ours is imported by its path", async () => {
    const main =
      '# admin comment\nversion = 3\n\n[plugins."io.containerd.cri.v1.images"]\n  snapshotter = "overlayfs"\n';
    // An admin's old experiment, never imported: a glob would make it live.
    const stale = '[plugins."io.containerd.cri.v1.images"]\n  snapshotter = "zfs"\n';
    const host = buildHost(containerd2(main, { files: { "/etc/containerd/conf.d/old.toml": stale } })).host;
    const { changeset } = await planOn(host);
    expect(changeAt(changeset, "/etc/containerd/config.toml")?.after).toContain(
      'imports = ["/etc/containerd/conf.d/50-kata-install.toml"]',
    );
    expect(changeAt(changeset, "/etc/containerd/conf.d/old.toml")).toBeUndefined();
  });

  it("no main file: one is created that imports the drop-in", async () => {
    const { changeset } = await planOn(buildHost(containerd2(null)).host);
    expect(changeAt(changeset, "/etc/containerd/config.toml")).toMatchObject({
      action: "create",
      after: 'version = 3\nimports = ["/etc/containerd/conf.d/*.toml"]\n',
    });
  });
});

describe("k3s, k0s, microk8s and CRI-O", () => {
  it("k3s: a drop-in in the directory its template imports", async () => {
    const spec = k3sImportingDropIns();
    const { changeset } = await planOn(buildHost(spec).host);
    const dropIn = changeAt(
      changeset,
      "/var/lib/rancher/k3s/agent/etc/containerd/config.toml.d/50-kata-install.toml",
    )?.after as string;
    expect(Object.keys(runtimesOf(dump(writeOut("k3s/kata.toml", dropIn))))).toContain("kata-qemu");
    expect(
      changeset.changes.some((c) => c.path === "/var/lib/rancher/k3s/agent/etc/containerd/config.toml"),
    ).toBe(false);
    expect(changeset.actions.find((a) => a.kind === "restart-runtime")?.target).toBe("k3s");
  });

  it("k0s: containerd.d/, then its worker restarted (k0s merges CRI drop-ins only when the worker starts)", async () => {
    const spec = intelContainerd16();
    spec.commands = { "/usr/local/bin/k0s": 'echo "v1.31.2+k0s.0"' };
    spec.files = { "/etc/k0s/containerd.toml": 'version = 2\nimports = ["/etc/k0s/containerd.d/*.toml"]\n' };
    const { decision, changeset } = await planOn(buildHost(spec).host);
    const dropIn = changeAt(changeset, "/etc/k0s/containerd.d/50-kata-install.toml");
    expect(dropIn?.action).toBe("create");
    expect(Object.keys(runtimesOf(dump(writeOut("k0s/kata.toml", dropIn?.after as string))))).toContain(
      "kata-qemu",
    );
    expect(changeset.actions.filter((a) => a.kind !== "pull-artifact")).toEqual([
      {
        kind: "restart-runtime",
        target: "k0s",
        reason:
          "k0s merges containerd.d's runtime handlers into containerd's configuration only when its worker starts",
      },
    ]);
    expect(decision.checks.find((c) => c.id === "runtime-restart")).toMatchObject({
      status: "fail",
      severity: "info",
      rule: "k0s-restarted",
    });
  });

  it("microk8s: its containerd template, edited in place", async () => {
    const template =
      // biome-ignore lint/suspicious/noTemplateCurlyInString: microk8s's template holds a literal ${SNAPSHOTTER}
      '# microk8s template\nversion = 2\n[plugins."io.containerd.grpc.v1.cri".containerd]\n  snapshotter = "${SNAPSHOTTER}"\n';
    const spec = intelContainerd16();
    spec.commands = {};
    spec.files = {
      "/var/snap/microk8s/current/args/containerd-template.toml": template,
      "/var/snap/microk8s/current/args/containerd.toml": "version = 2\n",
    };
    const { changeset } = await planOn(buildHost(spec).host);
    const edited = changeAt(changeset, "/var/snap/microk8s/current/args/containerd-template.toml");
    expect(edited?.after?.startsWith(template)).toBe(true);
    expect(edited?.after).toContain('[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.kata-qemu]');
  });

  it("microk8s with nydus (EXPERIMENTAL_SETUP_SNAPSHOTTER): the annotations line in its template's images table, the proxy plugin in the block, bound to microk8s's containerd unit", async () => {
    const template =
      '# microk8s template\nversion = 3\n[plugins."io.containerd.cri.v1.images"]\n  snapshotter = "overlayfs"\n';
    const spec = intelContainerd16();
    spec.commands = {};
    spec.files = {
      "/var/snap/microk8s/current/args/containerd-template.toml": template,
      "/var/snap/microk8s/current/args/containerd.toml": "version = 3\n",
    };
    const env = {
      EXPERIMENTAL_SETUP_SNAPSHOTTER: "nydus",
      KATA_INSTALL_NYDUS_SNAPSHOTTER_DIR: path.resolve(import.meta.dirname, "../fixtures/nydus-snapshotter"),
      SHIMS: "qemu qemu-coco-dev",
    };
    const { decision, changeset } = await planOn(buildHost(spec).host, { env });
    expect(decision.nydus?.criUnits).toEqual(["snap.microk8s.daemon-containerd.service"]);
    const after = changeAt(changeset, "/var/snap/microk8s/current/args/containerd-template.toml")
      ?.after as string;
    expect(after).toContain(
      '[plugins."io.containerd.cri.v1.images"]\n  disable_snapshot_annotations = false # kata-install: the nydus snapshotter reads images\' references from these annotations; uninstall takes this line out\n  snapshotter = "overlayfs"\n',
    );
    const parsed = parse(after);
    expect(dig(parsed, ["proxy_plugins", "nydus-for-kata-tee", "type"])).toBe("snapshot");
    const v3 = ["plugins", "io.containerd.cri.v1.runtime", "containerd", "runtimes"];
    expect(dig(parsed, [...v3, "kata-qemu-coco-dev", "snapshotter"])).toBe("nydus-for-kata-tee");
  });

  it("CRI-O: crio.conf.d with runtime_type vm and a reload", async () => {
    const spec = intelContainerd16();
    spec.commands = { "/usr/bin/crio": 'echo "crio version 1.31.0"' };
    spec.sockets = ["/var/run/crio/crio.sock"];
    spec.files = { "/etc/crio/crio.conf.d/10-crio.conf": "[crio.runtime]\n" };
    const { changeset } = await planOn(buildHost(spec).host, {
      env: { PULL_TYPE_MAPPING: "qemu:guest-pull" },
    });
    const conf = parse(
      changeAt(changeset, "/etc/crio/crio.conf.d/50-kata-install.conf")?.after as string,
    ) as Record<string, unknown>;
    const runtimes = (conf.crio as { runtime: { runtimes: Record<string, Record<string, unknown>> } }).runtime
      .runtimes;
    expect(runtimes["kata-qemu"]).toEqual({
      runtime_path: "/opt/kata/bin/containerd-shim-kata-v2",
      runtime_type: "vm",
      runtime_root: "/run/vc",
      runtime_config_path: "/opt/kata/share/defaults/kata-containers/runtimes/qemu/configuration-qemu.toml",
      privileged_without_host_devices: true,
      runtime_pull_image: true,
    });
    expect(runtimes["kata-clh"]?.runtime_pull_image).toBeUndefined();
    expect(changeset.actions).toContainEqual({
      kind: "reload-runtime",
      target: "crio",
      reason: "CRI-O re-reads its runtime handlers on reload",
    });
  });
});

describe("a node where no shim can run", () => {
  it("gets nothing of Kata's in its runtime configuration, and no restart", async () => {
    const spec = intelContainerd16();
    spec.kvmDevice = false;
    const { decision, changeset } = await planOn(buildHost(spec).host);
    expect(decision.shims).toEqual([]);
    expect(changeset.changes.filter((c) => c.role === "runtime")).toEqual([]);
    expect(changeset.actions.filter((a) => a.kind !== "pull-artifact")).toEqual([]);
  });

  it("an earlier install's handlers are taken out of config.toml", async () => {
    const spec = intelContainerd16();
    spec.kvmDevice = false;
    const original = spec.files?.["/etc/containerd/config.toml"] as string;
    spec.files = {
      ...spec.files,
      "/etc/containerd/config.toml": `${original}\n# >>> kata-install: Kata runtime handlers (managed by kata-install; edits here are replaced)\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.kata-qemu]\n  runtime_type = "io.containerd.kata-qemu.v2"\n# <<< kata-install\n`,
    };
    const { changeset } = await planOn(buildHost(spec).host);
    expect(changeAt(changeset, "/etc/containerd/config.toml")?.after).toBe(original);
  });
});

describe("kata-deploy's other per-node settings", () => {
  it("containerd 1.x, a file without a version line (schema 1): handlers under plugins.cri, which the real containerd reads", async () => {
    const spec = intelContainerd16();
    const original =
      '# schema 1: no version line\n[plugins.cri]\n  sandbox_image = "registry.example.com/pause:3.9"\n[plugins.cri.containerd]\n  snapshotter = "overlayfs"\n';
    spec.files = { ...spec.files, "/etc/containerd/config.toml": original };
    const { decision, changeset } = await planOn(buildHost(spec).host, { env: { DEBUG: "true" } });
    expect(decision.checks.find((c) => c.id === "containerd-config-version")?.status).not.toBe("fail");
    const after = changeAt(changeset, "/etc/containerd/config.toml")?.after as string;
    expect(after.startsWith(original)).toBe(true);
    expect(after).toContain(`[plugins."cri".containerd.runtimes.kata-qemu]`);
    // containerd 1.x migrates the file as it loads it: every handler, the debug ones too, and the admin's settings.
    const config = dump(writeOut("schema1/config.toml", after));
    const runtimes = runtimesOf(config);
    for (const shim of decision.shims.map((s) => s.name)) {
      expect(runtimes[`kata-${shim}`]?.runtime_type).toBe(`io.containerd.kata-${shim}.v2`);
      expect(runtimes[`kata-${shim}-debug`]?.runtime_type).toBe(`io.containerd.kata-${shim}-debug.v2`);
    }
    expect((config.plugins as Record<string, Record<string, unknown>>)[CRI]?.sandbox_image).toBe(
      "registry.example.com/pause:3.9",
    );
    expect(config.debug).toMatchObject({ level: "debug" });
  });

  it("DEBUG with the admin's own [debug] table: theirs stays as it is, and no second one", async () => {
    const spec = intelContainerd16();
    const original = `${spec.files?.["/etc/containerd/config.toml"]}\n[debug]\n  level = "info"\n  address = "/run/containerd/debug.sock"\n`;
    spec.files = { ...spec.files, "/etc/containerd/config.toml": original };
    const host = buildHost(spec);
    const { changeset } = await planOn(host.host, { env: { DEBUG: "true" } });
    const after = changeAt(changeset, "/etc/containerd/config.toml")?.after as string;
    expect(after.startsWith(original)).toBe(true);
    expect(after.match(/^\[debug\]/gm)).toHaveLength(1);
    const config = dump(writeOut("admin-debug/config.toml", after));
    expect(config.debug).toMatchObject({ level: "info", address: "/run/containerd/debug.sock" });
    expect(runtimesOf(config)["kata-qemu-debug"]).toBeDefined();
  });

  it("version 3: a mapped snapshotter is set on the images side too (runtime_platforms)", async () => {
    const main = 'version = 3\nimports = ["/etc/containerd/conf.d/*.toml"]\n';
    const spec = containerd2(main, {
      files: {
        "/etc/containerd/conf.d/10-nydus.toml":
          'version = 3\n[proxy_plugins.nydus]\n  type = "snapshot"\n  address = "/run/nydus.sock"\n',
      },
    });
    const { decision, changeset } = await planOn(buildHost(spec).host, {
      env: { SHIMS: "qemu clh", SNAPSHOTTER_HANDLER_MAPPING: "qemu:nydus" },
    });
    expect(decision.checks.find((c) => c.id === "handler-snapshotter")).toBeUndefined();
    const dropIn = parse(
      changeAt(changeset, "/etc/containerd/conf.d/50-kata-install.toml")?.after as string,
    ) as Record<string, Record<string, Record<string, unknown>>>;
    const plugins = dropIn.plugins as Record<string, Record<string, unknown>>;
    expect(
      dig(dropIn, ["plugins", "io.containerd.cri.v1.runtime", "containerd", "runtimes", "kata-qemu"]),
    ).toMatchObject({
      snapshotter: "nydus",
    });
    expect(plugins["io.containerd.cri.v1.images"]?.runtime_platforms).toEqual({
      "kata-qemu": { snapshotter: "nydus" },
    });
  });

  it("a mapped snapshotter the node lacks, or a containerd before 1.7, fails preflight", async () => {
    const missing = await planOn(buildHost(containerd2("version = 3\n")).host, {
      env: { SHIMS: "qemu", SNAPSHOTTER_HANDLER_MAPPING: "qemu:nydus" },
    });
    expect(missing.decision.checks.find((c) => c.id === "handler-snapshotter")).toMatchObject({
      severity: "error",
      status: "fail",
      message: expect.stringContaining('SNAPSHOTTER_HANDLER_MAPPING maps qemu to the snapshotter "nydus"'),
    });
    const old = await planOn(buildHost(intelContainerd16()).host, {
      env: { SHIMS: "qemu", SNAPSHOTTER_HANDLER_MAPPING: "qemu:overlayfs" },
    });
    expect(old.decision.checks.find((c) => c.id === "handler-snapshotter")?.message).toMatch(
      /containerd 1\.6\.\S+ has no snapshotter per runtime handler/,
    );
    // On CRI-O (one DaemonSet's environment for the whole cluster) it has nothing to act on: said, not an error.
    const crio = intelContainerd16();
    crio.commands = { "/usr/bin/crio": 'echo "crio version 1.31.0"' };
    crio.sockets = ["/var/run/crio/crio.sock"];
    crio.files = { "/etc/crio/crio.conf.d/10-crio.conf": "[crio.runtime]\n" };
    const onCrio = await planOn(buildHost(crio).host, {
      env: { SHIMS: "qemu", SNAPSHOTTER_HANDLER_MAPPING: "qemu:nydus" },
    });
    expect(onCrio.decision.checks.find((c) => c.id === "handler-snapshotter")).toMatchObject({
      severity: "warning",
      message: expect.stringContaining("ignored here"),
    });
  });

  it("CRI-O: kata-deploy's storage_option unless the admin set one, and DEBUG's log level", async () => {
    const crio = (files: Record<string, string>) => {
      const spec = intelContainerd16();
      spec.commands = { "/usr/bin/crio": 'echo "crio version 1.31.0"' };
      spec.sockets = ["/var/run/crio/crio.sock"];
      spec.files = { "/etc/crio/crio.conf.d/10-crio.conf": "[crio.runtime]\n", ...files };
      return buildHost(spec).host;
    };
    const conf = async (files: Record<string, string>, env: Record<string, string> = {}) =>
      parse(
        changeAt((await planOn(crio(files), { env })).changeset, "/etc/crio/crio.conf.d/50-kata-install.conf")
          ?.after as string,
      ) as { crio: { storage_option?: string[]; runtime: { log_level?: string; runtimes: object } } };
    const plain = await conf({});
    expect(plain.crio.storage_option).toEqual(["overlay.skip_mount_home=true"]);
    expect(plain.crio.runtime.log_level).toBeUndefined();
    const debug = await conf({}, { DEBUG: "true" });
    expect(debug.crio.runtime.log_level).toBe("debug");
    expect(Object.keys(debug.crio.runtime.runtimes)).toContain("kata-qemu-debug");
    const admins = await conf({
      "/etc/crio/crio.conf": '[crio]\nstorage_option = ["overlay.mountopt=nodev"]\n',
    });
    expect(admins.crio.storage_option).toBeUndefined();
  });

  it("k0s: every shim whose configuration has kubelet_root_dir gets k0s's, through the decision", async () => {
    const spec = intelContainerd16();
    spec.commands = { "/usr/local/bin/k0s": 'echo "v1.31.2+k0s.0"' };
    spec.files = { "/etc/k0s/containerd.toml": 'version = 2\nimports = ["/etc/k0s/containerd.d/*.toml"]\n' };
    const release = releaseFor("x86_64");
    const shims = ["qemu", "clh", "qemu-nvidia-cpu", "qemu-nvidia-gpu-runtime-rs", "qemu-runtime-rs"];
    const { decision, changeset } = await planOn(buildHost(spec).host, {
      flags: { shims, ignorePreflightErrors: ["all"] },
    });
    for (const shim of shims) {
      const has = release.shims.get(shim)?.config.keys.has("runtime.kubelet_root_dir");
      const decided = decision.config[shim]?.["runtime.kubelet_root_dir"];
      if (!has) {
        expect(decided, shim).toBeUndefined();
        continue;
      }
      expect(decided, shim).toMatchObject({
        value: "/var/lib/k0s/kubelet",
        source: { kind: "rule", name: "k0s-kubelet-root" },
      });
      // Rendered into the shim's config.d drop-in, which Kata reads over the release's file.
      const dir = `/opt/kata/share/defaults/kata-containers/${release.shims.get(shim)?.runtime === "rust" ? "runtime-rs/" : ""}runtimes/${shim}`;
      const dropIn = parse(changeAt(changeset, `${dir}/config.d/50-kata-install.toml`)?.after as string);
      expect(dig(dropIn, ["runtime", "kubelet_root_dir"]), shim).toBe("/var/lib/k0s/kubelet");
    }
    // The Rust NVIDIA shims have the key in 4.1.0 (kata-deploy leaves every Rust shim out); qemu-runtime-rs has not.
    expect(decision.config["qemu-nvidia-gpu-runtime-rs"]?.["runtime.kubelet_root_dir"]).toBeDefined();
    expect(decision.config["qemu-runtime-rs"]?.["runtime.kubelet_root_dir"]).toBeUndefined();
  });

  it("CONTAINERD_CONFIG_FILE_NAME: containerd started on another file of /etc/containerd gets the handlers there", async () => {
    const spec = intelContainerd16();
    const original = spec.files?.["/etc/containerd/config.toml"] as string;
    spec.files = { ...spec.files, "/etc/containerd/config-custom.toml": original };
    const env = { CONTAINERD_CONFIG_FILE_NAME: "config-custom.toml" };
    const { facts, changeset } = await planOn(buildHost(spec).host, { env });
    expect(facts.runtime.configPath).toBe("/etc/containerd/config-custom.toml");
    expect(changeAt(changeset, "/etc/containerd/config-custom.toml")?.after).toContain("runtimes.kata-qemu]");
    expect(changeAt(changeset, "/etc/containerd/config.toml")).toBeUndefined();
  });

  it("an admin's own kata-qemu-debug (its configuration elsewhere) is theirs: kept; DEBUG, which needs the name, is refused", async () => {
    const spec = intelContainerd16();
    const original = `${spec.files?.["/etc/containerd/config.toml"]}
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.kata-qemu-debug]
  runtime_type = "io.containerd.kata.v2"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.kata-qemu-debug.options]
    ConfigPath = "/etc/kata-containers/my-debug.toml"
`;
    spec.files = { ...spec.files, "/etc/containerd/config.toml": original };
    const { changeset } = await planOn(buildHost(spec).host);
    const after = changeAt(changeset, "/etc/containerd/config.toml")?.after as string;
    expect(after.startsWith(original)).toBe(true);
    expect(
      runtimesOf(dump(writeOut("admin-debug-handler/config.toml", after)))["kata-qemu-debug"],
    ).toMatchObject({
      options: { ConfigPath: "/etc/kata-containers/my-debug.toml" },
    });
    await expect(planOn(buildHost(spec).host, { env: { DEBUG: "true" } })).rejects.toThrow(
      /kata-qemu-debug \(\/etc\/containerd\/config\.toml\) is a handler of the node's own, for \/etc\/kata-containers\/my-debug\.toml; DEBUG's debug handler needs the name: rename it, or leave DEBUG unset/,
    );
  });
});

describe("kata-deploy's import of a drop-in that is gone", () => {
  const STALE = "/opt/kata/containerd/config.d/kata-deploy.toml";
  /** The real containerd's error for a file, or null when it loads. */
  const loadError = (file: string): string | null => {
    try {
      dump(file);
      return null;
    } catch (error) {
      return String((error as { stderr?: string }).stderr ?? error);
    }
  };

  it("containerd 1.x: taken out of config.toml as the handlers go in; the real containerd loads the result, not the original", async () => {
    const spec = intelContainerd16();
    const admins = writeOut("stale/admins-import.toml", "# the admin's own import, which stays\n");
    const original = `imports = [${JSON.stringify(admins)}, "${STALE}"]\n${spec.files?.["/etc/containerd/config.toml"]}`;
    spec.files = { ...spec.files, "/etc/containerd/config.toml": original };
    const { facts, changeset } = await planOn(buildHost(spec).host);
    expect(facts.kata.managedBy).not.toBe("kata-deploy"); // no takeover: kata-deploy's tree is gone
    expect(loadError(writeOut("stale/original.toml", original))).toMatch(
      /kata-deploy\.toml: no such file or directory/,
    );
    const edited = changeAt(changeset, "/etc/containerd/config.toml");
    expect(edited?.after).toContain(`imports = [${JSON.stringify(admins)}]\n`);
    expect(edited?.after).not.toContain("kata-deploy.toml");
    expect(edited?.reason).toMatch(/kata-deploy's imports out/);
    expect(loadError(writeOut("stale/after.toml", edited?.after as string))).toBeNull();
    expect(
      runtimesOf(dump(writeOut("stale/after.toml", edited?.after as string)))["kata-qemu"],
    ).toBeDefined();
    // Uninstall gives the file back without it: restoring it would stop containerd again.
    expect(edited?.restore).toBe(original.replace(`, "${STALE}"`, ""));
  });

  it("containerd 2.x: taken out of the main file, also when nothing else there changes", async () => {
    const main = `version = 2\nimports = ["/etc/containerd/conf.d/*.toml", "${STALE}"]\n`;
    const { changeset } = await planOn(buildHost(containerd2(main)).host);
    const edited = changeAt(changeset, "/etc/containerd/config.toml");
    expect(edited?.after).toBe('version = 2\nimports = ["/etc/containerd/conf.d/*.toml"]\n');
    expect(loadError(writeOut("stale2/main.toml", main))).toMatch(/no such file or directory/);
    expect(loadError(writeOut("stale2/after.toml", edited?.after as string))).toBeNull();
    expect(changeset.actions.map((a) => a.kind)).toContain("restart-runtime");
  });

  it("with no shim to install, and for kata-deploy's user drop-in and suffixed names too", async () => {
    const spec = containerd2(
      `version = 2\nimports = ["/opt/kata-ci/containerd/config.d/kata-deploy-ci.toml", "/opt/kata/containerd/config.d/zz-kata-deploy-user.toml"]\n`,
    );
    spec.kvmDevice = false;
    const { decision, changeset } = await planOn(buildHost(spec).host);
    expect(decision.shims).toEqual([]);
    const after = changeAt(changeset, "/etc/containerd/config.toml")?.after as string;
    expect(parse(after).imports ?? []).not.toContainEqual(expect.stringContaining("kata-deploy"));
    expect(after).not.toContain("kata-deploy");
  });

  it("one whose file is there stays: that is another install's (only a takeover makes it kata-install's)", async () => {
    const spec = containerd2(
      `version = 2\nimports = ["/etc/containerd/conf.d/*.toml", "/opt/other/kata-deploy.toml"]\n`,
      {
        files: { "/opt/other/kata-deploy.toml": "version = 2\n" },
      },
    );
    const { changeset } = await planOn(buildHost(spec).host);
    expect(changeAt(changeset, "/etc/containerd/config.toml")).toBeUndefined();
  });
});

describe("the erofs snapshotter: built into containerd from 2.2", () => {
  const onContainerd = (version: string, files: Record<string, string> = {}) => {
    const spec = containerd2('version = 3\nimports = ["/etc/containerd/conf.d/*.toml"]\n', { files });
    spec.commands = {
      ...spec.commands,
      "/usr/bin/containerd": `echo "containerd containerd.io ${version} 0123abcd"`,
    };
    return buildHost(spec).host;
  };
  const env = { SHIMS: "qemu-runtime-rs qemu", SNAPSHOTTER_HANDLER_MAPPING: "qemu-runtime-rs:erofs" };

  it("containerd 2.2: a mapping to erofs is taken without an erofs table in the node's configuration", async () => {
    const { facts, decision, changeset } = await planOn(onContainerd("2.2.0"), { env });
    expect(facts.runtime.snapshotters).toEqual([]);
    expect(decision.checks.find((c) => c.id === "handler-snapshotter")).toBeUndefined();
    const dropIn = parse(changeAt(changeset, "/etc/containerd/conf.d/50-kata-install.toml")?.after as string);
    expect(
      dig(dropIn, [
        "plugins",
        "io.containerd.cri.v1.runtime",
        "containerd",
        "runtimes",
        "kata-qemu-runtime-rs",
      ]),
    ).toMatchObject({ snapshotter: "erofs" });
    expect(dig(dropIn, ["plugins", "io.containerd.cri.v1.images", "runtime_platforms"])).toEqual({
      "kata-qemu-runtime-rs": { snapshotter: "erofs" },
    });
  });

  it("containerd 2.1: refused unless the node configures erofs; configured, taken", async () => {
    const refused = await planOn(onContainerd("2.1.5"), { env });
    expect(refused.decision.checks.find((c) => c.id === "handler-snapshotter")).toMatchObject({
      severity: "error",
      message:
        'SNAPSHOTTER_HANDLER_MAPPING maps qemu-runtime-rs to the snapshotter "erofs", which is not configured on this node',
      hint: "configure it in containerd (configured here: native, overlayfs), or map the handler to one of those",
    });
    const configured = await planOn(
      onContainerd("2.1.5", {
        "/etc/containerd/conf.d/10-erofs.toml":
          'version = 3\n[plugins."io.containerd.snapshotter.v1.erofs"]\n  default_size = "10G"\n',
      }),
      { env },
    );
    expect(configured.decision.checks.find((c) => c.id === "handler-snapshotter")).toBeUndefined();
  });
});
