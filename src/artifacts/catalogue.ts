// The artifact catalogue (artifacts/catalogue.toml): which files of Kata's release each artifact
// sub-container holds, what each artifact needs besides itself, and which release files no node
// needs (and why). Ownership is exact: a file matched by two entries is an error where it is found
// (`artifacts split`), never resolved by the order of the patterns. A file matched by none is the
// release's news, not an error: the split gives it to the shim whose configuration needs it.
import fs from "node:fs";
import { parse } from "smol-toml";
import * as z from "zod/mini";
import { hash as sha256 } from "../hash.js";
import { InputError, type InputIssue } from "../input-error.js";
import { dataPath } from "../package-root.js";
import { tomlErrorText } from "../toml-error.js";
import "../schema.js";

const CatalogueFile = z.strictObject({
  tokens: z.optional(z.record(z.string(), z.string())),
  artifact: z.record(
    z.string(),
    z.strictObject({
      description: z.string(),
      paths: z.array(z.string()),
      depends: z.optional(z.array(z.string())),
      formerly: z.optional(z.array(z.string())),
      with_debug: z.optional(z.boolean()),
    }),
  ),
  ignore: z.optional(z.array(z.strictObject({ reason: z.string(), paths: z.array(z.string()) }))),
});

export interface ArtifactSpec {
  name: string;
  description: string;
  paths: string[];
  /** Artifacts this one needs on the node too. */
  depends: string[];
  /** The images that held this artifact's files before it was split out of them: they still may. */
  formerly: string[];
  /** Pulled too when DEBUG is on (a shim of the Go runtime chosen): the admin tools. */
  withDebug: boolean;
  matches(file: string): boolean;
}

export interface IgnoreRule {
  reason: string;
  paths: string[];
  matches(file: string): boolean;
}

/** Who owns a release file (relative to /opt/kata). */
export type Ownership =
  | { kind: "artifact"; artifact: string }
  | { kind: "ignored"; reason: string }
  | { kind: "unowned" }
  | { kind: "conflict"; owners: string[] };

export class ArtifactCatalogue extends Map<string, ArtifactSpec> {
  constructor(
    specs: ArtifactSpec[],
    readonly ignored: IgnoreRule[],
  ) {
    super(specs.map((s) => [s.name, s]));
  }

  private readonly owners = new Map<string, Ownership>();
  /** The one owner of `file`, or why there is none (asked per entry: remembered). */
  ownerOf(file: string): Ownership {
    let own = this.owners.get(file);
    if (own === undefined) {
      own = this.findOwner(file);
      this.owners.set(file, own);
    }
    return own;
  }

  private findOwner(file: string): Ownership {
    const artifacts = [...this.values()].filter((a) => a.matches(file));
    const ignores = this.ignored.filter((i) => i.matches(file));
    if (artifacts.length + ignores.length > 1)
      return {
        kind: "conflict",
        owners: [
          ...artifacts.map((a) => `artifact ${a.name}`),
          ...ignores.map((i) => `ignore ("${i.reason.slice(0, 40)}…")`),
        ],
      };
    if (artifacts[0]) return { kind: "artifact", artifact: artifacts[0].name };
    if (ignores[0]) return { kind: "ignored", reason: ignores[0].reason };
    return { kind: "unowned" };
  }

  /** `name` and every artifact it depends on, directly or not. */
  dependencies(name: string): Set<string> {
    const out = new Set<string>();
    const visit = (n: string) => {
      if (out.has(n)) return;
      out.add(n);
      for (const d of this.get(n)?.depends ?? []) visit(d);
    };
    visit(name);
    return out;
  }
}

/** The image of a file the catalogue does not know that one configuration needs: "extra-<its name>". */
export const EXTRA_PREFIX = "extra-";
/** The image of the files the catalogue does not know and no configuration needs: no shim pulls it. */
export const UNCLAIMED = "unclaimed";

/**
 * Null when an image named `artifact` may hold `file`; else why not. A file the catalogue gives to
 * one artifact is that artifact's alone (a qemu image cannot bring the shim binary); one it does
 * not know may be in any image, where the split put it for the shim that needs it. An image the
 * file's artifact was split out of (its `formerly`) may hold it too: a layout of an earlier split.
 */
export function admits(catalogue: ArtifactCatalogue, artifact: string, file: string): string | null {
  const own = catalogue.ownerOf(file);
  if (own.kind === "unowned") return null;
  if (own.kind === "artifact" && own.artifact === artifact) return null;
  // A layout split before this artifact was carved out of `artifact` (kata-runtime in base).
  if (own.kind === "artifact" && catalogue.get(own.artifact)?.formerly.includes(artifact)) return null;
  if (own.kind === "artifact") return `it is artifact "${own.artifact}"'s (artifacts/catalogue.toml)`;
  if (own.kind === "ignored") return "the catalogue gives it to no artifact (artifacts/catalogue.toml)";
  return `the catalogue claims it twice (${own.owners.join(", ")})`;
}

