// Artifact images, wherever they are stored (an OCI layout on disk, a registry): the manifest for
// the node's platform, then each layer streamed — blob → digest → gunzip → tar → staging — so a
// 300 MB hypervisor is read once and never held in memory. A blob that does not hash to its digest
// stops the install (the staged copy goes with it); so does any entry that would land outside the
// prefix: "..", an absolute path, a link or hard link pointing out, a device.
import { createHash } from "node:crypto";
import path from "node:path";
import type { Readable } from "node:stream";
import zlib from "node:zlib";
import type { ReadEntry } from "tar";
import { ArtifactError, absentAsNull } from "./artifact-error.js";
import { type ArtifactCatalogue, admits } from "./catalogue.js";
import {
  FILES_ANNOTATION,
  IMAGES_ANNOTATION,
  type ListedEntry,
  parseListing,
  VERSION_ANNOTATION,
} from "./listing.js";

/** A release version as an annotation may give it: a registry's bytes are checked, not trusted. */
const VERSION = /^\d+\.\d+\.\d+[A-Za-z0-9.+~-]{0,64}$/;

import { type ArtifactSource, type FileSink, linkInside } from "./source.js";

/** Manifests and indexes are kilobytes (a file list of hundreds of entries included): no more is read. */
export const MAX_MANIFEST_BYTES = 4 << 20;

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
  platform?: { architecture: string; os: string };
}

/** Where manifests and blobs come from: a layout on disk, or a registry. */
export interface ImageStore {
  /** Human name of the store, for messages ("oci-layout:/srv/kata"). */
  readonly where: string;
  /** The manifest (or index) tagged for `artifact`, and its descriptor. */
  tagged(artifact: string): Promise<{ descriptor: Descriptor; bytes: Buffer }>;
  /** A manifest of `artifact`'s image; the caller checks it against the descriptor. */
  fetch(artifact: string, descriptor: Descriptor, what: string): Promise<Buffer>;
  /**
   * A layer blob as a stream. With `digest`, the store hashes the blob itself (beside the stream,
   * on another thread); without, the caller hashes what flows through.
   */
  open(artifact: string, descriptor: Descriptor, what: string): Promise<OpenedBlob>;
  /**
   * Why a layer blob cannot be had as its descriptor says (missing, of another size), or null;
   * told without reading it. Absent: the store cannot tell without fetching it (a registry).
   */
  blobProblem?(descriptor: Descriptor, what: string): string | null;
}

export interface OpenedBlob {
  stream: Readable;
  digest?: Promise<{ hex: string; size: number }>;
}

/** An image name as `artifacts split` makes them (and a tag allows). */
const NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

const INDEX_TYPES = new Set([
  "application/vnd.oci.image.index.v1+json",
  "application/vnd.docker.distribution.manifest.list.v2+json",
]);
/** OCI platform names for the kernel's architecture names. */
export const GO_ARCH: Record<string, string> = {
  x86_64: "amd64",
  aarch64: "arm64",
  s390x: "s390x",
  ppc64le: "ppc64le",
};

function hexOf(store: ImageStore, d: Descriptor, what: string): string {
  const [algorithm, hex] = d.digest.split(":");
  if (algorithm !== "sha256" || hex === undefined || !/^[0-9a-f]{64}$/.test(hex))
    throw new ArtifactError(`${store.where}: ${what}: unsupported digest ${d.digest}`);
  return hex;
}

function mismatch(
  store: ImageStore,
  d: Descriptor,
  what: string,
  actual: string,
  size: number,
): string | null {
  if (actual !== hexOf(store, d, what))
    return `${store.where}: ${what}: blob ${d.digest} does not match its digest (its content hashes to sha256:${actual})`;
  if (typeof d.size === "number" && size !== d.size)
    return `${store.where}: ${what}: blob ${d.digest} is ${size} bytes, not ${d.size}`;
  return null;
}

