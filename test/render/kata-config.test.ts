// Kata configurations: every shim's base file renders, parses and holds only Kata's keys; decided
// values land in config.d with their source; no value can break out of its key.
import { parse } from "smol-toml";
import { afterAll, describe, expect, it } from "vitest";
import { dig } from "../../src/detect/toml.js";
import { catalog } from "../helpers/decide.js";
import { intelContainerd16, qemuScript } from "../helpers/nodes.js";
import { changeAt, planOn } from "../helpers/plan.js";
import { buildHost, removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);

const DEFAULTS = "/opt/kata/share/defaults/kata-containers";
/** Where kata-deploy (and so kata-install) keeps a shim's configuration: Rust shims under runtime-rs/. */
const dirOf = (shim: string) =>
  catalog.shims.get(shim)?.runtime === "rust"
    ? `${DEFAULTS}/runtime-rs/runtimes/${shim}`
    : `${DEFAULTS}/runtimes/${shim}`;
const base = (shim: string) => `${dirOf(shim)}/configuration-${shim}.toml`;
const decided = (shim: string) => `${dirOf(shim)}/config.d/50-kata-install.toml`;
type Table = Record<string, Record<string, Record<string, unknown>>>;

describe("every shim's base configuration", async () => {
  // Pin every shim (opt-in ones too) so each template renders; contradictions do not matter here.
  const { changeset } = await planOn(buildHost(intelContainerd16()).host, {
    flags: { shims: catalog.shimNames() },
  });
  const read = (shim: string) => parse(changeAt(changeset, base(shim))?.after as string) as Table;

  it("renders for each shim, parses, and holds only keys Kata has", () => {
    for (const shim of catalog.shimNames()) {
      const table = read(shim);
      const spec = catalog.shims.get(shim);
      expect(Object.keys(table.hypervisor ?? {})).toEqual([spec?.hypervisor]);
      expect(table.runtime).toBeDefined();
    }
  });

  it("Cloud Hypervisor: virtio-fs, virtio-blk, VFIO hot/cold plug, seccomp, rate limiters", () => {
    const clh = read("clh").hypervisor?.clh as Record<string, unknown>;
    expect(clh).toMatchObject({
      path: "/opt/kata/bin/cloud-hypervisor",
      shared_fs: "virtio-fs",
      block_device_driver: "virtio-blk",
      hot_plug_vfio: "no-port",
      cold_plug_vfio: "no-port",
      disable_seccomp: false,
      net_rate_limiter_bw_max_rate: 0,
      disk_rate_limiter_ops_max_rate: 0,
    });
  });

  it("confidential and GPU variants carry their settings", () => {
    expect(read("qemu-snp").hypervisor?.qemu).toMatchObject({
      confidential_guest: true,
      sev_snp_guest: true,
      shared_fs: "none",
      firmware: "/opt/kata/share/ovmf/AMDSEV.fd",
    });
    expect(read("qemu-tdx").hypervisor?.qemu).toMatchObject({
      confidential_guest: true,
      kernel: "/opt/kata/share/kata-containers/vmlinuz.container",
    });
    expect(read("qemu-tdx").hypervisor?.qemu?.sev_snp_guest).toBeUndefined();
    expect(read("qemu-nvidia-gpu").hypervisor?.qemu).toMatchObject({
      cold_plug_vfio: "root-port",
      pcie_root_port: 8,
    });
    expect(read("qemu-nvidia-gpu").runtime).toMatchObject({ static_sandbox_resource_mgmt: true });
    expect(read("fc").hypervisor?.firecracker).toMatchObject({
      jailer_path: "/opt/kata/bin/jailer",
      block_device_driver: "virtio-mmio",
    });
    expect(read("qemu-runtime-rs").runtime).toMatchObject({
      name: "virt_container",
      hypervisor_name: "qemu",
      agent_name: "kata",
    });
    expect(read("qemu").runtime?.name).toBeUndefined();
  });

  it("the handlers point at these files", () => {
    const main = changeAt(changeset, "/etc/containerd/config.toml")?.after as string;
    expect(main).toContain(`ConfigPath = "${base("qemu-tdx")}"`);
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
      kernel_params: "agent.https_proxy=http://proxy:3128",
    });
    // DEBUG leaves the normal handler's guest as it is (kata-deploy: measurement-stable).
    expect(table.hypervisor?.qemu?.enable_debug).toBeUndefined();
    expect(table.runtime?.enable_debug).toBeUndefined();
    expect(text).toContain("# the host's qemu, from rule use-distro-qemu (rules/hypervisors.toml)\npath = ");
    // The base keeps Kata's defaults: the decision is visible as a drop-in, not buried in the file.
    expect(parse(changeAt(changeset, base("qemu"))?.after as string)).toMatchObject({
      hypervisor: { qemu: { path: "/opt/kata/bin/qemu-system-x86_64", enable_debug: false } },
    });
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
    const evil = 'x"\n[evil]\ny = 1';
    const { changeset } = await planOn(buildHost(intelContainerd16()).host, {
      overrides: `[config.qemu]\n"hypervisor.qemu.kernel_params" = ${JSON.stringify(evil)}\n`,
    });
    const table = parse(changeAt(changeset, decided("qemu"))?.after as string) as Table;
    expect(table.hypervisor?.qemu?.kernel_params).toBe(evil);
    expect(Object.keys(table)).toEqual(["hypervisor"]);
  });

  it("a shim without decided values has no drop-in", async () => {
    const { changeset } = await planOn(buildHost(intelContainerd16()).host);
    expect(changeAt(changeset, base("dragonball"))).toBeDefined();
    expect(changeAt(changeset, decided("dragonball"))).toBeUndefined();
  });
});
