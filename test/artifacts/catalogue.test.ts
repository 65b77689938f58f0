import { describe, expect, it } from "vitest";
import { globToRegExp, loadArtifactCatalogue, owner } from "../../src/artifacts/catalogue.js";
import { catalog } from "../helpers/decide.js";

describe("the artifact catalogue", () => {
  const catalogue = loadArtifactCatalogue();

  it("has every artifact a shim needs, and no artifact that no shim needs", () => {
    expect([...catalogue.keys()].sort()).toEqual([...catalog.artifacts].sort());
  });

  it("puts each file of Kata's release layout in one artifact", () => {
    expect(owner(catalogue, "bin/containerd-shim-kata-v2")).toBe("base");
    expect(owner(catalogue, "runtime-rs/bin/containerd-shim-kata-v2")).toBe("base-rust");
    expect(owner(catalogue, "bin/qemu-system-x86_64")).toBe("qemu");
    expect(owner(catalogue, "share/kata-qemu/qemu/bios-256k.bin")).toBe("qemu");
    expect(owner(catalogue, "share/kata-containers/vmlinux-6.12.8-146")).toBe("base");
    expect(owner(catalogue, "share/kata-containers/vmlinux-confidential-6.12.8-146")).toBe("coco-guest");
    expect(owner(catalogue, "share/kata-containers/vmlinux-nvidia-gpu-6.12.8-146")).toBe("nvidia-gpu-guest");
    expect(owner(catalogue, "bin/jailer")).toBe("firecracker");
    expect(owner(catalogue, "bin/unknown-tool")).toBeUndefined();
  });

  it("globs: * within a name, ** across directories", () => {
    expect(globToRegExp("share/*.img").test("share/a.img")).toBe(true);
    expect(globToRegExp("share/*.img").test("share/x/a.img")).toBe(false);
    expect(globToRegExp("runtime-rs/**").test("runtime-rs/bin/x")).toBe(true);
  });
});
