// `registry:HOST/REPO`: artifact images pulled from an OCI registry, in process (no extra tools in
// the image): <HOST>/<REPO>/<artifact>:<tag>, with the anonymous bearer-token flow public registries
// use, manifest lists resolved by platform, and every manifest and blob checked against its digest.
import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import type { ReadableStream } from "node:stream/web";
import { itemAt } from "../at.js";
import { ArtifactError, ImageAbsent } from "./artifact-error.js";
import type { ArtifactCatalogue } from "./catalogue.js";
import { type Descriptor, type ImageStore, imageSource, MAX_MANIFEST_BYTES } from "./image-source.js";
import type { ArtifactSource } from "./source.js";

const MANIFEST_TYPES = [
  "application/vnd.oci.image.index.v1+json",
  "application/vnd.oci.image.manifest.v1+json",
  "application/vnd.docker.distribution.manifest.list.v2+json",
  "application/vnd.docker.distribution.manifest.v2+json",
];
/**
 * Bounds on what a registry may send. Manifests, indexes and tokens are kilobytes: more is refused
 * as it arrives, never held. Time is bounded per read — a stalled transfer stops after `idleMs`
 * without a byte — and per transfer: a registry that sends a byte now and then, never idle for
 * long, must still be done within `pullMs`, plus, for a blob, the time its declared size takes at
 * `minBytesPerSecond` (a large layer on a slow link goes on; one that trickles does not hold the
 * node's lock without end).
 */
export interface RegistryLimits {
  /** Largest manifest, index or token response, in bytes. */
  maxDocumentBytes: number;
  /** Longest wait for response headers, or between two reads of a body. */
  idleMs: number;
  /** The deadline of a whole transfer (headers and body), before its size is counted. */
  pullMs: number;
  /** The slowest a blob may come on average: its size at this rate is added to its deadline. */
  minBytesPerSecond: number;
}
export const DEFAULT_LIMITS: RegistryLimits = {
  maxDocumentBytes: MAX_MANIFEST_BYTES,
  idleMs: 30_000,
  pullMs: 120_000,
  minBytesPerSecond: 256 << 10,
};

/** When a transfer must be done by, and how long that was, for its message. */
interface Deadline {
  at: number;
  ms: number;
}

export interface RegistryRef {
  host: string;
  repo: string;
  tag: string;
}

/** "127.0.0.1:5000/kata-containers" → host and repository; loopback registries speak plain HTTP. */
export function parseRegistry(spec: string, tag: string): RegistryRef {
  const slash = spec.indexOf("/");
  if (slash <= 0 || slash === spec.length - 1)
    throw new ArtifactError(`registry:${spec}: expected registry:HOST/REPOSITORY`);
  return { host: spec.slice(0, slash), repo: spec.slice(slash + 1).replace(/\/+$/, ""), tag };
}

