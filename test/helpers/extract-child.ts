// Extract one artifact from an OCI layout in a process of its own, then print what happened and
// the process's peak memory, as one JSON line: for the tests that measure memory.
import fs from "node:fs";
import { loadArtifactCatalogue } from "../../src/artifacts/catalogue.js";
import { ociLayoutSource } from "../../src/artifacts/oci-layout.js";
import { StagingDir } from "../../src/artifacts/staging.js";

const [layout, artifact, out] = process.argv.slice(2) as [string, string, string];
fs.mkdirSync(out, { recursive: true });
let error: string | null = null;
try {
  await ociLayoutSource(layout, loadArtifactCatalogue(), "x86_64").extract(artifact, new StagingDir(out));
} catch (e) {
  error = (e as Error).message;
}
console.log(JSON.stringify({ error, maxRssMiB: Math.round(process.resourceUsage().maxRSS / 1024) }));
