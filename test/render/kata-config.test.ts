// Kata configurations: each shim's base file is the release's own, byte for byte; what
// kata-install decided is a config.d drop-in with its source; the configuration Kata reads keeps
// every key and value of the release's file that no drop-in decides. Tested on every shim of
// Kata 4.1.0 on both architectures, with the configuration files its build generates.
import { parse } from "smol-toml";
import { afterAll, describe, expect, it } from "vitest";
import type { Changeset } from "../../src/changeset.js";
import type { Decision } from "../../src/decide/decision.js";
import { dig, isTable } from "../../src/detect/toml.js";
import { mergeDropIn, parseKataToml } from "../../src/release/config-file.js";
import { releaseFor } from "../helpers/decide.js";
import { arm64Containerd20, gpuDistroQemuK3s, intelContainerd16, qemuScript } from "../helpers/nodes.js";
import { changeAt, planOn } from "../helpers/plan.js";
import { buildHost, removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);

const DEFAULTS = "/opt/kata/share/defaults/kata-containers";
/** Where kata-deploy (and so kata-install) keeps a shim's configuration: Rust shims under runtime-rs/. */
const dirOf = (shim: string, runtime: "go" | "rust") =>
  runtime === "rust" ? `${DEFAULTS}/runtime-rs/runtimes/${shim}` : `${DEFAULTS}/runtimes/${shim}`;
const runtimeOf = (shim: string) => releaseFor("x86_64").shims.get(shim)?.runtime ?? "go";
const base = (shim: string) => `${dirOf(shim, runtimeOf(shim))}/configuration-${shim}.toml`;
const decided = (shim: string) => `${dirOf(shim, runtimeOf(shim))}/config.d/50-kata-install.toml`;
type Table = Record<string, Record<string, Record<string, unknown>>>;

/** Every leaf of a table, as "section.key" → value (a list of tables counts as one value). */
function leaves(table: Record<string, unknown>, prefix = ""): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const [key, value] of Object.entries(table)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (isTable(value)) for (const [k, v] of leaves(value, path)) out.set(k, v);
    else out.set(path, value);
  }
  return out;
}

/** The configuration Kata reads for `shim`: the base file, then the plan's drop-in over it. */
function effective(changeset: Changeset, dir: string, shim: string): Record<string, unknown> {
  const table = parseKataToml(changeAt(changeset, `${dir}/configuration-${shim}.toml`)?.after as string);
  const dropIn = changeAt(changeset, `${dir}/config.d/50-kata-install.toml`)?.after;
  return dropIn ? mergeDropIn(table, parseKataToml(dropIn)) : table;
}

describe.each([
  ["x86_64", intelContainerd16],
  ["aarch64", arm64Containerd20],
] as const)("Kata 4.1.0 on %s: every shim the release ships", async (arch, node) => {
  const release = releaseFor(arch);
  const shims = [...release.shims.keys()].sort();
  // Every shim pinned (the unvetted ones too): contradictions with the node do not matter here.
  const { changeset, decision } = await planOn(buildHost(node()).host, { flags: { shims } });
  const dirFor = (shim: string) => dirOf(shim, release.shims.get(shim)?.runtime ?? "go");

  it("is installed from the release's own file, byte for byte", () => {
    expect(decision.shims.map((s) => s.name).sort()).toEqual(shims);
    for (const shim of shims)
      expect(changeAt(changeset, `${dirFor(shim)}/configuration-${shim}.toml`)?.after, shim).toBe(
        release.shims.get(shim)?.config.text,
      );
  });

  it("keeps every key and value of the release's file that no drop-in decides", () => {
    let kept = 0;
    let total = 0;
    for (const shim of shims) {
      const shipped = leaves(release.shims.get(shim)?.config.table ?? {});
      const read = leaves(effective(changeset, dirFor(shim), shim));
      const decidedKeys = new Set(Object.keys((decision as Decision).config[shim] ?? {}));
      for (const [key, value] of shipped) {
        total++;
        if (decidedKeys.has(key)) continue;
        expect(read.get(key), `${shim}: ${key}`).toEqual(value);
        kept++;
      }
      // Nothing appears that neither the release nor a decision put there.
      for (const key of read.keys())
        expect(shipped.has(key) || decidedKeys.has(key), `${shim}: ${key}`).toBe(true);
    }
    expect(kept).toBeGreaterThan(total * 0.97);
  });
});

describe("the release's values reach the node where kata-install's copy of them differed", async () => {
  const { changeset } = await planOn(buildHost(gpuDistroQemuK3s()).host, {
    flags: { shims: ["qemu", "qemu-nvidia-gpu", "dragonball"] },
  });
  const read = (shim: string) =>
    effective(changeset, dirOf(shim, runtimeOf(shim)), shim).hypervisor as Record<
      string,
      Record<string, unknown>
    >;

  it("the NVIDIA GPU shim boots the release's erofs image with its memory, parameters and timeouts", () => {
    const gpu = effective(changeset, dirOf("qemu-nvidia-gpu", "go"), "qemu-nvidia-gpu") as Table;
    expect(gpu.hypervisor?.qemu).toMatchObject({ rootfs_type: "erofs", default_memory: 8192 });
    expect(gpu.hypervisor?.qemu?.kernel_params).toContain("pci=realloc pci=nocrs pci=assign-busses");
    expect(gpu.runtime).toMatchObject({ create_container_timeout: 1200 });
    expect(gpu.runtime?.pod_resource_api_sock).toBeTruthy();
  });

  it("qemu keeps the release's cgroup parameters; Dragonball its block driver", () => {
    expect(read("qemu").qemu?.kernel_params).toContain("cgroup_no_v1=all systemd.unified_cgroup_hierarchy=1");
    expect(read("dragonball").dragonball?.block_device_driver).toBe("virtio-blk-pci");
  });
});

