import { describe, expect, it } from "vitest";
import {
  BLOCK_BEGIN,
  BLOCK_END,
  DamagedBlockError,
  dropBlock,
  ensureImport,
  findBlock,
  putBlock,
  removeTables,
  strayHandlers,
  tableSpans,
} from "../../src/render/toml-edit.js";
import { tomlString } from "../../src/render/toml-literal.js";

const ADMIN = `# the admin's file: keep every byte
version = 2   # schema

[plugins."io.containerd.grpc.v1.cri".containerd]
  default_runtime_name = "runc"   # comment kept

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
`;

describe("minimal TOML edits", () => {
  it("appending a block leaves every byte before it as it was", () => {
    const after = putBlock(ADMIN, "[k]\na = 1");
    expect(after.startsWith(ADMIN)).toBe(true);
    expect(after.slice(ADMIN.length)).toBe(`\n${BLOCK_BEGIN}\n[k]\na = 1\n${BLOCK_END}\n`);
    // The blank lines a template begins with are one under the marker.
    expect(putBlock(ADMIN, "\n\n\n[k]\na = 1").slice(ADMIN.length)).toBe(
      `\n${BLOCK_BEGIN}\n\n[k]\na = 1\n${BLOCK_END}\n`,
    );
    // Replacing it changes only the block; removing it gives the file back byte for byte.
    const again = putBlock(after, "[k]\na = 2");
    expect(again.startsWith(ADMIN)).toBe(true);
    expect(dropBlock(again)).toBe(ADMIN);
  });

  it("removes only the tables it is asked to, sub-tables included", () => {
    const withKata = `${ADMIN}\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.kata-qemu]\n  runtime_type = "x"\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.kata-qemu.options]\n  ConfigPath = "y"\n[after]\nz = 1\n`;
    const out = removeTables(withKata, (p) => p[4] === "kata-qemu");
    expect(out).toBe(`${ADMIN}\n[after]\nz = 1\n`);
    expect(tableSpans(out).map((s) => s.path.join("|"))).toEqual([
      "plugins|io.containerd.grpc.v1.cri|containerd",
      "plugins|io.containerd.grpc.v1.cri|containerd|runtimes|runc",
      "after",
    ]);
  });

  it("adds an import to a missing, one-line or multi-line imports array", () => {
    const glob = "/etc/containerd/conf.d/*.toml";
    expect(ensureImport("version = 3\n\n[a]\nx = 1\n", glob, tomlString)).toBe(
      `version = 3\nimports = ["${glob}"]\n\n[a]\nx = 1\n`,
    );
    expect(ensureImport('version = 3\nimports = ["/x.toml"] # mine\n[a]\n', glob, tomlString)).toBe(
      `version = 3\nimports = ["/x.toml", "${glob}"] # mine\n[a]\n`,
    );
    expect(
      ensureImport('version = 3\nimports = [\n  "/x.toml", # first\n  "/y.toml"\n]\n', glob, tomlString),
    ).toBe(`version = 3\nimports = [\n  "/x.toml", # first\n  "/y.toml",\n  "${glob}",\n]\n`);
    expect(ensureImport("version = 3\nimports = []\n", glob, tomlString)).toBe(
      `version = 3\nimports = ["${glob}"]\n`,
    );
  });
});

describe("a table the admin added after our block", () => {
  it("survives replacing the block and removing our tables", () => {
    const ours = `${BLOCK_BEGIN}\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.kata-qemu]\n  runtime_type = "x"\n${BLOCK_END}\n`;
    const admin =
      '[plugins."io.containerd.grpc.v1.cri".registry]\n  config_path = "/etc/containerd/certs.d"\n';
    const text = `${ADMIN}\n${ours}${admin}`;
    const cleaned = removeTables(text, (p) => p[4] === "kata-qemu");
    expect(cleaned).toBe(`${ADMIN}\n${BLOCK_BEGIN}\n${BLOCK_END}\n${admin}`);
    expect(putBlock(cleaned, "[k]\na = 1")).toBe(
      `${ADMIN}\n${BLOCK_BEGIN}\n[k]\na = 1\n${BLOCK_END}\n${admin}`,
    );
    expect(dropBlock(cleaned)).toBe(`${ADMIN}${admin}`);
  });
});

describe("damaged markers are refused, never guessed", () => {
  const ours = `${BLOCK_BEGIN}\n[plugins.x.runtimes.kata-qemu]\n  runtime_type = "io.containerd.kata-qemu.v2"\n${BLOCK_END}\n`;
  const file = "/etc/containerd/config.toml";
  const cases: Array<[string, string, RegExp]> = [
    [
      "the end marker removed, an admin table after",
      `version = 2\n\n${ours.replace(`${BLOCK_END}\n`, "")}\n[plugins.admin]\n  keep = true\n`,
      /config\.toml: kata-install's begin marker \(line 3\) has no end marker/,
    ],
    [
      "the block twice",
      `${ours}\n${ours}`,
      /markers appear more than once \(begin at line\(s\) 1, 6, end at line\(s\) 4, 9\)/,
    ],
    [
      "an end before the begin",
      `${BLOCK_END}\nx = 1\n${BLOCK_BEGIN}\n`,
      /end marker \(line 1\) comes before its begin marker \(line 3\)/,
    ],
    ["an end alone", `x = 1\n${BLOCK_END}\n`, /end marker \(line 2\) has no begin marker/],
  ];
  it.each(cases)("%s: putBlock and dropBlock refuse, naming the file and lines", (_name, text, message) => {
    expect(() => dropBlock(text, file)).toThrow(DamagedBlockError);
    expect(() => dropBlock(text, file)).toThrow(message);
    expect(() => putBlock(text, "[y]\n", file)).toThrow(message);
  });

  it("a whole block is found and replaced, the admin's text around it kept", () => {
    const text = `a = 1\n\n${ours}[admin]\nb = 2\n`;
    expect(findBlock(text, file)).toEqual({ begin: 7, end: 7 + ours.length });
    expect(dropBlock(text, file)).toBe("a = 1\n[admin]\nb = 2\n");
  });
});

describe("handlers an install wrote, left when its markers were taken away", () => {
  const R = 'plugins."io.containerd.grpc.v1.cri".containerd.runtimes';
  it("each is named once at its first table, a sub-table alone too; the admin's own (in the original) are not", () => {
    const original = `version = 2\n[${R}.kata-mine]\n  runtime_type = "x"\n`;
    const text = `${original}[${R}.kata-qemu]\n  runtime_type = "y"\n[${R}.kata-qemu.options]\n  ConfigPath = "/opt/kata/q.toml"\n[${R}."kata-clh".options]\n  ConfigPath = "/opt/kata/c.toml"\n[${R}.runc]\n`;
    expect(strayHandlers(text, original)).toEqual([
      { name: "kata-qemu", line: 4 },
      { name: "kata-clh", line: 8 },
    ]);
    expect(strayHandlers(original, original)).toEqual([]);
  });
});
