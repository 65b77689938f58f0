// The node's NFD feature file (kube/nfd-features.ts), written by the entrypoint when asked
// (NFD_FEATURE_FILE) after an install, and removed by its cleanup: whole or not at all, and by a
// temp file NFD does not read (a hidden name).

import { atomicWrite, ensureParents, removeFile } from "../host/fs-ops.js";
import type { Host } from "../host/host.js";
import { featureFile } from "../kube/nfd-features.js";

export async function writeFeatureFile(host: Host, suffix: string | null, text: string): Promise<string> {
  const file = featureFile(suffix);
  await ensureParents(host, file);
  await atomicWrite(host, file, text, { mode: 0o644, uid: 0, gid: 0 });
  return file;
}

/** Removes it; says whether there was one. */
export async function removeFeatureFile(host: Host, suffix: string | null): Promise<boolean> {
  const file = featureFile(suffix);
  if (!(await host.exists(file))) return false;
  await removeFile(host, file);
  return true;
}
