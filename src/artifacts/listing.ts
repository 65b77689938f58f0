// What an artifact holds, without its bytes: each file (mode, size) and link (target), relative to
// /opt/kata. `artifacts split` writes it into each image's manifest; a plan reads it to check every
// path a configuration names before anything is pulled.
import path from "node:path";
import * as z from "zod/mini";

/** The manifest annotation that carries an image's file list (JSON). */
export const FILES_ANNOTATION = "io.katacontainers.kata-install.files";
/** The meta image's annotation that names every image of the release (JSON list of names). */
export const IMAGES_ANNOTATION = "io.katacontainers.kata-install.images";
/**
 * The meta image's annotation (OCI's own) that carries the release's version, as `artifacts split`
 * read it: its VERSION, its data-collection script, or its tarballs' names — the one a node's plan
 * cannot read from meta's files when the release ships no VERSION.
 */
export const VERSION_ANNOTATION = "org.opencontainers.image.version";

export const ListedEntry = z.union([
  z.strictObject({ path: z.string(), type: z.literal("file"), mode: z.number(), size: z.number() }),
  z.strictObject({ path: z.string(), type: z.literal("link"), target: z.string() }),
]);
export type ListedEntry = z.infer<typeof ListedEntry>;
export const Listing = z.array(ListedEntry);

/**
 * A file list as a manifest carries it, checked entry by entry as `Listing` would: null when any
 * entry is not one. Written out because a plan reads every image's list (thousands of entries)
 * and a schema walk of them costs more than the rest of reading the release.
 */
export function parseListing(value: unknown): ListedEntry[] | null {
  if (!Array.isArray(value)) return null;
  for (const e of value) {
    if (e === null || typeof e !== "object" || typeof e.path !== "string") return null;
    const keys = Object.keys(e).length;
    if (e.type === "file") {
      if (keys !== 4 || typeof e.mode !== "number" || typeof e.size !== "number") return null;
    } else if (e.type === "link") {
      if (keys !== 3 || typeof e.target !== "string") return null;
    } else return null;
  }
  return value as ListedEntry[];
}

/** Where a path of the release ends, links followed inside it; `through`: every path on the way. */
export type Reached = { through: string[] } & (
  | { kind: "file"; mode: number; size: number; path: string }
  | { kind: "missing"; path: string }
  | { kind: "loop" }
);

/** The files of several artifacts as one tree, as the version directory will hold them. */
export class ReleaseTree {
  private readonly entries = new Map<string, ListedEntry>();

  constructor(listings: Iterable<ListedEntry[]>) {
    for (const listing of listings) for (const e of listing) this.entries.set(e.path, e);
  }

  /** Follow `file` (relative to /opt/kata) through links to what it reaches. */
  reach(file: string): Reached {
    let at = path.posix.normalize(file);
    const through: string[] = [];
    for (let hops = 0; hops < 40; hops++) {
      through.push(at);
      // A link in a parent directory counts too (share/kata-containers/x through a linked dir).
      const parts = at.split("/");
      let moved = false;
      for (let i = 1; i < parts.length; i++) {
        const parent = this.entries.get(parts.slice(0, i).join("/"));
        if (parent?.type === "link") {
          const base = path.posix.join(path.posix.dirname(parent.path), parent.target);
          at = path.posix.normalize(path.posix.join(base, ...parts.slice(i)));
          moved = true;
          break;
        }
      }
      if (moved) continue;
      const entry = this.entries.get(at);
      if (entry === undefined) return { kind: "missing", path: at, through };
      if (entry.type === "file")
        return { kind: "file", mode: entry.mode, size: entry.size, path: at, through };
      at = path.posix.normalize(path.posix.join(path.posix.dirname(at), entry.target));
    }
    return { kind: "loop", through };
  }
}
