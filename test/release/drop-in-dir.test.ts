// config.d/ read as Kata reads it: every entry whatever its name, in the order of the names as
// bytes, the plan's files in place of the node's, and what Kata could not read said.
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readDropIns } from "../../src/release/drop-in-dir.js";
import { intelContainerd16 } from "../helpers/nodes.js";
import { buildHost, removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);
const DIR = "/opt/kata/share/defaults/kata-containers/runtimes/qemu/config.d";

describe("readDropIns", () => {
  it("takes every entry, not only *.toml, in byte order; the plan's files replace or remove the node's", async () => {
    const node = buildHost(intelContainerd16());
    node.write(`${DIR}/10-admin.toml`, "a = 1\n");
    node.write(`${DIR}/90-override`, "b = 2\n");
    node.write(`${DIR}/50-kata-install.toml~`, "c = 3\n");
    node.write(`${DIR}/20-gone.toml`, "d = 4\n");
    // U+FF21 is after U+1F600 in UTF-16 but before it as UTF-8 bytes, the order Kata reads.
    node.write(`${DIR}/\u{1F600}.toml`, "e = 5\n");
    node.write(`${DIR}/\uFF21.toml`, "f = 6\n");
    fs.mkdirSync(path.join(node.root, DIR, "old"));
    const planned = new Map<string, string | null>([
      [`${DIR}/50-kata-install.toml`, "ours = true\n"],
      [`${DIR}/20-gone.toml`, null],
      ["/elsewhere/60-not-here.toml", "x = 1\n"],
    ]);
    const { dropIns, problems } = await readDropIns(node.host, DIR, planned);
    expect(dropIns.map((d) => [d.name, d.text])).toEqual([
      ["10-admin.toml", "a = 1\n"],
      ["50-kata-install.toml", "ours = true\n"],
      ["50-kata-install.toml~", "c = 3\n"],
      ["90-override", "b = 2\n"],
      ["\uFF21.toml", "f = 6\n"],
      ["\u{1F600}.toml", "e = 5\n"],
    ]);
    expect(dropIns[0]?.file).toBe(`${DIR}/10-admin.toml`);
    expect(problems).toEqual([
      `${DIR}/old cannot be read as a drop-in (is a directory), and Kata reads every entry of config.d/`,
    ]);
  });

  it("a directory that is not there has none", async () => {
    const node = buildHost(intelContainerd16());
    expect(await readDropIns(node.host, DIR)).toEqual({ dropIns: [], problems: [] });
  });
});
