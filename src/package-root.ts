// kata-install's own data (rules/, templates/, artifacts/) sits beside its code: in the checkout,
// beside dist/ in a package, in /opt/kata-install in the image. Found by walking up from this
// module to the package.json that names kata-install, whatever file it was bundled into.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

let root: string | undefined;

export function packageRoot(): string {
  if (root !== undefined) return root;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const manifest = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")) as {
        name?: string;
      };
      if (manifest.name === "kata-install") {
        root = dir;
        return dir;
      }
    } catch {
      // not here: keep climbing
    }
    const parent = path.dirname(dir);
    if (parent === dir)
      throw new Error("kata-install: cannot find its package directory (rules/, templates/)");
    dir = parent;
  }
}

export function dataPath(...parts: string[]): string {
  return path.join(packageRoot(), ...parts);
}