/** Bytes that do not hash to their descriptor's digest (or size) stop everything. */
export function verified(store: ImageStore, d: Descriptor, what: string, bytes: Buffer): Buffer {
  const problem = mismatch(store, d, what, createHash("sha256").update(bytes).digest("hex"), bytes.length);
  if (problem !== null) throw new ArtifactError(problem);
  return bytes;
}

interface Manifest {
  mediaType?: string;
  config?: Descriptor;
  manifests?: Descriptor[];
  layers?: Descriptor[];
  annotations?: Record<string, string>;
}

/** An artifact source reading images from a store: manifests, platform, layers, checked entries. */
export function imageSource(
  store: ImageStore,
  catalogue: ArtifactCatalogue,
  arch: string | null,
): ArtifactSource {
  const json = <T>(bytes: Buffer, what: string): T => {
    try {
      return JSON.parse(bytes.toString("utf8")) as T;
    } catch (error) {
      throw new ArtifactError(`${store.where}: ${what}: invalid JSON (${(error as Error).message})`);
    }
  };
  const wanted = GO_ARCH[arch ?? ""] ?? arch;
  /** The image manifest for this node's platform, checked against its digest; null if the index has none. */
  const resolved = new Map<string, Promise<{ digest: string; manifest: Manifest } | null>>();
  /** The platforms an index lists that has none for this node's. */
  const offered = new Map<string, string[]>();
  const resolve = (artifact: string) => {
    let found = resolved.get(artifact);
    if (!found) {
      found = (async () => {
        const tagged = await store.tagged(artifact);
        let descriptor: Descriptor | undefined = tagged.descriptor;
        let manifest = json<Manifest>(verified(store, descriptor, artifact, tagged.bytes), artifact);
        if (INDEX_TYPES.has(manifest.mediaType ?? descriptor.mediaType)) {
          const matching = (manifest.manifests ?? []).filter(
            (m) => m.platform?.os === "linux" && m.platform.architecture === wanted,
          );
          // Two images for one platform: which one the node gets must not depend on the order.
          if (matching.length > 1)
            throw new ArtifactError(
              `${store.where}: ${artifact}: the index lists ${matching.length} manifests for linux/${wanted} (${matching.map((m) => m.digest.slice(0, 19)).join(", ")}): ambiguous`,
            );
          descriptor = matching[0];
          if (!descriptor) {
            offered.set(
              artifact,
              (manifest.manifests ?? []).map(
                (m) => `${m.platform?.os ?? "?"}/${m.platform?.architecture ?? "?"}`,
              ),
            );
            return null;
          }
          manifest = json(
            verified(store, descriptor, artifact, await store.fetch(artifact, descriptor, artifact)),
            artifact,
          );
        } else if (artifact === "meta" && wanted !== null) await samePlatform(manifest);
        return { digest: descriptor.digest, manifest };
      })();
      resolved.set(artifact, found);
    }
    return found;
  };
  /**
   * An image tagged by itself (a layout `artifacts split` made) names its platform in its
   * configuration only: the meta image's is read, as every image of one split shares it, so that a
   * layout of another architecture is refused before anything of it is planned or pulled.
   */
  const samePlatform = async (manifest: Manifest) => {
    const config = manifest.config;
    if (config === undefined || config.size > MAX_MANIFEST_BYTES) return;
    const opened = await store.open("meta", config, "meta's image configuration");
    const chunks: Buffer[] = [];
    for await (const chunk of opened.stream) chunks.push(chunk as Buffer);
    const platform = json<{ architecture?: unknown; os?: unknown }>(
      verified(store, config, "meta's image configuration", Buffer.concat(chunks)),
      "meta's image configuration",
    );
    if (typeof platform.architecture === "string" && platform.architecture !== wanted)
      throw new ArtifactError(
        `${store.where}: its images are built for ${platform.os ?? "linux"}/${platform.architecture}, and this node is ${arch} (linux/${wanted}): give the source of this node's architecture`,
      );
  };
  const platformManifest = async (artifact: string) => {
    const found = await resolve(artifact);
    if (!found)
      throw new ArtifactError(
        `${store.where}: image "${artifact}" has no linux/${wanted} manifest${offered.has(artifact) ? ` (its index has ${offered.get(artifact)?.join(", ") || "none"})` : ""}: this node is ${arch}; give a source that has its architecture`,
      );
    return found;
  };
  const source: ArtifactSource = {
    description: store.where,
    async images() {
      // The release's image list rides in its meta image (written by `artifacts split`): a
      // registry cannot be asked which repositories it has. Without it, the catalogue's names.
      const meta = await resolve("meta").catch(absentAsNull);
      // An index of other platforms only: the node's architecture is what is missing, not a release.
      if (meta === null && offered.has("meta")) await platformManifest("meta");
      const annotated = meta?.manifest.annotations?.[IMAGES_ANNOTATION];
      if (annotated !== undefined) {
        const names = json<unknown>(Buffer.from(annotated), "meta's image list");
        if (!Array.isArray(names) || !names.every((n): n is string => typeof n === "string" && NAME.test(n)))
          throw new ArtifactError(`${store.where}: meta: the manifest's image list is malformed`);
        return [...new Set(["meta", ...names])].sort();
      }
      const found: string[] = [];
      for (const name of catalogue.keys()) if (await resolve(name).catch(absentAsNull)) found.push(name);
      return found;
    },
    async version() {
      const meta = await resolve("meta").catch(absentAsNull);
      const version = meta?.manifest.annotations?.[VERSION_ANNOTATION];
      return version !== undefined && VERSION.test(version) ? version : undefined;
    },
    /** Compressed layer bytes per image: what a pull of it moves. */
    async sizes(artifacts) {
      const out = new Map<string, number>();
      for (const artifact of artifacts) {
        const found = await resolve(artifact).catch(absentAsNull); // not in this release
        if (found)
          out.set(
            artifact,
            (found.manifest.layers ?? []).reduce((n, l) => n + (l.size ?? 0), 0),
          );
      }
      return out;
    },
    async identify(artifact) {
      return (await platformManifest(artifact)).digest;
    },
    async list(artifact) {
      const { manifest } = await platformManifest(artifact);
      const annotated = manifest.annotations?.[FILES_ANNOTATION];
      if (annotated !== undefined) {
        // Pinned with the manifest by its digest: as trustworthy as the layers it describes.
        const parsed = parseListing(json<unknown>(Buffer.from(annotated), `${artifact} file list`));
        if (parsed === null)
          throw new ArtifactError(`${store.where}: ${artifact}: the manifest's file list is malformed`);
        return parsed;
      }
      // An image not made by \`artifacts split\`: its layers' headers are read (bytes skipped).
      const out = new Map<string, ListedEntry>();
      for (const layer of manifest.layers ?? []) {
        const what = `${artifact} layer ${layer.digest}`;
        hexOf(store, layer, what);
        const { stream } = await store.open(artifact, layer, what);
        await listLayer(stream, out, `${store.where}: ${what}`);
      }
      return [...out.values()];
    },
    ...(store.blobProblem === undefined
      ? {}
      : {
          async unavailable(artifacts: string[]) {
            const problems: string[] = [];
            for (const artifact of artifacts) {
              const { manifest } = await platformManifest(artifact);
              for (const layer of manifest.layers ?? []) {
                const what = `${artifact} layer ${layer.digest}`;
                const problem = store.blobProblem?.(layer, what) ?? null;
                if (problem !== null) problems.push(`${artifact}: layer ${layer.digest} ${problem}`);
              }
            }
            return problems;
          },
        }),
    async extract(artifact, into) {
      const { manifest } = await platformManifest(artifact);
      const ours = new Set<string>();
      // With a file list, the layers cannot hold more than its files (and their tar headers):
      // beyond that a layer is refused as its bytes arrive (a gzip bomb fills no disk).
      const annotated = manifest.annotations?.[FILES_ANNOTATION];
      const listed = annotated === undefined ? null : await source.list(artifact);
      const maxTarBytes =
        listed === null
          ? null
          : listed.reduce(
              (n, e) => n + 1024 + (e.type === "file" ? Math.ceil(e.size / 512) * 512 : 0),
              64 << 10,
            );
      for (const layer of manifest.layers ?? []) {
        const what = `${artifact} layer ${layer.digest}`;
        hexOf(store, layer, what);
        const { stream, digest } = await store.open(artifact, layer, what);
        await extractLayer(stream, digest, {
          where: `${store.where}: ${artifact} layer ${layer.digest.slice(0, 19)}`,
          artifact,
          catalogue,
          into,
          ours,
          maxTarBytes,
          declaredSize: layer.size,
          check: (actual, size) => mismatch(store, layer, what, actual, size),
        });
      }
    },
  };
  return source;
}