export function registrySource(
  ref: RegistryRef,
  catalogue: ArtifactCatalogue,
  arch: string | null,
  given: Partial<RegistryLimits> = {},
): ArtifactSource {
  const limits: RegistryLimits = { ...DEFAULT_LIMITS, ...given };
  const deadline = (bytes = 0): Deadline => {
    const ms = limits.pullMs + Math.ceil((bytes * 1000) / limits.minBytesPerSecond);
    return { at: Date.now() + ms, ms };
  };
  const where = `registry:${ref.host}/${ref.repo}`;
  const scheme = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])(:\d+)?$/.test(ref.host) ? "http" : "https";
  const tokens = new Map<string, string>();

  /** GET with the registry's auth flow: on 401, fetch a bearer token for the challenged scope. */
  async function get(url: string, accept: string[], what: string, by: Deadline): Promise<Response> {
    const attempt = (token?: string) =>
      fetchHeaders(
        url,
        { Accept: accept.join(", "), ...(token ? { Authorization: `Bearer ${token}` } : {}) },
        `${where}: ${what}: ${url}`,
        by,
      );
    const repoKey = url.split("/v2/")[1]?.split(/\/(manifests|blobs)\//)[0] ?? "";
    let response = await attempt(tokens.get(repoKey));
    if (response.status === 401) {
      const challenge = response.headers.get("www-authenticate") ?? "";
      const token = await bearerToken(challenge, what, by);
      tokens.set(repoKey, token);
      response = await attempt(token);
    }
    if (!response.ok) {
      const detail = response.status === 404 ? "not found" : `HTTP ${response.status}`;
      // A tag the registry does not have: that image is not in this release.
      const absent =
        response.status === 404 && url.includes("/manifests/") && !url.includes("/manifests/sha256:");
      throw new (absent ? ImageAbsent : ArtifactError)(`${where}: ${what}: ${url}: ${detail}`);
    }
    return response;
  }

  async function bearerToken(challenge: string, what: string, by: Deadline): Promise<string> {
    const match = /^Bearer\s+(.*)$/i.exec(challenge);
    if (!match)
      throw new ArtifactError(
        `${where}: ${what}: the registry asks for credentials (${challenge || "no challenge"}); only anonymous pulls are supported`,
      );
    const params = Object.fromEntries(
      [...itemAt(match, 1, "the challenge's parameters").matchAll(/(\w+)="([^"]*)"/g)].map((m) => [
        m[1],
        m[2],
      ]),
    );
    if (!params.realm) throw new ArtifactError(`${where}: ${what}: a bearer challenge without a realm`);
    const url = new URL(params.realm);
    if (params.service) url.searchParams.set("service", params.service);
    if (params.scope) url.searchParams.set("scope", params.scope);
    const at = `${where}: ${what}: token from ${url.origin}`;
    const response = await fetchHeaders(url.toString(), {}, at, by);
    if (!response.ok) throw new ArtifactError(`${at}: HTTP ${response.status}`);
    let body: { token?: string; access_token?: string };
    try {
      body = JSON.parse((await readDocument(response, at, by)).toString("utf8"));
    } catch (error) {
      if (error instanceof ArtifactError) throw error;
      throw new ArtifactError(`${at}: not JSON`);
    }
    const token = body.token ?? body.access_token;
    if (!token) throw new ArtifactError(`${where}: ${what}: the token endpoint returned no token`);
    return token;
  }

  /**
   * Response headers within `idleMs`; the body is the caller's, read under the same idle bound.
   * The controller stays with the response, so a stalled body can be cut off later.
   */
  async function fetchHeaders(
    url: string,
    headers: Record<string, string>,
    at: string,
    by: Deadline,
  ): Promise<Response> {
    const controller = new AbortController();
    const wait = Math.max(0, Math.min(limits.idleMs, by.at - Date.now()));
    const timer = setTimeout(() => controller.abort(), wait);
    try {
      const response = await fetch(url, { headers, redirect: "follow", signal: controller.signal });
      aborters.set(response, controller);
      return response;
    } catch (error) {
      const e = error as Error;
      if (controller.signal.aborted)
        throw new ArtifactError(
          wait < limits.idleMs ? overdue(at, by) : `${at}: no answer within ${limits.idleMs} ms`,
        );
      const why = (e.cause as Error)?.message ?? e.message;
      // Node's fetch keeps the Fetch standard's list of blocked ports (6000, 6665–6669, …).
      throw new ArtifactError(
        why === "bad port"
          ? `${at}: bad port: Node's fetch refuses to connect to port ${new URL(url).port} (one the Fetch standard blocks): serve the registry on another port`
          : `${at}: ${why}`,
      );
    } finally {
      clearTimeout(timer);
    }
  }
  const aborters = new WeakMap<Response, AbortController>();

  /** A manifest-sized body: refused as soon as it passes the bound, and cut off when it stalls. */
  async function readDocument(response: Response, at: string, by: Deadline): Promise<Buffer> {
    const declared = Number(response.headers.get("content-length") ?? "NaN");
    if (declared > limits.maxDocumentBytes) {
      aborters.get(response)?.abort();
      throw new ArtifactError(
        `${at}: ${declared} bytes, more than a manifest may be (${limits.maxDocumentBytes})`,
      );
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of bounded(bodyOf(response, at), limits.idleMs, by, at, () =>
      aborters.get(response)?.abort(),
    )) {
      size += chunk.length;
      if (size > limits.maxDocumentBytes) {
        aborters.get(response)?.abort();
        throw new ArtifactError(
          `${at}: more than ${limits.maxDocumentBytes} bytes, more than a manifest may be`,
        );
      }
      chunks.push(chunk);
    }
    return Buffer.concat(chunks);
  }

  const base = (artifact: string) => `${scheme}://${ref.host}/v2/${ref.repo}/${artifact}`;
  const store: ImageStore = {
    where,
    async tagged(artifact) {
      const by = deadline();
      const response = await get(
        `${base(artifact)}/manifests/${ref.tag}`,
        MANIFEST_TYPES,
        `${artifact}:${ref.tag}`,
        by,
      );
      const bytes = await readDocument(response, `${where}: ${artifact}:${ref.tag}`, by);
      const digest = response.headers.get("docker-content-digest");
      const mediaType = (response.headers.get("content-type") ?? "").split(";")[0] ?? "";
      // By tag, the registry says which digest it served; without one, the bytes name themselves.
      const descriptor: Descriptor = {
        mediaType,
        digest: digest ?? `sha256:${createHash("sha256").update(bytes).digest("hex")}`,
        size: bytes.length,
      };
      return { descriptor, bytes };
    },
    async fetch(artifact, d, what) {
      const kind = MANIFEST_TYPES.includes(d.mediaType) ? "manifests" : "blobs";
      const by = deadline();
      const response = await get(
        `${base(artifact)}/${kind}/${d.digest}`,
        kind === "manifests" ? MANIFEST_TYPES : ["*/*"],
        what,
        by,
      );
      return readDocument(response, `${where}: ${what}`, by);
    },
    async open(artifact, d, what) {
      const at = `${where}: ${what}`;
      const by = deadline(d.size);
      const response = await get(`${base(artifact)}/blobs/${d.digest}`, ["*/*"], what, by);
      // While bytes keep coming, within the blob's deadline: a stall of idleMs or the deadline
      // ends it, naming the registry and the blob.
      return {
        stream: Readable.from(
          bounded(bodyOf(response, at), limits.idleMs, by, at, () => aborters.get(response)?.abort()),
        ),
      };
    },
  };
  return imageSource(store, catalogue, arch);
}