const loaded = new Map<string, ArtifactCatalogue>();

/**
 * The catalogue, checked once for each text of it (decide, the sources and the plan all ask for
 * it): keyed by its content, so that an edited file is checked again; the file's name is only in
 * the errors of a parse.
 */
export function loadArtifactCatalogue(file = dataPath("artifacts", "catalogue.toml")): ArtifactCatalogue {
  const text = fs.readFileSync(file, "utf8");
  const key = sha256(text);
  let catalogue = loaded.get(key);
  if (catalogue === undefined) {
    catalogue = parseArtifactCatalogue(file, text);
    loaded.set(key, catalogue);
  }
  return catalogue;
}

export function parseArtifactCatalogue(file: string, text: string): ArtifactCatalogue {
  const issues: InputIssue[] = [];
  let table: Record<string, unknown> | undefined;
  try {
    table = parse(text) as Record<string, unknown>;
  } catch (error) {
    issues.push({ file, line: (error as { line?: number }).line, message: tomlErrorText(error) });
  }
  const parsed = table === undefined ? undefined : CatalogueFile.safeParse(table);
  if (parsed && !parsed.success)
    for (const i of parsed.error.issues) issues.push({ file, key: i.path.join("."), message: i.message });
  if (issues.length > 0 || !parsed?.success)
    throw new InputError("the artifact catalogue is invalid", issues);
  const { tokens = {}, artifact, ignore = [] } = parsed.data;
  // Asked of every entry of every image a plan lists: literal paths looked up, the globs of one
  // artifact tested as one expression.
  const compile = (key: string, globs: string[]) => {
    const literal = new Set<string>();
    const patterns: string[] = [];
    // What each pattern's matches start with: a file that starts with none of them is no match,
    // and its regular expression is never run (nor compiled, which is most of its cost in a run).
    const prefixes: string[] = [];
    for (const glob of globs) {
      try {
        const special = glob.search(/[*?[{]/);
        if (special >= 0) {
          patterns.push(globToRegExp(glob, tokens).source.slice(1, -1));
          prefixes.push(glob.slice(0, special));
        } else literal.add(glob);
      } catch (error) {
        issues.push({ file, key, message: `${glob}: ${(error as Error).message}` });
      }
    }
    const any = patterns.length === 0 ? null : new RegExp(`^(?:${patterns.join("|")})$`);
    return (f: string) =>
      literal.has(f) || (any !== null && prefixes.some((p) => f.startsWith(p)) && any.test(f));
  };
  const specs = Object.entries(artifact).map(([name, spec]) => ({
    name,
    description: spec.description,
    paths: spec.paths,
    depends: spec.depends ?? [],
    formerly: spec.formerly ?? [],
    withDebug: spec.with_debug ?? false,
    matches: compile(`artifact.${name}.paths`, spec.paths),
  }));
  for (const spec of specs)
    for (const d of spec.depends)
      if (!(d in artifact))
        issues.push({ file, key: `artifact.${spec.name}.depends`, message: `no artifact "${d}"` });
  for (const spec of specs)
    for (const f of spec.formerly)
      if (!(f in artifact) || f === spec.name)
        issues.push({ file, key: `artifact.${spec.name}.formerly`, message: `no other artifact "${f}"` });
  const ignored = ignore.map((rule, i) => ({ ...rule, matches: compile(`ignore[${i}].paths`, rule.paths) }));
  if (issues.length > 0) throw new InputError("the artifact catalogue is invalid", issues);
  return new ArtifactCatalogue(specs, ignored);
}

/**
 * "share/kata-containers/vmlinux-{kver}", "runtime-rs/bin/**": * stays within a name, ** crosses
 * "/", {token} is the catalogue's regular expression of that name.
 */
export function globToRegExp(glob: string, tokens: Record<string, string> = {}): RegExp {
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob.charAt(i);
    if (c === "*" && glob[i + 1] === "*") {
      out += ".*";
      i++;
    } else if (c === "*") out += "[^/]*";
    else if (c === "?") out += "[^/]";
    else if (c === "[") {
      const end = glob.indexOf("]", i);
      if (end < 0) throw new Error(`"[" without "]"`);
      out += glob.slice(i, end + 1);
      i = end;
    } else if (c === "{") {
      const end = glob.indexOf("}", i);
      const name = end < 0 ? "" : glob.slice(i + 1, end);
      const token = tokens[name];
      if (token === undefined) throw new Error(`no token "{${name}}" in [tokens]`);
      out += `(?:${token})`;
      i = end;
    } else out += c.replace(/[.+^$()|\\]/g, "\\$&");
  }
  return new RegExp(`^${out}$`);
}
