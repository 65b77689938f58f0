// A system error that reaches the command line is one line naming the file and what to do, never
// Node's own text ("ENOENT: no such file or directory, rename '…/.kata-install-new-9090'").
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { hostError, systemErrorLine, UserError } from "../src/errors.js";

function thrown(f: () => void): unknown {
  try {
    f();
  } catch (error) {
    return error;
  }
  throw new Error("did not throw");
}

describe("system errors, said for a user", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-errors-"));
  const temp = path.join(dir, ".kata-install-new-9090");

  it("a rename of a directory gone meanwhile: both paths, the reason and what to do", () => {
    const error = thrown(() => fs.renameSync(temp, path.join(dir, "kata")));
    expect((error as Error).message).toMatch(/^ENOENT: no such file or directory, rename/);
    expect(systemErrorLine(error)).toBe(
      `cannot rename ${temp} as ${path.join(dir, "kata")}: no such file or directory (ENOENT): a directory on its way is missing, or it went while kata-install ran: check the path, then run kata-install again`,
    );
  });

  it("a write on a file system that refuses it names where, and the advice for its code", () => {
    const error = Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    expect(hostError("cannot write /etc/containerd/config.toml", error).message).toBe(
      "cannot write /etc/containerd/config.toml: no space left on device (ENOSPC): free space on that file system, then run kata-install again",
    );
  });

  it("anything that is not a system error is left as it is", () => {
    const own = new UserError("the overrides file is invalid");
    expect(systemErrorLine(own)).toBeNull();
    expect(hostError("x", own)).toBe(own);
    expect(systemErrorLine(new TypeError("x is undefined"))).toBeNull();
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
