// Kata's usual paths under the prefix that lead into the installed version: the release's own
// directories, the shims', the firmware's.
import { SHIM_LINKS } from "../shims/table.js";

/**
 * Links from Kata's usual paths into `current`; created when the prefix has nothing there: every
 * release's, the shims' own directories (their records' `links`, src/shims/table.ts), the firmware's.
 */
export const LINKS = [
  "bin",
  "libexec",
  "runtime-rs",
  "share/kata-containers",
  ...SHIM_LINKS,
  "share/ovmf",
  "share/aavmf",
];
