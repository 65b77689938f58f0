// Bundle the CLI into dist/, as few files as a command needs: starting Node costs per module file
// (resolving, reading, compiling each), and code splitting cut the node's commands into ~50 small
// chunks. So:
//   dist/cli.js              commander and the command table only: `--help` loads nothing else;
//   dist/commands/<group>.js one file per group of commands, everything it runs inside, each
//                            loaded only when one of its commands runs (no state crosses groups:
//                            a run is one command, and errors are told apart by name, not class);
//   dist/lib/<name>.js       the large libraries only some runs need (the Kubernetes client, tar,
//                            listr2, nunjucks, gRPC), loaded when first asked for.
// Type-checking is `tsc --noEmit` (npm run check).

import { chmod, rm } from "node:fs/promises";
import { build } from "esbuild";

/**
 * The command groups src/cli/ imports ("../commands/<group>.js"). report is one of its own: it
 * needs half of node-side's code, and loading the other half cost each report ~15 ms.
 */
const GROUPS = ["facts", "node-side", "report", "manifests", "artifacts"];
/** Libraries kept out of the groups, by package: loaded from dist/lib/<file>.js. */
const LIBS = {
  "@kubernetes/client-node": "k8s",
  tar: "tar",
  listr2: "listr2",
  nunjucks: "nunjucks",
  "@grpc/grpc-js": "grpc",
};

const common = {
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  sourcemap: true,
  minify: true,
  keepNames: true,
  // CommonJS dependencies bundled into ESM call require() for Node built-ins.
  banner: {
    js: "import { createRequire as __kiCreateRequire } from 'node:module'; const require = __kiCreateRequire(import.meta.url);",
  },
  logLevel: "warning",
};

/** Imports of `filter` resolved to a file of dist/ beside the output: left as imports. */
const external = (name, filter, to) => ({
  name,
  setup(b) {
    b.onResolve({ filter }, (args) => ({ path: to(args.path), external: true }));
  },
});
const libFilter = new RegExp(`^(${Object.keys(LIBS).join("|").replaceAll("/", "\\/")})$`);

await rm("dist", { recursive: true, force: true });
await build({
  ...common,
  entryPoints: ["src/bin.ts"],
  outfile: "dist/cli.js",
  // src/cli/*.ts import "../commands/<group>.js": beside dist/cli.js, that is ./commands/<group>.js.
  plugins: [external("command-groups", /^\.\.\/commands\//, (p) => p.slice(1))],
});
await build({
  ...common,
  entryPoints: GROUPS.map((group) => ({ in: `src/commands/${group}.ts`, out: group })),
  outdir: "dist/commands",
  plugins: [external("libraries", libFilter, (p) => `../lib/${LIBS[p]}.js`)],
});
await build({
  ...common,
  entryPoints: Object.entries(LIBS).map(([pkg, file]) => ({ in: pkg, out: file })),
  outdir: "dist/lib",
});
// The package's bin and the image's entrypoint: dist/cli.js itself (its first line is `#!/usr/bin/env node`).
await chmod("dist/cli.js", 0o755);
