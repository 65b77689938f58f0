// One key of the admin's table set and given back from the file alone: the line kata-install
// writes carries what it replaced, so a later plan or an uninstall after the admin edited the file
// restores the admin's line byte for byte.
import { parse } from "smol-toml";
import { describe, expect, it } from "vitest";
import { dig } from "../../src/detect/toml.js";
import { hasEditedKey, revertKeys, setKey } from "../../src/render/key-edit.js";

const TABLE = ["plugins", "io.containerd.grpc.v1.cri", "containerd"];
const EDIT = { table: TABLE, key: "disable_snapshot_annotations", literal: "false", why: "nydus reads them" };
const ADMINS = `version = 2

[plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    disable_snapshot_annotations = true # theirs, with "quotes" and \\ a backslash

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
    disable_snapshot_annotations = true
`;

describe("setKey", () => {
  it("replaces the admin's line in that table only, keeping theirs in the comment; revertKeys gives it back byte for byte", () => {
    const edited = setKey(ADMINS, EDIT) as string;
    const parsed = parse(edited);
    expect(dig(parsed, [...TABLE, "disable_snapshot_annotations"])).toBe(false);
    // The same key in a sub-table is not the table's.
    expect(dig(parsed, [...TABLE, "runtimes", "runc", "disable_snapshot_annotations"])).toBe(true);
    expect(edited.split("\n").length).toBe(ADMINS.split("\n").length);
    expect(edited).toContain(
      '\n    disable_snapshot_annotations = false # kata-install: nydus reads them; uninstall puts back: "',
    );
    expect(hasEditedKey(edited)).toBe(true);
    expect(revertKeys(edited)).toBe(ADMINS);
  });

  it("adds a line under the header, at the table's indentation, when the key is not set; given back, nothing left", () => {
    const without = ADMINS.replace(/ {4}disable_snapshot_annotations = true # theirs.*\n/, "");
    const edited = setKey(without, EDIT) as string;
    expect(edited).toContain(
      '[plugins."io.containerd.grpc.v1.cri".containerd]\n    disable_snapshot_annotations = false # kata-install: nydus reads them; uninstall takes this line out\n    snapshotter',
    );
    expect(revertKeys(edited)).toBe(without);
  });

  it("changes nothing where the value is already the one wanted, or the line is an install's already", () => {
    const off = ADMINS.replace("= true # theirs", "= false # theirs");
    expect(setKey(off, EDIT)).toBe(off);
    const once = setKey(ADMINS, EDIT) as string;
    expect(setKey(once, EDIT)).toBe(once);
  });

  it("null when the file has no header of that table (the caller writes the table in its block)", () => {
    expect(setKey('version = 2\n[plugins."io.containerd.grpc.v1.cri"]\n', EDIT)).toBeNull();
  });

  it("a quoted key is the same key", () => {
    const quoted = ADMINS.replace(
      "    disable_snapshot_annotations = true # theirs",
      '    "disable_snapshot_annotations" = true # theirs',
    );
    const edited = setKey(quoted, EDIT) as string;
    expect(edited.match(/disable_snapshot_annotations/g)).toHaveLength(3);
    expect(revertKeys(edited)).toBe(quoted);
  });
});

describe("revertKeys", () => {
  it("gives back only its own install's lines (MULTI_INSTALL_SUFFIX)", () => {
    const blue = setKey(ADMINS, EDIT, "blue") as string;
    expect(blue).toContain("# kata-install-blue: nydus reads them;");
    expect(revertKeys(blue)).toBe(blue);
    expect(hasEditedKey(blue)).toBe(false);
    expect(revertKeys(blue, "blue")).toBe(ADMINS);
  });

  it("handed to another install still in the file: re-tagged as it is, and given back by that one", () => {
    const edited = setKey(ADMINS, EDIT) as string;
    const handed = revertKeys(edited, "", "blue");
    expect(handed).toBe(edited.replace("# kata-install: ", "# kata-install-blue: "));
    expect(hasEditedKey(handed)).toBe(false);
    expect(revertKeys(handed, "blue")).toBe(ADMINS);
  });

  it("a note the admin added after its comment keeps it kata-install's line: given back all the same", () => {
    const noted = `${(setKey(ADMINS, EDIT) as string).replace(/(uninstall puts back: ".*")$/m, "$1 -- for nydus, ticket 123")}`;
    expect(noted).toContain("ticket 123");
    expect(revertKeys(noted)).toBe(ADMINS);
  });

  it("a line the admin rewrote since (its comment gone) is theirs: left as it is", () => {
    const edited = (setKey(ADMINS, EDIT) as string).replace(/ # kata-install: .*$/m, " # mine now");
    expect(revertKeys(edited)).toBe(edited);
  });
});
