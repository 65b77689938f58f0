#!/usr/bin/env node
// The CLI's entry: dist/cli.js. src/cli.ts holds the wiring.
import { main } from "./cli.js";

await main();
