import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    // Test hosts are real directory trees and some tests spawn the built CLI: give them room on a
    // shared two-core machine instead of failing on a slow moment.
    testTimeout: 30_000,
    // Hooks remove test hosts and artifact trees: a busy machine's rm of thousands of files.
    hookTimeout: 60_000,
    reporters: ["default", "json"],
    outputFile: { json: ".vitest-results.json" },
    // GitHub's workflow parser imports its schema as JSON without an import attribute, which Node
    // refuses: vitest transforms it instead of letting Node load it.
    server: { deps: { inline: ["@actions/workflow-parser"] } },
  },
});
