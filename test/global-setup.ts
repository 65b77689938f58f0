// The CLI tests run the built dist/cli.js, as a user would: build it once, fresh, before any test.
import { execFileSync } from "node:child_process";

export default function setup(): void {
  execFileSync(process.execPath, ["scripts/build.mjs"], { stdio: "inherit" });
}
