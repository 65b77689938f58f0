// The checks install makes of the node itself before it writes anything: whether the prefix is
// kata-install's to write, and whether a handler of the node's own would be replaced. Shared by
// `preflight`, `plan` and `install`, so that preflight reports what install would refuse.
import type { Catalog } from "../decide/catalog.js";
import type { Check, Decision } from "../decide/decision.js";
import type { Facts } from "../detect/facts.js";
import type { Host } from "../host/host.js";
import { handlerCheck } from "../render/handler-owners.js";
import { installDir } from "../render/layout.js";
import { takesOver } from "../render/render.js";
import type { JournalStore } from "./journal.js";
import { prefixCheck } from "./prefix.js";

export async function installChecks(
  host: Host,
  facts: Facts,
  decision: Decision,
  catalog: Catalog,
  store: JournalStore,
): Promise<Check[]> {
  if (decision.shims.length === 0) return [];
  return [
    // What is there that is not ours would stop the install.
    await prefixCheck(host, installDir(decision), await store.load(), takesOver(decision, facts)),
    // So would a handler of the node's own that the plan would replace.
    handlerCheck(facts.runtime.handlers, decision, catalog),
  ];
}
