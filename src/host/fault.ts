// Faults injected on purpose, for the tests that make each write, rename, fsync and restart of an
// install fail in turn: KATA_INSTALL_FAULT=<kind>:<n>[+][@<path part>][,…] — the n-th operation of
// that kind fails with EIO, a hard link ("link") with EXDEV, as across two file systems; with "+",
// that one and every later one (a disk that stays full); with "@", only operations on a path
// containing that part are counted. Several, comma-separated, make a rollback fail after the
// failure it rolls back. Unset, as on every node, this is one comparison per operation.
import { itemAt } from "../at.js";
export type FaultKind = "write" | "rename" | "fsync" | "restart" | "link";

interface Spec {
  kind: string;
  n: number;
  sticky: boolean;
  on: string | null;
  count: number;
}

// Read at the first operation, not when the module loads: a test sets it after importing.
let parsed: Spec[] | undefined;

function faultSpecs(): Spec[] {
  parsed ??= (process.env.KATA_INSTALL_FAULT ?? "")
    .split(",")
    .map((text) => /^(write|rename|fsync|restart|link):(\d+)(\+?)(?:@(.+))?$/.exec(text.trim()))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({
      kind: itemAt(m, 1, "the fault's kind"),
      n: Number(m[2]),
      sticky: m[3] === "+",
      on: m[4] ?? null,
      count: 0,
    }));
  return parsed;
}

export function fault(kind: FaultKind, what: string): void {
  const specs = faultSpecs();
  if (specs.length === 0) return;
  for (const spec of specs) {
    if (spec.kind !== kind || (spec.on !== null && !what.includes(spec.on))) continue;
    spec.count++;
    if (spec.count === spec.n || (spec.sticky && spec.count > spec.n))
      throw kind === "link"
        ? Object.assign(new Error(`EXDEV: cross-device link not permitted (injected), ${kind} ${what}`), {
            code: "EXDEV",
          })
        : Object.assign(new Error(`EIO: i/o error (injected), ${kind} ${what}`), { code: "EIO" });
  }
}
