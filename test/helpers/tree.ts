// A whole host tree as data: every path with its type, and for files their hash, mode and owner,
// so that "byte-identical to before" is one comparison.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

export type TreeSnapshot = Record<string, string>;

export function snapshot(root: string): TreeSnapshot {
  const out: TreeSnapshot = {};
  const walk = (dir: string) => {
    for (const name of fs.readdirSync(dir).sort()) {
      const full = path.join(dir, name);
      const rel = path.relative(root, full);
      const st = fs.lstatSync(full);
      const owner = `${(st.mode & 0o7777).toString(8)} ${st.uid}:${st.gid}`;
      if (st.isSymbolicLink()) out[rel] = `link ${fs.readlinkSync(full)}`;
      else if (st.isDirectory()) {
        out[rel] = `dir ${owner}`;
        walk(full);
      } else if (st.isFile())
        out[rel] = `file ${owner} ${createHash("sha256").update(fs.readFileSync(full)).digest("hex")}`;
      else out[rel] = "special";
    }
  };
  walk(root);
  return out;
}

export function mtimes(root: string): Record<string, number> {
  const out: Record<string, number> = {};
  const walk = (dir: string) => {
    for (const name of fs.readdirSync(dir)) {
      const full = path.join(dir, name);
      const st = fs.lstatSync(full);
      if (st.isDirectory()) walk(full);
      else if (st.isFile()) out[path.relative(root, full)] = st.mtimeMs;
    }
  };
  walk(root);
  return out;
}

/**
 * A host tree after an install, as two installs of one plan on two copies of a node share it: the
 * journal's saved copies named by their content instead of their random names, and the probe
 * cache's entries and each version's file list without the identities (device, inode, times) of
 * each file, which differ between any two copies.
 */
export function installedTree(root: string, prefix = "opt/kata"): TreeSnapshot {
  const dir = path.join(root, prefix, ".install");
  const sha = (bytes: Buffer | string) => createHash("sha256").update(bytes).digest("hex");
  const named = (text: string) =>
    text.replace(
      /original\/[0-9a-f-]{36}/g,
      (name) => `original/${sha(fs.readFileSync(path.join(dir, name)))}`,
    );
  const rehashed = (value: string, content: string) => value.replace(/[0-9a-f]{64}$/, sha(content));
  const out: TreeSnapshot = {};
  for (const [rel, value] of Object.entries(snapshot(root))) {
    const full = path.join(root, rel);
    if (rel === `${prefix}/.install/journal.json`)
      out[rel] = rehashed(value, named(fs.readFileSync(full, "utf8")));
    else if (rel === `${prefix}/.install/probes.json`) {
      const entries = JSON.parse(fs.readFileSync(full, "utf8")) as Record<string, { identity: string }>;
      for (const entry of Object.values(entries)) entry.identity = "(the file's identity)";
      out[rel] = rehashed(value, JSON.stringify(entries));
    } else if (rel.endsWith("/.kata-install-files")) out[rel] = listWithoutIdentities(full, value);
    else out[named(rel)] = value;
  }
  return out;
}

/** A version's file list as a snapshot value, each file's identity (inode, times) left out. */
function listWithoutIdentities(full: string, value: string): string {
  const list = JSON.parse(fs.readFileSync(full, "utf8")) as { identities?: Record<string, string> };
  for (const key of Object.keys(list.identities ?? {}))
    (list.identities as Record<string, string>)[key] = "(the file's identity)";
  const sha = createHash("sha256").update(JSON.stringify(list)).digest("hex");
  return value.replace(/[0-9a-f]{64}$/, sha);
}

/** A version directory's tree, its file list without the identities, which differ between copies. */
export function versionTree(dir: string): TreeSnapshot {
  const out = snapshot(dir);
  if (out[".kata-install-files"] !== undefined)
    out[".kata-install-files"] = listWithoutIdentities(
      path.join(dir, ".kata-install-files"),
      out[".kata-install-files"],
    );
  return out;
}