/**
 * A layer of an image without kata-install's file list (not made by `artifacts split`) has no
 * bound of its own: it may inflate to this many times its compressed size (real layers of binaries
 * and images inflate 2 to 10 times; a gzip bomb, a thousand), and never past the ceiling.
 */
export const MAX_INFLATE_RATIO = 100;
export const LAYER_CEILING = 4 * 1024 ** 3;

/** How much a gzipped layer inflates per chunk handed on (and counted against its bound). */
const INFLATE_CHUNK = 1 << 20;
/** Inflated chunks held for the tar reader while zlib goes on: the memory a layer may hold ahead. */
const INFLATED_AHEAD = 4;

export function inflateBound(compressed: number): number {
  return Math.min(LAYER_CEILING, compressed * MAX_INFLATE_RATIO + (1 << 20));
}

interface LayerContext {
  where: string;
  artifact: string;
  catalogue: ArtifactCatalogue;
  into: FileSink;
  /** Files this artifact wrote so far: the only ones a hard link may repeat. */
  ours: Set<string>;
  /** The most a layer's tar may hold, from the image's file list; null without one. */
  maxTarBytes: number | null;
  /** The blob's size as its manifest declares it: more is refused as it arrives. */
  declaredSize: number;
  /** The blob's digest check, given what the stream hashed to: null when it matches. */
  check(actualHex: string, size: number): string | null;
}

