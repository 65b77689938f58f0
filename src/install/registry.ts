// `registry:HOST/REPO`: artifact images pulled from an OCI registry, in process (no extra tools in
// the image): <HOST>/<REPO>/<artifact>:<tag>, with the anonymous bearer-token flow public registries
// use, manifest lists resolved by platform, and every manifest and blob checked against its digest.
import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import type { ReadableStream } from "node:stream/web";
import type { ArtifactSpec } from "../artifacts/catalogue.js";
import { ArtifactError, type ArtifactSource } from "./artifacts.js";
import { type Descriptor, type ImageStore, imageSource } from "./image-source.js";

const MANIFEST_TYPES = [
  "application/vnd.oci.image.index.v1+json",
  "application/vnd.oci.image.manifest.v1+json",
  "application/vnd.docker.distribution.manifest.list.v2+json",
  "application/vnd.docker.distribution.manifest.v2+json",
];
const TIMEOUT_MS = 120_000;

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
  catalogue: Map<string, ArtifactSpec>,
  arch: string | null,
): ArtifactSource {
  const where = `registry:${ref.host}/${ref.repo}`;
  const scheme = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])(:\d+)?$/.test(ref.host) ? "http" : "https";
  const tokens = new Map<string, string>();

  /** GET with the registry's auth flow: on 401, fetch a bearer token for the challenged scope. */
  async function get(url: string, accept: string[], what: string): Promise<Response> {
    const attempt = (token?: string) =>
      fetch(url, {
        headers: { Accept: accept.join(", "), ...(token ? { Authorization: `Bearer ${token}` } : {}) },
        redirect: "follow",
        signal: AbortSignal.timeout(TIMEOUT_MS),
      }).catch((error: Error) => {
        throw new ArtifactError(
          `${where}: ${what}: ${url}: ${(error.cause as Error)?.message ?? error.message}`,
        );
      });
    const repoKey = url.split("/v2/")[1]?.split(/\/(manifests|blobs)\//)[0] ?? "";
    let response = await attempt(tokens.get(repoKey));
    if (response.status === 401) {
      const challenge = response.headers.get("www-authenticate") ?? "";
      const token = await bearerToken(challenge, what);
      tokens.set(repoKey, token);
      response = await attempt(token);
    }
    if (!response.ok) {
      const detail = response.status === 404 ? "not found" : `HTTP ${response.status}`;
      throw new ArtifactError(`${where}: ${what}: ${url}: ${detail}`);
    }
    return response;
  }

  async function bearerToken(challenge: string, what: string): Promise<string> {
    const match = /^Bearer\s+(.*)$/i.exec(challenge);
    if (!match)
      throw new ArtifactError(
        `${where}: ${what}: the registry asks for credentials (${challenge || "no challenge"}); only anonymous pulls are supported`,
      );
    const params = Object.fromEntries(
      [...(match[1] as string).matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (!params.realm) throw new ArtifactError(`${where}: ${what}: a bearer challenge without a realm`);
    const url = new URL(params.realm);
    if (params.service) url.searchParams.set("service", params.service);
    if (params.scope) url.searchParams.set("scope", params.scope);
    const response = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) }).catch((error: Error) => {
      throw new ArtifactError(`${where}: ${what}: token from ${url.origin}: ${error.message}`);
    });
    if (!response.ok)
      throw new ArtifactError(`${where}: ${what}: token from ${url.origin}: HTTP ${response.status}`);
    const body = (await response.json()) as { token?: string; access_token?: string };
    const token = body.token ?? body.access_token;
    if (!token) throw new ArtifactError(`${where}: ${what}: the token endpoint returned no token`);
    return token;
  }

  const base = (artifact: string) => `${scheme}://${ref.host}/v2/${ref.repo}/${artifact}`;
  const store: ImageStore = {
    where,
    async tagged(artifact) {
      const response = await get(
        `${base(artifact)}/manifests/${ref.tag}`,
        MANIFEST_TYPES,
        `${artifact}:${ref.tag}`,
      );
      const bytes = Buffer.from(await response.arrayBuffer());
      const digest = response.headers.get("docker-content-digest");
      const mediaType = (response.headers.get("content-type") ?? "").split(";")[0] as string;
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
      const response = await get(
        `${base(artifact)}/${kind}/${d.digest}`,
        kind === "manifests" ? MANIFEST_TYPES : ["*/*"],
        what,
      );
      return Buffer.from(await response.arrayBuffer());
    },
    async open(artifact, d, what) {
      const response = await get(`${base(artifact)}/blobs/${d.digest}`, ["*/*"], what);
      if (!response.body) throw new ArtifactError(`${where}: ${what}: the registry sent no body`);
      return { stream: Readable.fromWeb(response.body as ReadableStream<Uint8Array>) };
    },
  };
  return imageSource(store, catalogue, arch);
}
