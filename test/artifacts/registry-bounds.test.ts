// A registry that misbehaves, on loopback: what kata-install reads from it is bounded — manifests
// by size as they arrive, every read by an idle timeout (not the whole transfer), an ambiguous
// index refused — and each error names the registry and the reference. The gzip bomb is measured
// in a child process: its peak memory stays small and the layer is refused as it inflates.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadArtifactCatalogue } from "../../src/artifacts/catalogue.js";
import { FILES_ANNOTATION } from "../../src/artifacts/listing.js";
import { parseRegistry, type RegistryLimits, registrySource } from "../../src/artifacts/registry.js";
import { StagingDir } from "../../src/artifacts/staging.js";

const catalogue = loadArtifactCatalogue();
const MANIFEST = "application/vnd.oci.image.manifest.v1+json";
const INDEX = "application/vnd.oci.image.index.v1+json";
const sha = (b: Buffer | string) => `sha256:${createHash("sha256").update(b).digest("hex")}`;

/** Routes by path: each a function writing the response as the test wants it. */
const routes = new Map<string, (res: http.ServerResponse) => void>();
let server: http.Server;
let host = "";
beforeAll(async () => {
  server = http.createServer((req, res) => {
    const route = routes.get(req.url ?? "");
    if (route) route(res);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

// No idle bound a busy machine could reach first, unless a test is about that bound: each test's
// bound is one of bytes, or one the server's pace is far from (the machine busy, a pause of a second).
const source = (limits: Partial<RegistryLimits> = {}) =>
  registrySource(parseRegistry(`${host}/kata`, "4.1.0"), catalogue, "x86_64", {
    maxDocumentBytes: 64 << 10,
    idleMs: 30_000,
    ...limits,
  });

/** An image of one uncompressed layer, as its manifest declares it, whose blob `send` answers. */
function serveImage(
  artifact: string,
  layer: { digest: string; size: number },
  send: (res: http.ServerResponse) => void,
) {
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MANIFEST,
      layers: [{ mediaType: "application/vnd.oci.image.layer.v1.tar", ...layer }],
    }),
  );
  routes.set(`/v2/kata/${artifact}/manifests/4.1.0`, (res) =>
    res.writeHead(200, { "content-type": MANIFEST }).end(manifest),
  );
  routes.set(`/v2/kata/${artifact}/blobs/${layer.digest}`, (res) => {
    res.writeHead(200);
    send(res);
  });
}

/** `act` every `ms` until the response ends or its client goes. */
function every(res: http.ServerResponse, ms: number, act: () => void): void {
  const timer = setInterval(() => (res.writableEnded ? clearInterval(timer) : act()), ms);
  res.on("close", () => clearInterval(timer));
}

describe("a registry that misbehaves", () => {
  it("an endless manifest is refused once past the bound, naming the registry and the reference", async () => {
    routes.set("/v2/kata/qemu/manifests/4.1.0", (res) => {
      res.writeHead(200, { "content-type": MANIFEST });
      every(res, 5, () => res.write(Buffer.alloc(16 << 10, 32)));
    });
    await expect(source().identify("qemu")).rejects.toThrow(
      `registry:${host}/kata: qemu:4.1.0: more than 65536 bytes, more than a manifest may be`,
    );
  });

  it("a manifest that says it is 400 MB is refused before a byte of it is read", async () => {
    routes.set("/v2/kata/qemu/manifests/4.1.0", (res) => {
      res.writeHead(200, { "content-type": MANIFEST, "content-length": String(400 << 20) });
      res.write("{");
    });
    await expect(source().identify("qemu")).rejects.toThrow(
      `registry:${host}/kata: qemu:4.1.0: ${400 << 20} bytes, more than a manifest may be (65536)`,
    );
  });

  it("a trickled manifest stops at the idle timeout with the registry named, not a bare TimeoutError", async () => {
    routes.set("/v2/kata/qemu/manifests/4.1.0", (res) => {
      res.writeHead(200, { "content-type": MANIFEST });
      res.write("{");
      // Then nothing.
    });
    await expect(source({ idleMs: 400 }).identify("qemu")).rejects.toThrow(
      `registry:${host}/kata: qemu:4.1.0: no data for 400 ms: the transfer stalled`,
    );
    routes.set("/v2/kata/qemu/manifests/4.1.0", () => {}); // no headers at all
    await expect(source({ idleMs: 400 }).identify("qemu")).rejects.toThrow(
      /qemu:4\.1\.0: http:.*: no answer within 400 ms/,
    );
  });

  it("a slow blob that keeps coming is not cut off by a deadline for the whole transfer", async () => {
    const tree = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-slow-"));
    fs.mkdirSync(path.join(tree, "opt/kata/libexec"), { recursive: true });
    fs.writeFileSync(path.join(tree, "opt/kata/libexec/virtiofsd"), Buffer.alloc(6 << 10, 7));
    const blob = spawnSync("tar", ["-C", tree, "-cf", "-", "opt"], { maxBuffer: 1 << 20 }).stdout as Buffer;
    fs.rmSync(tree, { recursive: true, force: true });
    let sent = 0;
    // Pieces 150 ms apart: seconds in all, past the 2 s idle bound, never idle that long.
    const piece = Math.ceil(blob.length / 16);
    serveImage("qemu", { digest: sha(blob), size: blob.length }, (res) =>
      every(res, 150, () => {
        res.write(blob.subarray(sent, sent + piece));
        sent += piece;
        if (sent >= blob.length) res.end();
      }),
    );
    const started = Date.now();
    // An image without a file list: its listing reads the whole layer, which must go through.
    expect(await source({ idleMs: 2000 }).list("qemu")).toEqual([
      { path: "libexec/virtiofsd", type: "file", mode: 0o644, size: 6 << 10 },
    ]);
    expect(Date.now() - started).toBeGreaterThan(2000);
  }, 20_000);

  it("a registry that sends a byte every 100 ms, never idle long, is cut off at the transfer's deadline", async () => {
    routes.set("/v2/kata/qemu/manifests/4.1.0", (res) => {
      res.writeHead(200, { "content-type": MANIFEST });
      every(res, 100, () => res.write(" "));
    });
    const started = Date.now();
    await expect(source({ idleMs: 1400, pullMs: 1500 }).identify("qemu")).rejects.toThrow(
      `registry:${host}/kata: qemu:4.1.0: not done within 1500 ms, the most this transfer may take: the registry sends too slowly`,
    );
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it("a layer that trickles is cut off at its deadline (a base, plus its declared size at the slowest rate)", async () => {
    const blob = Buffer.alloc(6 << 10, 7);
    serveImage("qemu", { digest: sha(blob), size: blob.length }, (res) =>
      every(res, 50, () => res.write(blob.subarray(0, 1))),
    );
    // 6 KiB at 6 KiB/s: a second, plus the base of 500 ms.
    const limits = { idleMs: 1400, pullMs: 500, minBytesPerSecond: 6 << 10 };
    await expect(source(limits).list("qemu")).rejects.toThrow(
      `registry:${host}/kata: qemu layer ${sha(blob)}: not done within 1500 ms, the most this transfer may take: the registry sends too slowly`,
    );
  });

  it("a layer that sends more than its manifest declares is refused as the bytes arrive", async () => {
    const declared = 4 << 10;
    serveImage("virtiofsd", { digest: sha("whatever"), size: declared }, (res) =>
      every(res, 5, () => res.write(Buffer.alloc(64 << 10))),
    );
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-endless-"));
    try {
      await expect(source().extract("virtiofsd", new StagingDir(out))).rejects.toThrow(
        `the blob is larger than the ${declared} bytes its manifest declares`,
      );
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  });

  it("an index with two manifests for one platform is ambiguous, never the first one taken", async () => {
    const index = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: INDEX,
        manifests: [1, 2].map((n) => ({
          mediaType: MANIFEST,
          digest: sha(String(n)),
          size: 1,
          platform: { os: "linux", architecture: "amd64" },
        })),
      }),
    );
    routes.set("/v2/kata/qemu/manifests/4.1.0", (res) =>
      res.writeHead(200, { "content-type": INDEX }).end(index),
    );
    await expect(source().identify("qemu")).rejects.toThrow(
      `registry:${host}/kata: qemu: the index lists 2 manifests for linux/amd64`,
    );
  });
});

describe("a gzip bomb", () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-bomb-"));
  afterAll(() => fs.rmSync(work, { recursive: true, force: true }));
  // 256 MiB of zeros in one tar entry, gzipped to a few hundred KB.
  const tree = path.join(work, "tree/opt/kata/libexec");
  fs.mkdirSync(tree, { recursive: true });
  spawnSync("truncate", ["-s", "256M", path.join(tree, "virtiofsd")]);
  const layer = spawnSync("sh", ["-c", `tar -C ${work}/tree -cf - opt | gzip -1`], {
    maxBuffer: 64 << 20,
  }).stdout as Buffer;

  /** An OCI layout of that layer, its manifest with `annotations` (a file list, or none). */
  function layout(name: string, annotations: Record<string, string>): string {
    const dir = path.join(work, name);
    fs.mkdirSync(path.join(dir, "blobs/sha256"), { recursive: true });
    const put = (bytes: Buffer) => {
      const digest = sha(bytes);
      fs.writeFileSync(path.join(dir, "blobs/sha256", digest.slice(7)), bytes);
      return { digest, size: bytes.length };
    };
    const config = put(Buffer.from("{}"));
    const manifest = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: MANIFEST,
        config: { mediaType: "application/vnd.oci.image.config.v1+json", ...config },
        layers: [{ mediaType: "application/vnd.oci.image.layer.v1.tar+gzip", ...put(layer) }],
        annotations,
      }),
    );
    const m = put(manifest);
    fs.writeFileSync(path.join(dir, "oci-layout"), '{"imageLayoutVersion":"1.0.0"}');
    fs.writeFileSync(
      path.join(dir, "index.json"),
      JSON.stringify({
        schemaVersion: 2,
        manifests: [
          { mediaType: MANIFEST, ...m, annotations: { "org.opencontainers.image.ref.name": "virtiofsd" } },
        ],
      }),
    );
    return dir;
  }

  /** Extract it in a child process: its error, its peak memory, and what it wrote. */
  function extract(dir: string): { error: string | null; maxRssMiB: number; written: number } {
    const out = `${dir}.out`;
    const child = spawnSync(
      process.execPath,
      ["--import", "tsx", path.resolve("test/helpers/extract-child.ts"), dir, "virtiofsd", out],
      { encoding: "utf8", timeout: 60_000 },
    );
    const result = JSON.parse(child.stdout.trim().split("\n").pop() ?? "{}");
    const written = fs.existsSync(path.join(out, "libexec/virtiofsd"))
      ? fs.statSync(path.join(out, "libexec/virtiofsd")).size
      : 0;
    return { ...result, written };
  }

  it("is refused as it inflates, its file list's bound exceeded; the child's peak memory stays small", () => {
    // The file list says the file is 1 KB.
    const result = extract(
      layout("listed", {
        [FILES_ANNOTATION]: JSON.stringify([
          { path: "libexec/virtiofsd", type: "file", mode: 0o755, size: 1024 },
        ]),
      }),
    );
    expect(result.error).toMatch(/inflates to more than the \d+ bytes its image's file list allows/);
    // Peak resident memory of the whole child (Node, tsx and all): far from the 1 GB of before.
    expect(result.maxRssMiB).toBeLessThan(300);
  });

  it("from an image without a file list, is refused past 100 times its compressed size: the disk is not filled", () => {
    const result = extract(layout("unlisted", {}));
    const bound = layer.length * 100 + (1 << 20);
    expect(result.error).toBe(
      `oci-layout:${work}/unlisted: virtiofsd layer ${sha(layer).slice(0, 19)}: the layer inflates to more than ${bound} bytes (100 times its compressed size, at most 4294967296), and its image has no file list that allows more (a gzip bomb?)`,
    );
    expect(result.written).toBeLessThanOrEqual(bound);
    expect(result.maxRssMiB).toBeLessThan(300);
  });
});