/** tar, loaded when a layer is first read: a plan from a dir: source, or a no-op install, never reads one. */
let tar: Promise<typeof import("tar")> | undefined;
const tarLibrary = () => {
  tar ??= import("tar");
  return tar;
};

/**
 * One layer (a tar, gzipped or not) streamed into the staging directory. The blob is hashed as it
 * flows; when it does not match, that is the error, whatever the tar reader made of the bad bytes.
 */
async function extractLayer(
  stream: Readable,
  hashedElsewhere: OpenedBlob["digest"],
  layer: LayerContext,
): Promise<void> {
  // Handled now: a hash that fails before the layer is read through must not be an unhandled
  // rejection (it is reported when the layer settles).
  hashedElsewhere?.catch(() => undefined);
  // The stream is paused until the parser reads it: nothing is lost while tar loads.
  const { Parser } = await tarLibrary();
  return new Promise((resolve, reject) => {
    new LayerRead(stream, hashedElsewhere, layer, new Parser({ strict: true }), resolve, reject).start();
  });
}

type TarParser = InstanceType<Awaited<ReturnType<typeof tarLibrary>>["Parser"]>;

/**
 * One layer's read, as steps of its own: the blob's bytes counted, hashed and handed on (inflated
 * first when gzipped), each tar entry placed, and the layer settled once both the blob and the tar
 * are through. A refused entry stops it at once; bad bytes read on, for the digest may say why.
 */
class LayerRead {
  private readonly digest: ReturnType<typeof createHash> | null;
  /** Files being written: closed if the layer ends early (a refusal, bad bytes), not leaked. */
  private readonly open = new Set<{ abort(): void }>();
  private size = 0;
  /** An entry refused: stop at once. */
  private refusal: string | null = null;
  /** Bad bytes: read on, the digest may say why. */
  private unreadable: string | null = null;
  private streamDone = false;
  private parserDone = false;
  private settled = false;
  private gunzip: zlib.Gunzip | null = null;
  private inflated = 0;
  /** Inflated, not yet handed to the tar reader: at most INFLATED_AHEAD chunks. */
  private readonly inflatedAhead: Buffer[] = [];
  private handingOn = false;
  private inflateEnded = false;

