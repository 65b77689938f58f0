// The architecture's one written form (../shared/DESIGN.md "Layout" is drawn from it): floors, lowest
// first; a module imports only from its own floor or below, and no import cycles. `npm test` runs it.
/** The floors, lowest first: each a folder (or file) under src/. */
const FLOORS = [
  // The host and the plain helpers every floor may use.
  [
    "host",
    "at",
    "errors",
    "input-error",
    "toml-error",
    "closest",
    "compare",
    "hash",
    "json-text",
    "json-file",
    "read-bounded",
    "input-file",
    "write-file",
    "file-tree",
    "toml-lines",
    "version",
    "package-root",
    "image-reference",
    "release-version",
    "schema",
    // The plan as data: its changes and actions, and the schema of its JSON document.
    "changeset",
    "plan-schema",
  ],
  ["artifacts"],
  ["state"],
  ["detect"],
  ["shims"],
  ["release"],
  ["inputs", "decide"],
  ["render"],
  ["install"],
  ["pipeline", "release-read"],
  ["kube", "manifests", "report", "output"],
  ["commands", "cli", "entrypoint", "bin"],
];
const pathOf = (names) => `^src/(${names.join("|")})(/|\\.ts$)`;
const above = (i) => FLOORS.slice(i + 1).flat();
module.exports = {
  forbidden: [
    { name: "no-cycles", severity: "error", from: { path: "^src/" }, to: { circular: true } },
    ...FLOORS.slice(0, -1).map((floor, i) => ({
      name: `floor-${floor[0]}`,
      comment: `${floor.join(", ")} import nothing above them`,
      severity: "error",
      from: { path: pathOf(floor) },
      to: { path: pathOf(above(i)) },
    })),
  ],
  options: {
    // TypeScript 7 (the Go compiler) is not a library dependency-cruiser can load: swc parses.
    parser: "swc",
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(test|bench|dist)/" },
  },
};
// For test/layering.test.ts, which checks that every folder and file under src/ is on a floor (one
// on none would be held to no rule); not enumerable, as dependency-cruiser takes no key it does not know.
Object.defineProperty(module.exports, "floors", { value: FLOORS, enumerable: false });
