// The files kata-install writes for the user (--out, --emit-overrides): never through a link
// planted at the temp name, never over a link at the name itself.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";

// The temp name, made predictable: an attacker who guessed it planted a link there first.
vi.mock("../src/host/exclusive.js", async (original) => ({
  ...(await original<typeof import("../src/host/exclusive.js")>()),
  tempName: (prefix: string) => `${prefix}guessed`,
}));
const { writeFileAtomically } = await import("../src/write-file.js");

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-write-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("a file kata-install writes for the user", () => {
  it("a link another user planted at the temp name: the write fails, the link's target untouched", () => {
    const victim = path.join(dir, "secret");
    fs.writeFileSync(victim, "root's secret\n");
    const out = path.join(dir, "plan.json");
    const planted = path.join(dir, ".plan.json.guessed");
    fs.symlinkSync(victim, planted);
    // Owned by another user, as in a sticky /tmp.
    fs.lchownSync(planted, 65534, 65534);
    expect(() => writeFileAtomically(out, "{}\n", "--out")).toThrow(/--out .*plan\.json: cannot write it/);
    expect(fs.readFileSync(victim, "utf8")).toBe("root's secret\n");
    expect(fs.readlinkSync(planted)).toBe(victim);
    expect(fs.existsSync(out)).toBe(false);
  });

  it("a link at the name itself: refused, naming it; neither it nor its target changes", () => {
    const target = path.join(dir, "elsewhere.json");
    fs.writeFileSync(target, "theirs\n");
    const out = path.join(dir, "linked.json");
    fs.symlinkSync(target, out);
    expect(() => writeFileAtomically(out, "{}\n", "--out")).toThrow(
      `--out ${out}: it is a symbolic link (to ${target}): kata-install writes neither through nor over one`,
    );
    expect(fs.readlinkSync(out)).toBe(target);
    expect(fs.readFileSync(target, "utf8")).toBe("theirs\n");
  });

  it("otherwise written whole, a regular file of mode 644, no temp left", () => {
    const out = path.join(dir, "fine.json");
    writeFileAtomically(out, "{}\n", "--out");
    expect(fs.readFileSync(out, "utf8")).toBe("{}\n");
    expect(fs.lstatSync(out).mode & 0o777).toBe(0o644);
    expect(fs.readdirSync(dir).filter((n) => n.startsWith(".fine.json."))).toEqual([]);
  });
});
