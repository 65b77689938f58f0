// The systemd units kata-install runs itself (nydus-for-kata-tee's), through the host's systemctl as
// the runtime's restart goes (the Host's command strategy). Started or stopped once their files are
// written and before the runtime loads a configuration that names them; journalled first, so that a
// rollback (in this run or the next) does the same on the files it puts back.

import type { PlanAction } from "../changeset.js";
import { UserError } from "../errors.js";
import type { Host } from "../host/host.js";
import { isNydusUnitPath, unitOf } from "../render/nydus-changes.js";
import { UNIT_DIR } from "../render/nydus-config.js";
import type { JournalStore } from "./journal.js";

const TIMEOUT_MS = 120_000;

async function systemctl(host: Host, args: string[]): Promise<void> {
  const run = await host.run("systemctl", args, { timeoutMs: TIMEOUT_MS });
  if (!run.ok) throw new UserError(`systemctl ${args.join(" ")} failed: ${run.reason}`);
}

/** The plan's service actions, done: systemd reloaded, then each unit stopped or restarted. */
export async function runServices(store: JournalStore, actions: PlanAction[]): Promise<void> {
  const services = actions.filter((a) => a.kind === "restart-service" || a.kind === "stop-service");
  if (services.length === 0) return;
  const journal = await store.load();
  if (journal?.transaction) {
    journal.transaction.services = services.map((a) => a.target);
    await store.save(journal);
  }
  await systemctl(store.host, ["daemon-reload"]);
  for (const a of services)
    await systemctl(store.host, [a.kind === "stop-service" ? "stop" : "restart", a.target]);
}

/**
 * After a rollback of files that `units` ran on: systemd reloaded, and each unit restarted on its
 * file put back, or stopped where its file is gone. Best effort: the files are what the rollback
 * guarantees; a unit systemd would not stop is said by the next plan (its file is not kata-install's).
 */
export async function servicesAfterRollback(store: JournalStore, units: string[]): Promise<void> {
  if (units.length === 0) return;
  const host = store.host;
  await host.run("systemctl", ["daemon-reload"], { timeoutMs: TIMEOUT_MS });
  for (const unit of units) {
    const there = await host.exists(`${UNIT_DIR}/${unit}`);
    await host.run("systemctl", [there ? "restart" : "stop", unit], { timeoutMs: TIMEOUT_MS });
  }
}

/** The units of kata-install's that uninstall stops: unit files it created (nydus's). */
export function unitsToStop(files: Record<string, { original: unknown; link?: boolean }>): string[] {
  return Object.entries(files)
    .filter(([path, record]) => !record.link && record.original === "absent" && isNydusUnitPath(path))
    .map(([path]) => unitOf(path));
}

/** Stop units before their files go, then reload systemd once they are gone. */
export async function stopUnits(host: Host, units: string[]): Promise<void> {
  for (const unit of units) await systemctl(host, ["stop", unit]);
}

export async function reloadSystemd(host: Host): Promise<void> {
  await systemctl(host, ["daemon-reload"]);
}
