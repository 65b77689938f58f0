#!/usr/bin/env node
// The CLI's entry: dist/cli.js. src/cli.ts holds the wiring, so that the start-up snapshot's entry
// (src/snapshot.ts) can hold the same without running it.
import { main } from "./cli.js";

await main();
