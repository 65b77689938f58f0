// The artifact catalogue (artifacts/catalogue.toml): which files of Kata's release each artifact
// sub-container holds.
import fs from "node:fs";
import path from "node:path";
import * as z from "zod/mini";
import { parseToml } from "../decide/catalog.js";
import { InputError, type InputIssue } from "../decide/input-error.js";
import { dataPath } from "../package-root.js";
import "../schema.js";

const CatalogueFile = z.strictObject({
  artifact: z.record(z.string(), z.strictObject({ description: z.string(), paths: z.array(z.string()) })),
});

export interface ArtifactSpec {
  name: string;
  description: string;
  paths: string[];
  matches(file: string): boolean;
}

export function loadArtifactCatalogue(
  file = dataPath("artifacts", "catalogue.toml"),
): Map<string, ArtifactSpec> {
  const issues: InputIssue[] = [];
  const table = parseToml(file, fs.readFileSync(file, "utf8"), issues);
  const parsed = table === undefined ? undefined : CatalogueFile.safeParse(table);
  if (parsed && !parsed.success)
    for (const i of parsed.error.issues) issues.push({ file, key: i.path.join("."), message: i.message });
  if (issues.length > 0 || !parsed?.success)
    throw new InputError("the artifact catalogue is invalid", issues);
  return new Map(
    Object.entries(parsed.data.artifact).map(([name, spec]) => {
      const patterns = spec.paths.map(globToRegExp);
      return [name, { name, ...spec, matches: (f: string) => patterns.some((p) => p.test(f)) }];
    }),
  );
}

/** "share/kata-containers/vmlinux-*", "runtime-rs/bin/**": * stays within a name, ** crosses "/". */
export function globToRegExp(glob: string): RegExp {
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === "*" && glob[i + 1] === "*") {
      out += ".*";
      i++;
    } else if (c === "*") out += "[^/]*";
    else if (c === "?") out += "[^/]";
    else if (c === "[") {
      const end = glob.indexOf("]", i);
      out += glob.slice(i, end + 1);
      i = end;
    } else out += c.replace(/[.+^${}()|\\]/g, "\\$&");
  }
  return new RegExp(`^${out}$`);
}

/** The artifact a release file belongs to (path relative to /opt/kata), or undefined. */
export function owner(catalogue: Map<string, ArtifactSpec>, file: string): string | undefined {
  return [...catalogue.values()].find((a) => a.matches(file))?.name;
}

export function relativeToPrefix(file: string): string {
  return path.posix.normalize(file).replace(/^\/?opt\/kata\//, "");
}
