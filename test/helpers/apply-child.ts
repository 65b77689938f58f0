// Run by the crash-safety tests in a child process: apply a saved list of changes to a host, so
// that KATA_INSTALL_CRASH_AT can kill it at a chosen point. Arguments: host root, changes JSON file.
import fs from "node:fs";
import { Host } from "../../src/host/host.js";
import { applyChanges } from "../../src/install/apply.js";
import { JournalStore } from "../../src/install/journal.js";

const [root, changesFile] = process.argv.slice(2) as [string, string];
const changes = JSON.parse(fs.readFileSync(changesFile, "utf8"));
await applyChanges(new JournalStore(new Host({ root }), "/opt/kata/.install"), changes);