  constructor(
    private readonly stream: Readable,
    private readonly hashedElsewhere: OpenedBlob["digest"],
    private readonly layer: LayerContext,
    private readonly parser: TarParser,
    private readonly resolve: () => void,
    private readonly reject: (error: Error) => void,
  ) {
    this.digest = hashedElsewhere ? null : createHash("sha256");
  }

  start(): void {
    const { parser, stream } = this;
    parser.on("entry", (entry: ReadEntry) => this.entry(entry));
    parser.on("error", (error: Error) => {
      this.unreadable ??= error.message;
      stream.resume(); // it may wait for a drain that will not come: read on for the digest
      this.settle();
    });
    parser.on("end", () => {
      this.parserDone = true;
      this.settle();
    });
    stream.on("data", (chunk: Buffer) => this.chunk(chunk));
    stream.on("end", () => this.streamEnd());
    stream.on("error", (error: Error) => {
      if (this.refusal === null) {
        this.refusal = error.message;
        this.reject(new ArtifactError(`${this.layer.where}: ${error.message}`));
      }
    });
  }

  /** A tar entry: checked and placed, its bytes written as they come. */
  private entry(entry: ReadEntry): void {
    const placed = this.refusal !== null || this.unreadable !== null ? null : place(entry, this.layer);
    if (placed === null || typeof placed === "string") {
      entry.resume();
      if (typeof placed === "string") this.refuse(placed);
      return;
    }
    const writer = placed;
    this.open.add(writer);
    entry.on("data", (chunk: Buffer) => {
      if (this.refusal !== null) return;
      try {
        writer.write(chunk);
      } catch (error) {
        writer.abort();
        this.refuse(`entry "${entry.path}": ${(error as Error).message}`);
      }
    });
    entry.on("end", () => {
      this.open.delete(writer);
      if (this.refusal === null) writer.close();
      else writer.abort();
    });
  }

  /** A chunk of the blob: hashed, counted against what the manifest declares, handed on. */
  private chunk(chunk: Buffer): void {
    const { layer, stream } = this;
    this.digest?.update(chunk);
    if (this.size === 0 && chunk[0] === 0x1f && chunk[1] === 0x8b) this.gunzip = this.inflater();
    this.size += chunk.length;
    // More than the manifest declares is refused as it arrives, before it reaches the disk.
    const tooLarge = this.size > layer.declaredSize;
    if (tooLarge || (layer.maxTarBytes === null && this.gunzip === null && this.size > LAYER_CEILING)) {
      stream.pause();
      this.refuse(
        tooLarge
          ? `the blob is larger than the ${layer.declaredSize} bytes its manifest declares`
          : `the layer is larger than ${LAYER_CEILING} bytes, and its image has no file list that allows more`,
      );
      return;
    }
    const gunzip = this.gunzip;
    if (gunzip !== null) {
      if (this.unreadable === null && this.refusal === null && !gunzip.write(chunk)) {
        stream.pause();
        gunzip.once("drain", () => stream.resume());
      }
    } else this.toParser(chunk, stream);
  }