function bodyOf(response: Response, at: string): AsyncIterable<Uint8Array> {
  if (!response.body) throw new ArtifactError(`${at}: the registry sent no body`);
  return Readable.fromWeb(response.body as ReadableStream<Uint8Array>);
}

function overdue(at: string, by: Deadline): string {
  return `${at}: not done within ${by.ms} ms, the most this transfer may take: the registry sends too slowly`;
}

/**
 * The chunks of `source`, failing (and calling `abort`) when none comes for `ms`, or when the
 * transfer's deadline passes, however steadily bytes come.
 */
async function* bounded(
  source: AsyncIterable<Uint8Array>,
  ms: number,
  by: Deadline,
  at: string,
  abort: () => void,
): AsyncGenerator<Buffer> {
  const iterator = source[Symbol.asyncIterator]();
  for (;;) {
    let timer: NodeJS.Timeout | undefined;
    const left = by.at - Date.now();
    const stalled = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => {
          abort();
          reject(
            new ArtifactError(
              left < ms ? overdue(at, by) : `${at}: no data for ${ms} ms: the transfer stalled`,
            ),
          );
        },
        Math.max(0, Math.min(ms, left)),
      );
    });
    let next: IteratorResult<Uint8Array>;
    try {
      next = await Promise.race([iterator.next(), stalled]);
    } catch (error) {
      if (error instanceof ArtifactError) throw error;
      throw new ArtifactError(`${at}: ${(error as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
    if (next.done) return;
    yield Buffer.from(next.value);
  }
}
