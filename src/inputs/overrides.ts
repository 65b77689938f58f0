// The administrator's overrides file, read for decide to parse: one given with --overrides is the
// user's own file (read as given, links and all); the node's default one is the host's, read
// through the Host (its links followed inside the host root, a FIFO or an oversized file refused).
import type { Catalog } from "../decide/catalog.js";
import { emptyOverrides, type Overrides, parseOverrides } from "../decide/overrides.js";
import { Host, type ReadResult } from "../host/host.js";
import { InputError } from "../input-error.js";
import { readInputText } from "../input-file.js";

export const DEFAULT_OVERRIDES = "/etc/kata-containers/kata-install.toml";
/** An overrides file is a few kilobytes of TOML. */
export const MAX_OVERRIDES_BYTES = 1 << 20;

/**
 * The overrides file `given` (null: none at all, not even the node's default one; undefined: the
 * node's default one, under `hostRoot`, which may simply not exist).
 */
export async function readOverrides(
  given: string | null | undefined,
  hostRoot: string,
  catalog: Catalog,
  checkIds: ReadonlySet<string>,
): Promise<Overrides> {
  if (given === null) return emptyOverrides();
  const { file, read, nodePath } =
    given === undefined
      ? await readNodeOverrides(hostRoot)
      : { ...userOverrides(given), nodePath: undefined };
  if (!read.ok) {
    if (read.missing && given === undefined) return emptyOverrides();
    throw new InputError("the overrides file cannot be read", [
      {
        file,
        message: read.missing ? "cannot read: it does not exist" : `${read.reason}: it must be a TOML file`,
      },
    ]);
  }
  const parsed = parseOverrides(file, read.text, catalog, checkIds);
  return nodePath === undefined ? parsed : { ...parsed, nodePath };
}

/** By type first (a FIFO would block the read forever), and bounded. */
function userOverrides(file: string): { file: string; read: ReadResult } {
  return { file, read: readInputText(file, MAX_OVERRIDES_BYTES) };
}

/** The node's own, named by where it is on this machine (its link's target, if it is one). */
async function readNodeOverrides(
  hostRoot: string,
): Promise<{ file: string; read: ReadResult; nodePath: string }> {
  const host = new Host({ root: hostRoot });
  const read = await host.readText(DEFAULT_OVERRIDES, { maxBytes: MAX_OVERRIDES_BYTES, utf8: true });
  // A path that cannot be resolved (a link loop) failed the read too: named as the host's path.
  const file = await host.resolve(DEFAULT_OVERRIDES).catch(() => host.display(DEFAULT_OVERRIDES));
  // resolve() keeps a link's target inside the root: its path there is the target's on the node.
  return { file, read, nodePath: host.hostPathOf(file) ?? DEFAULT_OVERRIDES };
}