  /**
   * A gzipped layer is inflated here, in bounded chunks with backpressure, rather than inside the
   * tar reader (which inflates a whole write at once: a 2 MB bomb meant a 1 GB peak); the inflated
   * bytes are counted against what the file list allows.
   */
  private inflater(): zlib.Gunzip {
    const { layer } = this;
    // 1 MiB out at a time: a 300 MB layer installed in 0.63 s against 1.07 s with zlib's 64 KiB
    // (fewer buffers, callbacks and tar writes; measured interleaved), still a bounded chunk.
    const inflating = zlib.createGunzip({ chunkSize: INFLATE_CHUNK });
    const limit = layer.maxTarBytes ?? inflateBound(layer.declaredSize);
    inflating.on("data", (out: Buffer) => {
      this.inflated += out.length;
      if (this.inflated > limit) {
        inflating.destroy();
        this.refuse(
          layer.maxTarBytes !== null
            ? `the layer inflates to more than the ${limit} bytes its image's file list allows (a gzip bomb?)`
            : `the layer inflates to more than ${limit} bytes (${MAX_INFLATE_RATIO} times its compressed size, at most ${LAYER_CEILING}), and its image has no file list that allows more (a gzip bomb?)`,
        );
        return;
      }
      // Handed to the tar reader on a later turn, not inside zlib's callback: zlib inflates the
      // next chunk on libuv's pool only once its callback returns, so writing the files in it
      // made inflating and writing take turns (bench/qemu-node.bench.ts).
      this.inflatedAhead.push(out);
      if (this.inflatedAhead.length >= INFLATED_AHEAD) inflating.pause();
      this.scheduleHandOn(inflating);
    });
    inflating.on("end", () => {
      this.inflateEnded = true;
      this.scheduleHandOn(inflating);
    });
    inflating.on("error", (error: Error) => {
      this.unreadable ??= `gzip: ${error.message}`;
      this.stream.resume();
      this.settle();
    });
    return inflating;
  }

  private scheduleHandOn(inflating: zlib.Gunzip): void {
    if (this.handingOn) return;
    this.handingOn = true;
    setImmediate(() => this.handOn(inflating));
  }

  /** The inflated chunks waiting, to the tar reader (which may ask to wait: then on its drain). */
  private handOn(inflating: zlib.Gunzip): void {
    this.handingOn = false;
    for (let chunk = this.inflatedAhead.shift(); chunk !== undefined; chunk = this.inflatedAhead.shift()) {
      if (this.unreadable !== null || this.refusal !== null) {
        this.inflatedAhead.length = 0;
        return;
      }
      if (!this.parser.write(chunk) && this.unreadable === null) {
        this.handingOn = true;
        this.parser.once("drain", () => this.handOn(inflating));
        return;
      }
    }
    if (this.inflateEnded) {
      if (this.unreadable === null && this.refusal === null) this.parser.end();
    } else if (inflating.isPaused()) inflating.resume();
  }

  private toParser(chunk: Buffer, source: NodeJS.ReadableStream): void {
    // (A write may fail the parser: then the source must not wait for a drain.)
    if (this.unreadable === null && !this.parser.write(chunk) && this.unreadable === null) {
      source.pause();
      this.parser.once("drain", () => source.resume());
    }
  }

  private streamEnd(): void {
    this.streamDone = true;
    if (this.gunzip !== null) {
      if (this.unreadable === null && this.refusal === null) this.gunzip.end();
    } else if (this.unreadable === null) this.parser.end();
    this.settle();
  }

  private abortOpen(): void {
    for (const writer of this.open) writer.abort();
    this.open.clear();
  }

  private refuse(message: string): void {
    if (this.refusal !== null) return;
    this.refusal = message;
    this.abortOpen();
    this.stream.destroy();
    this.reject(new ArtifactError(`${this.layer.where}: ${message}`));
  }

  /** Once the blob and the tar are both through (or the tar unreadable): the digest decides. */
  private settle(): void {
    if (this.settled || this.refusal !== null) return;
    if (!this.streamDone || !(this.parserDone || this.unreadable !== null)) return;
    this.settled = true;
    this.abortOpen();
    const hashed = this.digest
      ? Promise.resolve({ hex: this.digest.digest("hex"), size: this.size })
      : (this.hashedElsewhere as Promise<{ hex: string; size: number }>);
    hashed.then(
      ({ hex, size }) => {
        const problem = this.layer.check(hex, size);
        if (problem !== null) return this.reject(new ArtifactError(problem));
        if (this.unreadable !== null)
          return this.reject(
            new ArtifactError(`${this.layer.where}: unreadable archive: ${this.unreadable}`),
          );
        this.resolve();
      },
      (error: Error) =>
        this.reject(new ArtifactError(`${this.layer.where}: cannot hash the blob: ${error.message}`)),
    );
  }
}

