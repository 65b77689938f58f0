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
