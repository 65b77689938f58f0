import { describe, expect, it } from "vitest";
import { referenceProblem, splitReference } from "../src/image-reference.js";

describe("an image reference, as distribution's grammar has it", () => {
  it("takes what registries take", () => {
    for (const ref of [
      "quay.io/kata-containers/kata-install:latest",
      "localhost:5000/kata/install",
      `registry.local:5000/a/b_c/d__e/f-g:v1.2-rc_3@sha256:${"0".repeat(64)}`,
      "ubuntu",
      "[::1]:5000/x",
    ])
      expect(referenceProblem(ref, "reference"), ref).toBeNull();
    expect(referenceProblem("quay.io/kata-containers/kata-monitor", "repository")).toBeNull();
    expect(referenceProblem("4.1.0", "tag")).toBeNull();
  });

  it("refuses what they do not: a newline, upper case in the path, a space, a tag where none goes", () => {
    expect(referenceProblem("quay.io/x\nprivileged: true", "reference")).toBe(
      '"quay.io/x\\nprivileged: true" is not an image reference (HOST/REPOSITORY[:TAG][@DIGEST], lower-case repository)',
    );
    for (const ref of [
      "quay.io/Kata/install",
      "quay.io/kata install",
      "quay.io/x:",
      "quay.io/x@sha256:abc",
      "",
    ])
      expect(referenceProblem(ref, "reference"), ref).not.toBeNull();
    expect(referenceProblem("quay.io/x:v1", "repository")).not.toBeNull();
    expect(referenceProblem("-v1", "tag")).not.toBeNull();
    expect(referenceProblem("a".repeat(129), "tag")).not.toBeNull();
  });

  it("splits into repository and tag: a registry's port is no tag, a digest is neither", () => {
    expect(splitReference("ghcr.io/o/kata-install:v0.1.0")).toEqual({
      repository: "ghcr.io/o/kata-install",
      tag: "v0.1.0",
    });
    expect(splitReference("localhost:5000/kata")).toEqual({ repository: "localhost:5000/kata", tag: null });
    expect(splitReference(`localhost:5000/kata:1@sha256:${"a".repeat(64)}`)).toEqual({
      repository: "localhost:5000/kata",
      tag: "1",
    });
  });
});
