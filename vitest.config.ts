import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    // Test hosts are real directory trees and some tests spawn the built CLI: give them room on a
    // shared two-core machine instead of failing on a slow moment.
    testTimeout: 30_000,
    reporters: ["default", "json"],
    outputFile: { json: ".vitest-results.json" },
  },
});
