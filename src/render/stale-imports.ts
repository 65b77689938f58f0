// kata-deploy's imports whose file is gone. containerd refuses to start on an import of a missing
// file ("failed to load TOML: …/kata-deploy.toml: no such file or directory"), and kata-deploy
// leaves one behind when its tree goes without its cleanup (a node wiped, an uninstall cut short,
// its #13141). Such an entry serves nothing and stops the runtime at its next start: it goes
// whenever kata-install edits that file, takeover or not. An import of kata-deploy's whose file is
// still there is another install's, and stays unless a takeover makes it kata-install's.
import path from "node:path";
import { parse } from "smol-toml";
import type { Host } from "../host/host.js";

/** The names kata-deploy gives the drop-ins it imports: kata-deploy[-<suffix>].toml and its user's zz-kata-deploy-user.toml. */
export function isKataDeployImportName(entry: string): boolean {
  return !/[*?[]/.test(entry) && /^(zz-)?kata-deploy[\w.-]*\.toml$/.test(path.posix.basename(entry));
}

/** Of each file's top-level `imports`, kata-deploy's entries that name no file on the host. */
export async function goneKataDeployImports(
  host: Host,
  files: Iterable<readonly [string, string | null]>,
): Promise<Set<string>> {
  const gone = new Set<string>();
  for (const [file, text] of files) {
    if (text === null) continue;
    let imports: unknown;
    try {
      imports = (parse(text) as Record<string, unknown>).imports;
    } catch {
      continue; // not TOML: render refuses the file by name
    }
    if (!Array.isArray(imports)) continue;
    for (const entry of imports) {
      if (typeof entry !== "string" || !isKataDeployImportName(entry)) continue;
      // containerd reads a relative import against the importing file's directory.
      const target = path.posix.resolve(path.posix.dirname(file), entry);
      if (!(await host.exists(target))) gone.add(entry);
    }
  }
  return gone;
}