describe("decided values", () => {
  it("go into config.d with their source, over an untouched base", async () => {
    const spec = intelContainerd16();
    spec.commands = { ...spec.commands, "/usr/bin/qemu-system-x86_64": qemuScript("8.2.2") };
    const { changeset } = await planOn(buildHost(spec).host, {
      env: { DEBUG: "true", AGENT_HTTPS_PROXY: "http://proxy:3128" },
    });
    const text = changeAt(changeset, decided("qemu"))?.after as string;
    const table = parse(text) as Table;
    expect(table.hypervisor?.qemu).toMatchObject({
      path: "/usr/bin/qemu-system-x86_64",
      valid_hypervisor_paths: ["/usr/bin/qemu-system-x86_64"],
      // The environment's parameters after the release's own.
      kernel_params:
        "cgroup_no_v1=all systemd.unified_cgroup_hierarchy=1 agent.https_proxy=http://proxy:3128",
    });
    // DEBUG leaves the normal handler's guest as it is (kata-deploy: measurement-stable).
    expect(table.hypervisor?.qemu?.enable_debug).toBeUndefined();
    expect(table.runtime?.enable_debug).toBeUndefined();
    expect(text).toContain("# the host's qemu, from rule use-distro-qemu (rules/hypervisors.toml)\npath = ");
    // The base is the release's: the decision is visible as a drop-in, not buried in the file.
    expect(changeAt(changeset, base("qemu"))?.after).toBe(
      releaseFor("x86_64").shims.get("qemu")?.config.text,
    );
  });

  it("DEBUG: each shim's debug handler has the same base and its values with guest debug on", async () => {
    const { changeset } = await planOn(buildHost(intelContainerd16()).host, {
      env: { DEBUG: "true", AGENT_HTTPS_PROXY: "http://proxy:3128" },
    });
    const dir = "/opt/kata/share/defaults/kata-containers/custom-runtimes/kata-qemu-debug";
    expect(changeAt(changeset, `${dir}/configuration-qemu.toml`)?.after).toBe(
      changeAt(changeset, base("qemu"))?.after,
    );
    const text = changeAt(changeset, `${dir}/config.d/50-kata-install.toml`)?.after as string;
    const table = parse(text) as Table;
    const baseParams = (parse(changeAt(changeset, base("qemu"))?.after as string) as Table).hypervisor?.qemu
      ?.kernel_params as string;
    expect(table.hypervisor?.qemu).toMatchObject({
      enable_debug: true,
      // The base's parameters, the proxy's, then kata-deploy's debug ones.
      kernel_params:
        `${baseParams} agent.https_proxy=http://proxy:3128 agent.log=debug initcall_debug`.trim(),
    });
    expect(table.runtime?.enable_debug).toBe(true);
    expect(table.agent?.kata).toEqual({ enable_debug: true, debug_console_enabled: true });
    expect(text).toContain("# environment DEBUG\nenable_debug = true");
    // The handler points there; containerd's own log level is raised.
    const main = changeAt(changeset, "/etc/containerd/config.toml")?.after as string;
    const runtimes = dig(parse(main), [
      "plugins",
      "io.containerd.grpc.v1.cri",
      "containerd",
      "runtimes",
    ]) as Table;
    expect(runtimes?.["kata-qemu-debug"]).toMatchObject({
      runtime_type: "io.containerd.kata-qemu-debug.v2",
      runtime_path: "/opt/kata/bin/containerd-shim-kata-v2",
      options: { ConfigPath: `${dir}/configuration-qemu.toml` },
    });
    expect(runtimes?.["kata-qemu"]?.options?.ConfigPath).toBe(base("qemu"));
    expect((parse(main) as Table).debug).toEqual({ level: "debug" });
  });

  it("a value cannot break out of its key", async () => {
    // (Not kernel_params: a newline is refused there before anything is rendered, env-values.test.ts.)
    const evil = 'x"\n[evil]\ny = 1';
    const { changeset } = await planOn(buildHost(intelContainerd16()).host, {
      overrides: `[config.qemu]\n"hypervisor.qemu.machine_accelerators" = ${JSON.stringify(evil)}\n`,
    });
    const table = parse(changeAt(changeset, decided("qemu"))?.after as string) as Table;
    expect(table.hypervisor?.qemu?.machine_accelerators).toBe(evil);
    expect(Object.keys(table)).toEqual(["hypervisor"]);
  });

  it("a shim without decided values has no drop-in", async () => {
    const { changeset } = await planOn(buildHost(intelContainerd16()).host);
    expect(changeAt(changeset, base("dragonball"))).toBeDefined();
    expect(changeAt(changeset, decided("dragonball"))).toBeUndefined();
  });

  it("the handlers point at these files", async () => {
    const { changeset } = await planOn(buildHost(intelContainerd16()).host, {
      flags: { shims: ["qemu-tdx"] },
    });
    const main = changeAt(changeset, "/etc/containerd/config.toml")?.after as string;
    expect(main).toContain(`ConfigPath = "${base("qemu-tdx")}"`);
  });
});
