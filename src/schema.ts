// Schemas use zod/mini: the same validation as classic zod, but its module loads in about half the
// time (measured: ~14 ms against ~33 ms here), and every command that validates input pays that at
// start. Mini ships no messages; English ones are installed here, once, for every schema.
import * as z from "zod/mini";
import en from "zod/v4/locales/en.js";

z.config(en());

/** "kvm.device", "cpu.flags[2]": the key at fault, as a user would write it. */
export function keyPath(path: ReadonlyArray<PropertyKey>): string {
  if (path.length === 0) return "(document)";
  return path
    .map((part, i) => (typeof part === "number" ? `[${part}]` : `${i === 0 ? "" : "."}${String(part)}`))
    .join("");
}
