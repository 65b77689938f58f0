// Run by the crash-safety tests in a child process: install a saved plan on a host, so that
// KATA_INSTALL_CRASH_AT can kill it at a chosen point. Arguments: host root, changes JSON file, and
// optionally an artifact directory source and the artifact names (comma-separated).
import fs from "node:fs";
import { loadArtifactCatalogue } from "../../src/artifacts/catalogue.js";
import { directorySource } from "../../src/artifacts/source.js";
import { Host } from "../../src/host/host.js";
import { applyChanges } from "../../src/install/apply.js";
import { JournalStore } from "../../src/install/journal.js";
import { installArtifacts } from "../../src/install/switch.js";

const [root, changesFile, artifactsDir, names] = process.argv.slice(2) as [string, string, string?, string?];
const store = new JournalStore(new Host({ root }), "/opt/kata/.install");
if (artifactsDir)
  await installArtifacts(
    store,
    "/opt/kata",
    directorySource(artifactsDir, loadArtifactCatalogue()),
    (names ?? "").split(","),
  );
await applyChanges(store, JSON.parse(fs.readFileSync(changesFile, "utf8")));