type Placed = { write(chunk: Buffer): void; close(): void; abort(): void } | null | string;

/**
 * The entry checked and placed in the staging directory: a writer for a file's bytes, null when
 * nothing more is to be read (directories, links), or why it is refused.
 */
function place(entry: ReadEntry, layer: LayerContext): Placed {
  const raw = entry.path;
  const name = `entry "${raw}"`;
  if (raw.startsWith("/")) return `${name}: an absolute path is refused`;
  if (raw.split("/").includes("..")) return `${name}: ".." would climb out of the image`;
  const clean = path.posix.normalize(raw.replace(/^\.\//, "")).replace(/\/$/, "");
  if (entry.type === "Directory") return null;
  if (clean === "opt" || clean === "opt/kata") return null;
  if (!clean.startsWith("opt/kata/")) return `${name}: outside opt/kata, where an artifact's files are`;
  const file = clean.slice("opt/kata/".length);
  const { into, ours } = layer;
  if (path.posix.basename(file).startsWith(".wh."))
    return `${name}: layer whiteouts are not used by artifacts`;
  const refused = admits(layer.catalogue, layer.artifact, file);
  if (refused !== null) return `${name}: cannot be in image "${layer.artifact}": ${refused}`;
  try {
    switch (entry.type) {
      case "File":
      case "OldFile":
      case "ContiguousFile": {
        const writer = into.open(file, (entry.mode ?? 0o644) & 0o7777);
        ours.add(file);
        return writer;
      }
      case "SymbolicLink": {
        const outside = linkInside(file, entry.linkpath ?? "");
        if (outside !== null) return `${name}: ${outside}`;
        into.link(file, entry.linkpath ?? "");
        ours.delete(file);
        return null;
      }
      case "Link": {
        // A hard link may only repeat a file of this artifact that came before it.
        const target = path.posix.normalize((entry.linkpath ?? "").replace(/^\.\//, ""));
        const from = target.startsWith("opt/kata/") ? target.slice("opt/kata/".length) : null;
        if (from === null || !ours.has(from))
          return `${name}: a hard link to ${entry.linkpath}, which is not a file of this artifact`;
        into.copy(file, from);
        ours.add(file);
        return null;
      }
      default:
        return `${name}: a ${entry.type} entry is refused (only files, directories and links inside the prefix)`;
    }
  } catch (error) {
    return `${name}: ${(error as Error).message}`;
  }
}

/** A layer's entries under opt/kata, from its tar headers alone. */
async function listLayer(stream: Readable, out: Map<string, ListedEntry>, where: string): Promise<void> {
  const { Parser } = await tarLibrary();
  return new Promise((resolve, reject) => {
    const parser = new Parser({ strict: true });
    parser.on("entry", (entry: ReadEntry) => {
      const clean = path.posix.normalize(entry.path.replace(/^\.\//, "")).replace(/\/$/, "");
      if (clean.startsWith("opt/kata/")) {
        const file = clean.slice("opt/kata/".length);
        if (entry.type === "SymbolicLink")
          out.set(file, { path: file, type: "link", target: entry.linkpath ?? "" });
        else if (
          entry.type === "File" ||
          entry.type === "OldFile" ||
          entry.type === "ContiguousFile" ||
          entry.type === "Link"
        )
          out.set(file, {
            path: file,
            type: "file",
            mode: (entry.mode ?? 0o644) & 0o7777,
            size: entry.size ?? 0,
          });
      }
      entry.resume();
    });
    parser.on("error", (error: Error) =>
      reject(new ArtifactError(`${where}: unreadable archive: ${error.message}`)),
    );
    parser.on("end", () => resolve());
    stream.on("error", (error: Error) => reject(new ArtifactError(`${where}: ${error.message}`)));
    stream.pipe(parser as unknown as NodeJS.WritableStream);
  });
}
