// Bundle the CLI into dist/: one entry file plus lazily loaded chunks, so that starting the CLI reads
// a handful of files instead of hundreds of modules (zod alone is ~100), and `--help` loads no
// command code at all. Type-checking is `tsc --noEmit` (npm run check).

import { rm } from "node:fs/promises";
import { build } from "esbuild";

await rm("dist", { recursive: true, force: true });
await build({
  entryPoints: ["src/cli.ts"],
  outdir: "dist",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  sourcemap: true,
  minify: true,
  keepNames: true,
  chunkNames: "chunks/[name]-[hash]",
  // CommonJS dependencies bundled into ESM call require() for Node built-ins.
  banner: {
    js: "import { createRequire as __kiCreateRequire } from 'node:module'; const require = __kiCreateRequire(import.meta.url);",
  },
  logLevel: "warning",
});
